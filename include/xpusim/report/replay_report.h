#pragma once
// Rendering of a Chakra trace replay (engine/replay.h): text, the `replay --json` document
// (docs/json.md, docs/replay.md) and a Chrome/Perfetto timeline with one process per rank and
// one thread per lane (compute, communication, cpu, recv). Computes nothing new beyond sums.

#include <map>
#include <string>
#include <vector>

#include "xpusim/engine/replay.h"
#include "xpusim/report/json_convention.h"

namespace xpusim::report {

/// What was asked, echoed under `inputs`.
struct ReplayQuery {
  std::string prefix;
  std::string system;
  long long chips = 0;
  bool use_durations = false;
  std::string comm_groups_file;  ///< empty when not given
  std::string calibration_file;  ///< empty when not given
  std::vector<std::string> files;  ///< the rank files, rank order
};

/// The whole `replay --json` document.
Json replay_document(const Provenance& provenance, const ReplayQuery& q, const engine::ReplayResult& r);
std::string replay_text(const ReplayQuery& q, const engine::ReplayResult& r);
/// Chrome trace-event JSON (open in Perfetto or chrome://tracing).
std::string replay_chrome_trace(const ReplayQuery& q, const engine::ReplayResult& r);

}  // namespace xpusim::report
