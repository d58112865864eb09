#pragma once
// The shell of every HTML report page (docs/html.md): one self-contained document with inline
// CSS and inline SVG charts (report/svg.h), no script, no external resource. Every text is
// escaped here; callers pass plain text (model names and CSV fields are user input).

#include <string>
#include <utility>
#include <vector>

#include "xpusim/report/json_convention.h"

namespace xpusim::report::html {

using Cells = std::vector<std::string>;

/// The whole page: title, the command line summary under it, `body` (already HTML), and the
/// provenance table (xpusim version, catalog and calibration digests) at the end.
std::string page(const std::string& command, const std::string& title, const std::string& subtitle,
                 const Provenance& provenance, const std::string& body);
/// `<section>` with a heading, its content (HTML) and an optional note (text) under it.
std::string section(const std::string& id, const std::string& heading, const std::string& content,
                    const std::string& note = "");
/// A table of text cells (escaped); `cls` names it for tests and CSS.
std::string table(const std::string& cls, const Cells& header, const std::vector<Cells>& rows);
/// The summary table of key numbers: label, value (text).
std::string summary(const std::vector<std::pair<std::string, std::string>>& rows);
/// A paragraph of text (escaped).
std::string para(const std::string& text);
/// Charts side by side.
std::string row(const std::vector<std::string>& charts);

}  // namespace xpusim::report::html
