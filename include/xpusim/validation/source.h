#pragma once
// The source of a validation row: the unit a leave-one-source-out fold holds out
// (docs/calibration.md, "Leave-one-source-out").

#include <string>

namespace xpusim::validation {

/// The source a row's URL points to: "github.com/OWNER/REPO" for a repository, "arxiv:ID"
/// (version dropped) for an arXiv paper, "doi:ID" for a DOI, else the host without "www.".
std::string source_of(const std::string& url);

}  // namespace xpusim::validation
