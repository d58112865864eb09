// Chrome trace-event JSON of an event-driven step (open in Perfetto or chrome://tracing).

#include <nlohmann/json.hpp>

#include "xpusim/engine/train.h"

namespace xpusim::engine {

std::string chrome_trace_json(const TrainResult& r) {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  int max_stage = 0;
  for (const auto& e : r.trace) max_stage = std::max(max_stage, e.stage);
  for (int s = 0; s <= max_stage; ++s) {
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", s}, {"tid", 0},
                      {"args", {{"name", "pipeline stage " + std::to_string(s)}}}});
    static const char* const kThreads[kTraceStreams] = {
        "compute", "DP gradient buckets", "TP/SP collectives (exposed)", "CP ring exchange (exposed)",
        "EP all-to-all (exposed)", "FSDP gather/scatter (exposed)", "PP send/recv"};
    for (int tid = 0; tid < kTraceStreams; ++tid)
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", s}, {"tid", tid},
                        {"args", {{"name", kThreads[tid]}}}});
  }
  for (const auto& e : r.trace) {
    // Chrome trace times are microseconds (fractions allowed).
    nlohmann::ordered_json ev = {{"name", e.name}, {"cat", e.category}, {"ph", "X"}, {"pid", e.stage},
                                 {"tid", e.stream}, {"ts", static_cast<double>(e.start_ps) / 1e6},
                                 {"dur", static_cast<double>(e.duration_ps) / 1e6}};
    if (!e.args.empty()) {
      nlohmann::ordered_json args = nlohmann::ordered_json::object();
      for (const auto& [k, v] : e.args) args[k] = v;
      ev["args"] = args;
    }
    events.push_back(std::move(ev));
  }
  nlohmann::ordered_json doc = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  return doc.dump();
}

}  // namespace xpusim::engine
