#include "xpusim/report/replay_report.h"

#include <nlohmann/json.hpp>

#include "xpusim/core/format.h"

namespace xpusim::report {

namespace {

double s_of(core::SimTime ps) { return core::sim_seconds(ps); }
std::string us_text(core::SimTime ps) { return core::fmt_num(core::sim_seconds(ps) * 1e6, 6); }

Json inputs_json(const ReplayQuery& q) {
  Json in = {{"prefix", q.prefix}, {"system", q.system}, {"chips", q.chips}};
  if (q.use_durations) in["use_durations"] = true;
  if (!q.comm_groups_file.empty()) in["comm_groups"] = q.comm_groups_file;
  if (!q.calibration_file.empty()) in["calibration"] = q.calibration_file;
  return in;
}

Json rank_json(const ReplayQuery& q, std::size_t r, const engine::ReplayRankStats& s) {
  return {{"rank", static_cast<long long>(r)},
          {"file", r < q.files.size() ? q.files[r] : ""},
          {"finish_time_s", s_of(s.finish_ps)},
          {"compute_s", s_of(s.compute_ps)},
          {"comm_s", s_of(s.comm_ps)},
          {"cpu_s", s_of(s.cpu_ps)},
          {"wait_s", s_of(s.wait_ps)},
          {"exposed_comm_s", s_of(engine::exposed_comm_ps(s))},
          {"nodes", s.nodes}};
}

}  // namespace

Json replay_document(const Provenance& provenance, const ReplayQuery& q, const engine::ReplayResult& r) {
  const engine::ReplayRankStats& crit = r.ranks.at(static_cast<std::size_t>(r.critical_rank));
  Json j;
  j["total_time_s"] = s_of(r.total_ps);
  j["critical_rank"] = r.critical_rank;
  j["compute_s"] = s_of(crit.compute_ps);
  j["comm_s"] = s_of(crit.comm_ps);
  j["exposed_comm_s"] = s_of(engine::exposed_comm_ps(crit));
  j["ranks"] = Json::array();
  for (std::size_t i = 0; i < r.ranks.size(); ++i) j["ranks"].push_back(rank_json(q, i, r.ranks[i]));
  j["node_counts"] = Json::object();
  for (const auto& [type, n] : r.node_counts) j["node_counts"][type] = n;
  j["collectives"] = Json::object();
  for (const auto& [kind, c] : r.collectives)
    j["collectives"][kind] = {{"count", c.count}, {"bytes", c.bytes}, {"time_s", s_of(c.time_ps)}};
  j["notes"] = r.notes;
  return document("replay", provenance, inputs_json(q), j);
}

std::string replay_text(const ReplayQuery& q, const engine::ReplayResult& r) {
  const engine::ReplayRankStats& crit = r.ranks.at(static_cast<std::size_t>(r.critical_rank));
  std::string out = core::strformat("replay of %s (%lld ranks) on %s%s\n", q.prefix.c_str(), q.chips, q.system.c_str(),
                                    q.use_durations ? " (by recorded durations)" : "");
  out += "  total time      " + us_text(r.total_ps) + " us (rank " + std::to_string(r.critical_rank) + " finishes last)\n";
  out += "  compute         " + us_text(crit.compute_ps) + " us\n";
  out += "  communication   " + us_text(crit.comm_ps) + " us\n";
  out += "  exposed comm    " + us_text(engine::exposed_comm_ps(crit)) + " us (total - compute, as ASTRA-sim)\n";
  out += "nodes:";
  for (const auto& [type, n] : r.node_counts) out += " " + type + " " + std::to_string(n);
  out += "\n";
  if (!r.collectives.empty()) out += "communication (each collective or message once):\n";
  for (const auto& [kind, c] : r.collectives)
    out += core::strformat("  %-15s %6lld calls  %14s B  %12s us\n", kind.c_str(), c.count,
                           core::fmt_int(static_cast<long long>(c.bytes)).c_str(), us_text(c.time_ps).c_str());
  out += "rank   finish us      compute us     comm us        exposed us     wait us\n";
  const std::size_t shown = std::min<std::size_t>(r.ranks.size(), 32);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& s = r.ranks[i];
    out += core::strformat("%-6zu %-14s %-14s %-14s %-14s %s\n", i, us_text(s.finish_ps).c_str(),
                           us_text(s.compute_ps).c_str(), us_text(s.comm_ps).c_str(),
                           us_text(engine::exposed_comm_ps(s)).c_str(), us_text(s.wait_ps).c_str());
  }
  if (shown < r.ranks.size()) out += "... " + std::to_string(r.ranks.size() - shown) + " more ranks (--json lists all)\n";
  for (const auto& n : r.notes) out += "note: " + n + "\n";
  return out;
}

std::string replay_chrome_trace(const ReplayQuery& q, const engine::ReplayResult& r) {
  Json events = Json::array();
  const engine::ReplayLane lanes[] = {engine::ReplayLane::Compute, engine::ReplayLane::Comm, engine::ReplayLane::Cpu,
                                      engine::ReplayLane::Recv};
  for (std::size_t rank = 0; rank < r.ranks.size(); ++rank) {
    const auto pid = static_cast<long long>(rank);
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0},
                      {"args", {{"name", "rank " + std::to_string(rank) + (rank < q.files.size() ? " (" + q.files[rank] + ")" : "")}}}});
    for (auto lane : lanes)
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", static_cast<int>(lane)},
                        {"args", {{"name", engine::replay_lane_name(lane)}}}});
  }
  for (const auto& e : r.events) {
    // Chrome trace times are microseconds (fractions allowed).
    Json args = {{"node_id", e.node_id}, {"name", e.name}, {"type", workload::chakra_node_type_name(e.type)},
                 {"detail", e.detail}, {"num_ops", e.num_ops}, {"bytes", e.bytes},
                 {"wait_us", static_cast<double>(e.start_ps - e.issue_ps) / 1e6}};
    events.push_back({{"name", e.name.empty() ? e.detail : e.name}, {"cat", e.detail}, {"ph", "X"}, {"pid", e.rank},
                      {"tid", static_cast<int>(e.lane)}, {"ts", static_cast<double>(e.start_ps) / 1e6},
                      {"dur", static_cast<double>(e.end_ps - e.start_ps) / 1e6}, {"args", args}});
  }
  Json doc = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  return doc.dump();
}

}  // namespace xpusim::report
