// Chrome trace-event JSON of a serving run (open in Perfetto or chrome://tracing): process 0
// holds one track per engine with an event per step, process 1 one track per recorded request
// with its queue, prefill and decode phases. Times are microseconds (fractions allowed).

#include <algorithm>

#include <nlohmann/json.hpp>

#include "xpusim/serve/simulator.h"

namespace xpusim::serve {

namespace {

using Json = nlohmann::ordered_json;

constexpr int kEnginesPid = 0;
constexpr int kRequestsPid = 1;

double micros(SimTime t) { return core::sim_seconds(t) * 1e6; }

Json metadata(const char* what, int pid, int tid, const std::string& name) {
  return {{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

Json span(const std::string& name, const char* category, int pid, int tid, SimTime start, SimTime end) {
  return {{"name", name}, {"cat", category}, {"ph", "X"}, {"pid", pid}, {"tid", tid},
          {"ts", micros(start)}, {"dur", micros(end - start)}};
}

void add_engines(const ServeTrace& trace, Json& events) {
  events.push_back(metadata("process_name", kEnginesPid, 0, "engines"));
  std::vector<int> named;
  for (const auto& st : trace.steps) {
    if (std::find(named.begin(), named.end(), st.engine) == named.end()) {
      named.push_back(st.engine);
      events.push_back(metadata("thread_name", kEnginesPid, st.engine,
                                "engine " + std::to_string(st.engine) + (st.pool == 1 ? " (decode pool)" : "")));
    }
    Json e = span(st.kind(), "step", kEnginesPid, st.engine, st.start, st.end);
    e["args"] = {{"kind", st.kind()}, {"decode_seqs", st.decode_seqs},
                 {"prefill_tokens", st.prefill_tokens}, {"prefill_chunks", st.prefill_chunks}};
    events.push_back(std::move(e));
  }
}

void add_requests(const ServeTrace& trace, Json& events) {
  events.push_back(metadata("process_name", kRequestsPid, 0, "requests"));
  for (const auto& r : trace.requests) {
    events.push_back(metadata("thread_name", kRequestsPid, r.id, "request " + std::to_string(r.id)));
    const Json args = {{"request", r.id}, {"engine", r.engine}, {"in_len", r.in_len}, {"out_len", r.out_len}};
    const std::pair<const char*, std::pair<SimTime, SimTime>> phases[] = {
        {"queued", {r.arrival, r.prefill_start}},
        {"prefill", {r.prefill_start, r.first_token}},
        {"decode", {r.first_token, r.finish}}};
    for (const auto& [name, times] : phases) {
      Json e = span(name, "request", kRequestsPid, r.id, times.first, times.second);
      e["args"] = args;
      events.push_back(std::move(e));
    }
  }
}

}  // namespace

std::string chrome_trace_json(const SimResult& r) {
  Json events = Json::array();
  add_engines(r.trace, events);
  add_requests(r.trace, events);
  const Json other = {{"steps_total", r.trace.steps_total},
                      {"steps_recorded", static_cast<long long>(r.trace.steps.size())},
                      {"requests_total", r.trace.requests_total},
                      {"requests_recorded", static_cast<long long>(r.trace.requests.size())}};
  const Json doc = {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", other}};
  return doc.dump();
}

}  // namespace xpusim::serve
