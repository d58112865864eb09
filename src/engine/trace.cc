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
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", s}, {"tid", 0},
                      {"args", {{"name", "compute"}}}});
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", s}, {"tid", 1},
                      {"args", {{"name", "communication"}}}});
  }
  for (const auto& e : r.trace) {
    // Chrome trace times are microseconds (fractions allowed).
    events.push_back({{"name", e.name}, {"cat", e.category}, {"ph", "X"}, {"pid", e.stage},
                      {"tid", e.stream}, {"ts", static_cast<double>(e.start_ps) / 1e6},
                      {"dur", static_cast<double>(e.duration_ps) / 1e6}});
  }
  nlohmann::ordered_json doc = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  return doc.dump();
}

}  // namespace xpusim::engine
