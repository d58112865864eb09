#include "xpusim/report/serve_report.h"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <sstream>

#include "xpusim/core/format.h"

namespace xpusim::report {

namespace {

using core::strformat;

void put_percentiles(Json& j, const std::string& name, const char* unit, const serve::Percentiles& p) {
  j[name + "_mean_" + unit] = p.mean;
  j[name + "_p50_" + unit] = p.p50;
  j[name + "_p90_" + unit] = p.p90;
  j[name + "_p99_" + unit] = p.p99;
}

Json software_json(const serve::ServeReport& rep) {
  Json j{{"framework", rep.framework}, {"version", nullptr}, {"version_range", nullptr},
         {"validated", rep.framework_version_validated}};
  if (!rep.framework_version.empty()) j["version"] = rep.framework_version;
  if (!rep.framework_version_range.empty()) j["version_range"] = rep.framework_version_range;
  return j;
}

Json layout_json(const serve::ServeReport& rep) {
  return Json{{"system", rep.scenario.system}, {"model", rep.scenario.model}, {"framework", rep.framework},
              {"chips", rep.chips_used},       {"tp", rep.scenario.tp},       {"pp", rep.scenario.pp},
              {"ep", rep.scenario.ep},         {"engines", rep.engines},      {"decode_engines", rep.decode_engines}};
}

Json memory_json(const serve::ReplicaMemory& m) {
  return Json{{"hbm", core::to_gib(m.hbm)},
              {"weights", core::to_gib(m.weights)},
              {"draft_weights", core::to_gib(m.draft_weights)},
              {"workspace", core::to_gib(m.workspace)},
              {"kv_cache", core::to_gib(m.kv_capacity)}};
}

Json step_json(const serve::StepCost& st) {
  return Json{{"total", core::to_ms(st.total)}, {"linear", core::to_ms(st.linear)},
              {"attention", core::to_ms(st.attention)}, {"comm", core::to_ms(st.comm)},
              {"overhead", core::to_ms(st.overhead)}};
}

// Prefix caching's hits (null without a cache: no trace hashes, or the cache off).
Json prefix_cache_json(const serve::ServeReport& rep) {
  if (!rep.prefix_caching) return nullptr;
  const serve::PrefixTally& t = rep.sim.prefix;
  Json j{{"block_tokens", rep.prefix_block_tokens},
              {"capacity_tokens_per_engine", rep.prefix_cache_tokens_per_engine},
              {"requests_looked_up", t.lookups},
              {"requests_hit", t.requests_hit},
              {"blocks", t.blocks},
              {"blocks_hit", t.blocks_hit},
              {"prompt_tokens", t.prompt_tokens},
              {"prefill_tokens_saved", t.tokens_hit},
              {"block_hit_ratio", t.block_hit_rate()},
              {"token_hit_ratio", t.token_hit_rate()}};
  if (rep.kv_host_tokens_per_engine > 0)  // KV offload: the hits the host tier served and their loads
    j["host_tier"] = Json{{"capacity_tokens_per_engine", rep.kv_host_tokens_per_engine},
                          {"blocks_hit", t.blocks_hit_host},
                          {"tokens_loaded", t.tokens_hit_host},
                          {"load_time_s", t.host_load_s}};
  if (rep.kv_ssd_tokens_per_engine > 0)  // the same for the local-SSD tier
    j["ssd_tier"] = Json{{"capacity_tokens_per_engine", rep.kv_ssd_tokens_per_engine},
                         {"blocks_hit", t.blocks_hit_ssd},
                         {"tokens_loaded", t.tokens_hit_ssd},
                         {"load_time_s", t.ssd_load_s}};
  if (rep.kv_remote_tokens > 0)  // the remote pool every engine shares
    j["remote_pool"] = Json{{"capacity_tokens", rep.kv_remote_tokens},
                            {"blocks_hit", t.blocks_hit_remote},
                            {"tokens_loaded", t.tokens_hit_remote},
                            {"load_time_s", t.remote_load_s},
                            {"blocks_written", t.blocks_written_remote},
                            {"tokens_written", t.tokens_written_remote},
                            {"write_time_s", t.remote_write_s}};
  return j;
}

Json results_json(const serve::ServeReport& rep) {
  const auto& s = rep.sim;
  Json j = layout_json(rep);
  j["requests"] = s.requests;
  j["duration_s"] = s.duration.base();
  // Engine time in steps, summed over the engines (per pool when disaggregated: the prefill
  // pool's is the run's prefill time).
  j["engine_busy_s"] = s.busy_time.base();
  if (rep.decode_engines > 0) {
    j["prefill_engine_busy_s"] = s.pool_busy_time[0].base();
    j["decode_engine_busy_s"] = s.pool_busy_time[1].base();
  }
  j["throughput_requests_per_s"] = s.requests_per_s;
  j["throughput_tokens_per_s"] = s.output_tokens_per_s;
  j["throughput_tokens_per_s_per_chip"] = rep.output_tokens_per_s_per_chip;
  j["input_tokens_per_s"] = s.input_tokens_per_s;
  put_percentiles(j, "ttft", "ms", s.ttft_ms);
  put_percentiles(j, "tpot", "ms", s.tpot_ms);
  put_percentiles(j, "itl", "ms", s.itl_ms);
  put_percentiles(j, "e2e_latency", "s", s.e2e_s);
  j["goodput_requests_per_s"] = rep.goodput_requests_per_s;
  j["timed_out_requests"] = s.timed_out;
  j["overloaded"] = rep.overloaded;
  j["capacity_requests_per_s"] = rep.capacity_requests_per_s > 0 ? Json(rep.capacity_requests_per_s) : Json(nullptr);
  j["endpoint_timeout_s"] = core::to_seconds(rep.scenario.timeout);
  j["warnings"] = rep.warnings;
  j["preemptions"] = s.preemptions;
  j["prefix_cache"] = prefix_cache_json(rep);
  j["warmup_requests"] = s.warmup_requests;
  j["client_start_span_s"] = s.client_start_span.base();
  j["mean_batch_per_engine"] = s.mean_batch;
  j["mean_kv_utilisation"] = s.mean_kv_utilisation;
  return j;
}

Json candidate_json(const serve::PlanCandidate& c) {
  return Json{{"tp", c.tp},
              {"pp", c.pp},
              {"ep", c.ep},
              {"dp_attention", c.dp_attention},
              {"max_num_seqs", c.max_num_seqs},
              {"prefill_chips", c.prefill_chips},
              {"chips", c.chips},
              {"cost_usd_per_hour", c.dollars_per_hour},
              {"meets_slo", c.meets_slo},
              {"ttft_p90_ms", c.ttft_p90_ms},
              {"tpot_p90_ms", c.tpot_p90_ms},
              {"throughput_tokens_per_s_per_chip", c.output_tokens_per_s_per_chip},
              {"cost_usd_per_million_output_tokens", c.dollars_per_million_output_tokens},
              {"energy_j_per_output_token", c.joules_per_output_token},
              {"precision", c.precision},
              {"framework", c.framework},
              {"note", c.note}};
}

// The heterogeneous fields of a candidate: the decode pool and the engines per slice.
Json hetero_candidate_json(const serve::PlanCandidate& c) {
  Json j = candidate_json(c);
  j["decode_chips"] = c.decode_chips;
  j["prefill_engines_per_slice"] = c.prefill_engines;
  j["decode_engines_per_slice"] = c.decode_engines;
  return j;
}

// Heterogeneous disaggregation: the pools and the KV link (docs/json.md, "serve").
Json hetero_json(const serve::ServeReport& rep) {
  Json pools = Json::array();
  for (const auto& p : rep.pools)
    pools.push_back({{"role", p.role}, {"system", p.system}, {"framework", p.framework}, {"chips", p.chips},
                     {"engines", p.engines}, {"utilisation", p.utilisation}, {"energy_j", p.energy_j},
                     {"cost_usd", p.dollars}, {"power_per_chip_w", p.power_per_chip_w},
                     {"kv_tokens_per_engine", p.memory.kv_cache_tokens()},
                     {"state_sequences_per_engine", p.memory.state_sequences()}});
  const auto& l = rep.kv_link;
  Json link{{"fabric", l.fabric},
            {"fusion_domain", l.domain},
            {"rate_per_chip_per_direction_gb_s", l.rate_per_direction.base() / 1e9},
            {"latency_us", l.latency.base() * 1e6},
            {"slower_system", l.slower_system},
            {"bytes_per_token_per_chip", rep.kv_bytes_per_token_per_chip},
            {"bytes_total", rep.kv_bytes_total},
            {"transfers", rep.sim.kv_transfers},
            {"transfer_mean_ms", rep.kv_transfer_mean_ms}};
  if (!l.fusion) link["why_not_fusion"] = l.why_not_fusion;
  return Json{{"pools", pools}, {"kv_transfer", link}};
}

std::string hetero_text(const serve::ServeReport& rep) {
  std::ostringstream o;
  for (const auto& p : rep.pools)
    o << strformat("  %-7s pool: %lld x %s (%s), %d engine(s), utilisation %.1f%%, energy %.1f kJ, cost $%.4f\n",
                   p.role.c_str(), p.chips, p.system.c_str(), p.framework.c_str(), p.engines, 100 * p.utilisation,
                   p.energy_j / 1e3, p.dollars);
  const auto& l = rep.kv_link;
  o << strformat("  KV transfer over %s%s: %.1f GB/s per chip per direction (slower endpoint: %s), latency %.1f us\n",
                 l.fabric.c_str(), l.fusion ? (" (domain " + l.domain + ")").c_str() : "",
                 l.rate_per_direction.base() / 1e9, l.slower_system.c_str(), l.latency.base() * 1e6);
  o << strformat("  KV moved: %lld transfers, %.3f GB in all, %.0f B per token per chip, mean %.3f ms per request\n",
                 rep.sim.kv_transfers, rep.kv_bytes_total / 1e9, rep.kv_bytes_per_token_per_chip,
                 rep.kv_transfer_mean_ms);
  return o.str();
}

void percentile_row(std::ostream& o, const char* name, const serve::Percentiles& p, const char* unit) {
  o << strformat("  %-6s mean %9.2f  p50 %9.2f  p90 %9.2f  p99 %9.2f %s\n", name, p.mean, p.p50, p.p90, p.p99, unit);
}

Json software_end_json(const serve::SoftwareEnd& e) {
  return Json{{"software", e.software},
              {"ttft_mean_ms", e.ttft_mean_ms},
              {"tpot_mean_ms", e.tpot_mean_ms},
              {"ttft_p90_ms", e.ttft_p90_ms},
              {"tpot_p90_ms", e.tpot_p90_ms},
              {"output_tokens_per_s_per_chip", e.output_tokens_per_s_per_chip},
              {"e2e_latency_mean_s", e.e2e_mean_s}};
}

/// A searched plan's software range: the SLO metrics at each end.
std::string search_software_range_text(const serve::SoftwareRange& r, int width) {
  auto end = [](const serve::SoftwareEnd& e) {
    return strformat("TTFT p90 %.0f ms, TPOT p90 %.1f ms", e.ttft_p90_ms, e.tpot_p90_ms);
  };
  return strformat("%-*s   software range of this plan (it assumes %s): low %s (%s); high %s (GPU-grade serving "
                   "software)\n",
                   width, "", r.central.c_str(), end(r.low).c_str(), r.low.software.substr(0, r.low.software.find(" (")).c_str(),
                   end(r.high).c_str());
}

/// A Trainium run's software range: each end's figures and the software it assumed.
std::string software_range_text(const serve::ServeReport& rep) {
  const serve::SoftwareRange& r = *rep.software_range;
  std::ostringstream o;
  o << "software range (this forecast assumes " << r.central << "; the Neuron software alone moves it this far):\n";
  auto line = [&](const char* end, const serve::SoftwareEnd& e) {
    o << strformat("  %-4s TTFT %.4g ms, TPOT %.4g ms, %.4g output tok/s/chip: %s\n", end, e.ttft_mean_ms, e.tpot_mean_ms,
                   e.output_tokens_per_s_per_chip, e.software.c_str());
  };
  line("low", r.low);
  line("high", r.high);
  return o.str();
}

}  // namespace

Json software_range_json(const serve::SoftwareRange& r) {
  return Json{{"central", r.central}, {"low", software_end_json(r.low)}, {"high", software_end_json(r.high)}};
}

Json serve_document(const Provenance& provenance, const scenario::ServeInputs& in, const serve::ServeReport& rep) {
  Json j = results_json(rep);
  j["memory_per_chip_gib"] = memory_json(rep.memory);
  j["kv_tokens_per_engine"] = rep.memory.kv_cache_tokens();
  j["state_sequences_per_engine"] = rep.memory.state_sequences();
  j["decode_step_ms"] = step_json(rep.sample_decode_step);
  j["energy_j_per_output_token"] = rep.joules_per_output_token;
  j["energy_estimated"] = rep.energy_estimated;
  j["pue"] = rep.pue;
  j["site_energy_j_per_output_token"] = rep.site_joules_per_output_token;
  j["power_per_chip_w"] = rep.power_per_chip_w;
  j["cost_usd_per_million_output_tokens"] = rep.dollars_per_million_output_tokens;
  j["price_estimated"] = rep.price_estimated;
  Json timeline = Json::array();
  for (const auto& p : rep.sim.timeline)
    timeline.push_back({{"time_s", p.time_s}, {"kv_utilisation", p.kv_utilisation}, {"batch", p.batch}});
  j["timeline"] = timeline;
  if (!rep.pools.empty()) j["heterogeneous"] = hetero_json(rep);
  j["software"] = software_json(rep);
  if (rep.software_range) j["software_range"] = software_range_json(*rep.software_range);
  j["assumptions"] = rep.assumptions;
  return document("serve", provenance, inputs_json(in), j);
}

Json serve_infeasible_document(const Provenance& provenance, const scenario::ServeInputs& in, const std::string& reason) {
  return document("serve", provenance, inputs_json(in), Json{{"feasible", false}, {"reason", reason}});
}

std::string serve_text(const serve::ServeReport& rep) {
  const auto& s = rep.sim;
  std::ostringstream o;
  const std::string where =
      rep.pools.size() == 2 ? strformat("%lld x %s + %lld x %s", rep.pools[0].chips, rep.pools[0].system.c_str(),
                                        rep.pools[1].chips, rep.pools[1].system.c_str())
                            : strformat("%lld x %s", rep.chips_used, rep.scenario.system.c_str());
  o << strformat("%s on %s (%s, tp=%d pp=%d ep=%d, %d engine(s)%s)\n", rep.scenario.model.c_str(), where.c_str(),
                 rep.framework.c_str(), rep.scenario.tp, rep.scenario.pp,
                 rep.scenario.ep, rep.engines,
                 rep.decode_engines ? strformat(" + %d decode", rep.decode_engines).c_str() : "");
  for (const auto& w : rep.warnings) o << "WARNING: " << w << "\n";
  const bool states_only = rep.memory.token_units == 0;
  const std::string draft =
      rep.memory.draft_weights.base() > 0 ? strformat(" (+ draft %.1f GiB)", core::to_gib(rep.memory.draft_weights)) : "";
  o << strformat("memory per chip: weights %.1f GiB%s, workspace %.1f GiB, %s cache %.1f GiB of %.1f GiB HBM (%lld %s/engine)\n",
                 core::to_gib(rep.memory.weights), draft.c_str(), core::to_gib(rep.memory.workspace), states_only ? "state" : "KV",
                 core::to_gib(rep.memory.kv_capacity), core::to_gib(rep.memory.hbm), rep.memory.kv_tokens,
                 states_only ? "sequences" : "tokens");
  o << strformat("requests %lld in %.2f s: %.2f req/s, %.0f output tok/s (%.1f per chip)\n", s.requests,
                 s.duration.base(), s.requests_per_s, s.output_tokens_per_s, rep.output_tokens_per_s_per_chip);
  percentile_row(o, "TTFT", s.ttft_ms, "ms");
  percentile_row(o, "TPOT", s.tpot_ms, "ms");
  percentile_row(o, "E2E", s.e2e_s, "s");
  const double timeout_s = core::to_seconds(rep.scenario.timeout);
  o << strformat("batch/engine %.1f, %s use %.0f%%, preemptions %lld, goodput %.2f req/s, timed out %lld of %lld (%s)\n",
                 s.mean_batch, states_only ? "state cache" : "KV", 100 * s.mean_kv_utilisation, s.preemptions,
                 rep.goodput_requests_per_s, s.timed_out, s.requests,
                 timeout_s > 0 ? strformat("endpoint timeout %.4g s", timeout_s).c_str() : "no endpoint timeout");
  if (rep.prefix_caching) {
    const serve::PrefixTally& t = rep.sim.prefix;
    o << strformat("prefix cache: %.1f%% of prompt tokens (%.1f%% of blocks) from the cache, %s prefill tokens saved; "
                   "%s of %s requests hit; %s tokens per engine\n",
                   100 * t.token_hit_rate(), 100 * t.block_hit_rate(), core::fmt_int(t.tokens_hit).c_str(),
                   core::fmt_int(t.requests_hit).c_str(), core::fmt_int(t.lookups).c_str(),
                   core::fmt_int(rep.prefix_cache_tokens_per_engine).c_str());
    if (rep.kv_host_tokens_per_engine > 0)
      o << strformat("  of which from host memory (KV offload): %s tokens of %s blocks, loaded in %.3g s in all; "
                     "%s tokens per engine\n",
                     core::fmt_int(t.tokens_hit_host).c_str(), core::fmt_int(t.blocks_hit_host).c_str(), t.host_load_s,
                     core::fmt_int(rep.kv_host_tokens_per_engine).c_str());
    if (rep.kv_ssd_tokens_per_engine > 0)
      o << strformat("  of which from local SSD (KV offload): %s tokens of %s blocks, loaded in %.3g s in all; "
                     "%s tokens per engine\n",
                     core::fmt_int(t.tokens_hit_ssd).c_str(), core::fmt_int(t.blocks_hit_ssd).c_str(), t.ssd_load_s,
                     core::fmt_int(rep.kv_ssd_tokens_per_engine).c_str());
    if (rep.kv_remote_tokens > 0)
      o << strformat("  of which from the remote pool (KV offload): %s tokens of %s blocks, loaded in %.3g s in all; "
                     "%s tokens shared by every engine\n",
                     core::fmt_int(t.tokens_hit_remote).c_str(), core::fmt_int(t.blocks_hit_remote).c_str(),
                     t.remote_load_s, core::fmt_int(rep.kv_remote_tokens).c_str());
    if (rep.kv_remote_tokens > 0)
      o << strformat("  written to the remote pool: %s tokens of %s new blocks, %.3g s of link time in all "
                     "(outbound, in the background)\n",
                     core::fmt_int(t.tokens_written_remote).c_str(), core::fmt_int(t.blocks_written_remote).c_str(),
                     t.remote_write_s);
  }
  o << strformat("energy %.3f J/token%s (site %.3f J/token at PUE %.3g), cost $%.3f per M output tokens%s\n",
                 rep.joules_per_output_token, rep.energy_estimated ? " (estimated)" : "",
                 rep.site_joules_per_output_token, rep.pue, rep.dollars_per_million_output_tokens,
                 rep.price_estimated ? " (estimated price)" : "");
  const auto& st = rep.sample_decode_step;
  o << strformat("decode step at the mean batch: %.2f ms = linear %.2f + attention %.2f + comm %.2f + overhead %.2f\n",
                 core::to_ms(st.total), core::to_ms(st.linear), core::to_ms(st.attention), core::to_ms(st.comm),
                 core::to_ms(st.overhead));
  if (!rep.pools.empty()) o << hetero_text(rep);
  for (const auto& a : rep.assumptions) o << "  assumption: " << a << "\n";
  if (rep.software_range) o << software_range_text(rep);
  return o.str();
}

Json search_results_json(const std::vector<serve::SearchResult>& results) {
  Json list = Json::array();
  for (const auto& r : results) {
    const bool hetero = !r.prefill_system.empty();
    auto one = [&](const serve::PlanCandidate& c) { return hetero ? hetero_candidate_json(c) : candidate_json(c); };
    Json tried = Json::array();
    for (const auto& c : r.tried) tried.push_back(one(c));
    Json item{{"system", r.system}, {"found", r.found}, {"best", one(r.best)}, {"tried", tried}};
    if (!r.command.empty()) item["command"] = r.command;
    if (r.software_range) item["software_range"] = software_range_json(*r.software_range);
    if (hetero) {
      item["prefill_system"] = r.prefill_system;
      item["decode_system"] = r.decode_system;
    }
    list.push_back(item);
  }
  return list;
}

Json search_document(const Provenance& provenance, const scenario::ServeInputs& in, const std::vector<serve::SearchResult>& results, bool compare) {
  return document(compare ? "serve --compare" : "serve --search", provenance, inputs_json(in),
                  Json{{"results", search_results_json(results)}});
}

std::string search_text(const std::vector<serve::SearchResult>& results) {
  std::ostringstream o;
  int width = 24;
  for (const auto& r : results) width = std::max(width, static_cast<int>(r.system.size()));
  o << strformat("%-*s %6s %4s %4s %4s %4s %8s %10s %10s %14s %10s %12s\n", width, "system", "chips", "tp", "pp", "ep",
                 "attn", "prefill", "ttft_p90", "tpot_p90", "out tok/s/chip", "$/h", "$/M out tok");
  for (const auto& r : results) {
    if (!r.found) {
      o << strformat("%-*s  no plan: %s\n", width, r.system.c_str(), r.best.note.c_str());
      continue;
    }
    const auto& b = r.best;
    o << strformat("%-*s %6lld %4d %4d %4d %4s %8lld %8.0fms %8.1fms %14.1f %10.2f %12.3f  J/tok %.3f\n", width,
                   r.system.c_str(), b.chips, b.tp, b.pp, b.ep, b.dp_attention ? "dp" : "tp", b.prefill_chips, b.ttft_p90_ms,
                   b.tpot_p90_ms, b.output_tokens_per_s_per_chip, b.dollars_per_hour, b.dollars_per_million_output_tokens,
                   b.joules_per_output_token);
    o << strformat("%-*s   %s, %s, max %lld sequences per engine\n", width, "", b.precision.c_str(), b.framework.c_str(),
                   b.max_num_seqs);
    if (!r.command.empty()) o << strformat("%-*s   the whole deployment: %s\n", width, "", r.command.c_str());
    if (r.software_range) o << search_software_range_text(*r.software_range, width);
    if (!r.prefill_system.empty())
      o << strformat("%-*s   prefill %lld x %s, decode %lld x %s (%d:%d engines per slice, max %lld sequences)\n",
                     width, "", b.prefill_chips, r.prefill_system.c_str(), b.decode_chips, r.decode_system.c_str(),
                     b.prefill_engines, b.decode_engines, b.max_num_seqs);
  }
  return o.str();
}

std::string search_without_text(const std::vector<serve::SearchResult>& as_run, const std::vector<SearchWithout>& without) {
  std::ostringstream o;
  o << "the same trace without the prefix cache (--prefix-cache off)";
  if (without.size() > 1) o << " and without each KV offload tier";
  o << ": chips / $/M out tok\n";
  int width = 24;
  for (const auto& r : as_run) width = std::max(width, static_cast<int>(r.system.size()));
  constexpr int kColumn = 20;
  o << strformat("  %-*s %*s", width, "system", kColumn, "as searched");
  for (const auto& w : without) o << strformat(" %*s", kColumn, ("no " + w.what).c_str());
  o << "\n";
  const auto cell = [](const serve::SearchResult& r) {
    return r.found ? strformat("%lld / %.3f", r.best.chips, r.best.dollars_per_million_output_tokens) : std::string("-");
  };
  for (size_t i = 0; i < as_run.size(); ++i) {
    o << strformat("  %-*s %*s", width, as_run[i].system.c_str(), kColumn, cell(as_run[i]).c_str());
    bool cache_changes_nothing = false;
    for (const auto& w : without) {
      const bool has = i < w.results.size();
      o << strformat(" %*s", kColumn, has ? cell(w.results[i]).c_str() : "-");
      if (w.what == kWithoutPrefixCache && has) {
        const auto& a = as_run[i];
        const auto& b = w.results[i];
        cache_changes_nothing = a.found && b.found && a.best.chips == b.best.chips &&
                                a.best.dollars_per_million_output_tokens == b.best.dollars_per_million_output_tokens;
      }
    }
    if (cache_changes_nothing) o << "  (no cache, the same: its framework caches no prefixes by default; --prefix-cache on)";
    o << "\n";
  }
  return o.str();
}

}  // namespace xpusim::report
