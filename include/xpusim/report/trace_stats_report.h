#pragma once
// Rendering of `xpusim trace-stats` (serve::TraceStats): the trace's requests and lengths, and
// its prefix reuse through each cache replayed, as text and as one JSON document.

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "xpusim/report/json_convention.h"
#include "xpusim/serve/sessions.h"
#include "xpusim/serve/trace_stats.h"

namespace xpusim::report {

/// The whole `trace-stats --json` document: `inputs` (file, block_tokens), then `requests`,
/// `span_s`, the length summaries, `blocks`, `distinct_blocks` and `caches` (each replay's
/// capacity, null when unbounded, and its hit ratios; docs/json.md).
Json trace_stats_document(const Provenance& provenance, const std::string& file, const serve::TraceStats& s);
std::string trace_stats_text(const std::string& file, const serve::TraceStats& s);

/// `xpusim sessions --out FILE [--json]`: the written trace's figures (as trace-stats gives them,
/// `sessions` the sessions generated) and the sessions that ended at the context limit.
Json sessions_document(const Provenance& provenance, const std::string& out, const std::string& from,
                       const serve::Sessions& sessions, const serve::TraceStats& s);
std::string sessions_text(const std::string& out, const serve::Sessions& sessions, const serve::TraceStats& t);

}  // namespace xpusim::report
