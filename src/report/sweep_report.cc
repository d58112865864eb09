#include "xpusim/report/sweep_report.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "xpusim/core/format.h"

namespace xpusim::report {

namespace {

struct Column {
  const char* name;     ///< CSV header
  const char* pointer;  ///< JSON pointer into the point's document
};

const std::vector<Column> kTrainColumns = {
    {"step_time_s", "/step_time_s"},
    {"tokens_per_s", "/tokens_per_s"},
    {"tokens_per_s_per_chip", "/tokens_per_s_per_chip"},
    {"mfu_pct", "/mfu_pct"},
    {"memory_per_chip_gib", "/memory_per_chip_gib/total"},
    {"hbm_capacity_gib", "/hbm_capacity_gib"},
    {"plan.tp", "/plan/tp"},
    {"plan.pp", "/plan/pp"},
    {"plan.dp", "/plan/dp"},
    {"plan.cp", "/plan/cp"},
    {"plan.ep", "/plan/ep"},
    {"plan.vpp", "/plan/vpp"},
    {"plan.micro_batch", "/plan/micro_batch"},
    {"plan.global_batch", "/plan/global_batch"},
    {"plan.seq_len", "/plan/seq_len"},
    {"plan.zero", "/plan/zero"},
    {"plan.recompute", "/plan/recompute"},
    {"plan.precision", "/plan/precision"},
    {"schedule", "/schedule"},
    {"energy_per_step_j", "/energy_per_step_j"},
    {"power_per_chip_w", "/power_per_chip_w"},
    {"cost_per_step_usd", "/cost_per_step_usd"},
    {"price_estimated", "/price_estimated"},
    {"goodput_fraction", "/goodput/goodput_fraction"},
};

const std::vector<Column> kServeColumns = {
    {"chips_used", "/chips"},
    {"plan.tp", "/tp"},
    {"plan.pp", "/pp"},
    {"plan.ep", "/ep"},
    {"engines", "/engines"},
    {"framework", "/framework"},
    {"throughput_requests_per_s", "/throughput_requests_per_s"},
    {"throughput_tokens_per_s", "/throughput_tokens_per_s"},
    {"throughput_tokens_per_s_per_chip", "/throughput_tokens_per_s_per_chip"},
    {"goodput_requests_per_s", "/goodput_requests_per_s"},
    {"ttft_p50_ms", "/ttft_p50_ms"},
    {"ttft_p90_ms", "/ttft_p90_ms"},
    {"ttft_p99_ms", "/ttft_p99_ms"},
    {"tpot_p50_ms", "/tpot_p50_ms"},
    {"tpot_p90_ms", "/tpot_p90_ms"},
    {"tpot_p99_ms", "/tpot_p99_ms"},
    {"e2e_latency_p50_s", "/e2e_latency_p50_s"},
    {"e2e_latency_p90_s", "/e2e_latency_p90_s"},
    {"e2e_latency_p99_s", "/e2e_latency_p99_s"},
    {"timed_out_requests", "/timed_out_requests"},
    {"preemptions", "/preemptions"},
    {"kv_tokens_per_engine", "/kv_tokens_per_engine"},
    {"energy_j_per_output_token", "/energy_j_per_output_token"},
    {"power_per_chip_w", "/power_per_chip_w"},
    {"cost_usd_per_million_output_tokens", "/cost_usd_per_million_output_tokens"},
    {"price_estimated", "/price_estimated"},
};

const std::vector<Column>& columns_of(const std::string& command) {
  return command == "serve" ? kServeColumns : kTrainColumns;
}

std::string quoted(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A value as a CSV cell: numbers with 10 significant digits, integers whole, text quoted.
std::string cell(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return quoted(v.get<std::string>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return v.dump();
  if (v.is_number()) return core::strformat("%.10g", v.get<double>());
  return quoted(v.dump());
}

std::string header(const std::string& command, const std::vector<std::string>& grid_keys) {
  std::string line;
  for (const auto& k : grid_keys) line += quoted(k) + ",";
  line += "status,reason";
  for (const auto& c : columns_of(command)) line += std::string(",") + c.name;
  return line + "\n";
}

}  // namespace

void judge_point(SweepPoint& p) {
  const Json& r = p.result;
  if (r.is_null()) {
    p.status = "error";
    return;
  }
  const bool ok = r.value("feasible", true) && r.value("fits", true);
  p.status = ok ? "ok" : "infeasible";
  p.reason = ok ? "" : r.value("reason", "");
}

std::vector<std::string> sweep_result_columns(const std::string& command) {
  std::vector<std::string> names;
  for (const auto& c : columns_of(command)) names.emplace_back(c.name);
  return names;
}

std::string sweep_csv(const std::string& command, const std::vector<std::string>& grid_keys,
                      const std::vector<SweepPoint>& points) {
  std::string out = header(command, grid_keys);
  for (const auto& p : points) {
    std::string line;
    for (const auto& v : p.values) line += cell(v) + ",";
    line += p.status + "," + quoted(p.reason);
    for (const auto& c : columns_of(command)) {
      const Json::json_pointer ptr(c.pointer);
      line += "," + (p.status == "ok" && p.result.contains(ptr) ? cell(p.result.at(ptr)) : std::string());
    }
    out += line + "\n";
  }
  return out;
}

Json sweep_document(const Provenance& provenance, const Json& inputs, const std::vector<std::string>& grid_keys,
                    const std::vector<SweepPoint>& points) {
  Json list = Json::array();
  for (const auto& p : points) {
    Json values = Json::object();
    for (std::size_t i = 0; i < grid_keys.size() && i < p.values.size(); ++i) values[grid_keys[i]] = p.values[i];
    list.push_back({{"index", p.index}, {"values", values}, {"status", p.status}, {"reason", p.reason},
                    {"result", p.result}});
  }
  Json body{{"points", list}};
  return document("sweep", provenance, inputs, body);
}

std::string point_to_wire(const SweepPoint& p) {
  return Json{{"index", p.index}, {"values", p.values}, {"status", p.status}, {"reason", p.reason},
              {"result", p.result}}
      .dump();
}

SweepPoint point_from_wire(const std::string& text) {
  const Json j = Json::parse(text);
  SweepPoint p;
  p.index = j.at("index").get<std::size_t>();
  for (const auto& v : j.at("values")) p.values.push_back(v);
  p.status = j.at("status").get<std::string>();
  p.reason = j.at("reason").get<std::string>();
  p.result = j.at("result");
  return p;
}

}  // namespace xpusim::report
