// xpusim serve: simulate serving a request load on a system (continuous batching, paged KV,
// SLOs), or search the fewest chips for a rate and an SLO (--search), or compare systems
// (--compare). Flags or a YAML/JSON scenario (--config); flags given on the command line win.

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "xpusim/config/document.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/format.h"
#include "xpusim/core/suggest.h"
#include "xpusim/core/unit_parse.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/serve/scenario.h"
#include "xpusim/serve/search.h"

namespace xpusim::cli {

namespace {

using Json = nlohmann::ordered_json;
using core::strformat;

core::Seconds parse_seconds(const std::string& text, const std::string& path) {
  auto r = core::parse_quantity<core::Seconds>(text);
  if (!r) core::fail(path, r.error(), text, "a duration with a unit, e.g. '60 s' or '200 ms'");
  return *r;
}


void apply_config(const std::string& path, serve::ServeScenario& sc, std::string& rate_text) {
  const auto doc = config::load_document(path);
  core::Diagnostics d;
  config::FieldReader r(doc, "", d);
  if (r.has("system")) sc.system = r.str("system");
  if (r.has("model")) sc.model = r.str("model");
  sc.chips = r.integer_or("chips", sc.chips);
  sc.tp = static_cast<int>(r.integer_or("tp", sc.tp));
  sc.pp = static_cast<int>(r.integer_or("pp", sc.pp));
  sc.ep = static_cast<int>(r.integer_or("ep", sc.ep));
  sc.precision = r.str_or("precision", sc.precision);
  sc.kv_precision = r.str_or("kv_precision", sc.kv_precision);
  sc.weight_precision = r.str_or("weight_precision", sc.weight_precision);
  if (r.has("framework")) {
    const std::string f = r.str("framework");
    auto fw = serve::parse_framework(f);
    if (!fw) d.error(r.path_of("framework"), "unknown framework", f, core::join(serve::framework_names()),
                     core::did_you_mean(f, serve::framework_names()));
    else sc.framework = *fw;
  }
  if (r.has("scheduler")) {
    const std::string s = r.str("scheduler");
    auto k = serve::parse_scheduler(s);
    if (!k) d.error(r.path_of("scheduler"), "unknown scheduler", s, "static, decode-priority, prefill-priority");
    else sc.scheduler = *k;
  }
  sc.max_num_seqs = r.integer_or("max_num_seqs", sc.max_num_seqs);
  sc.max_batched_tokens = r.integer_or("max_batched_tokens", sc.max_batched_tokens);
  sc.load.in_len = r.integer_or("in_len", sc.load.in_len);
  sc.load.out_len = r.integer_or("out_len", sc.load.out_len);
  sc.load.requests = r.integer_or("requests", sc.load.requests);
  if (r.has("rate")) rate_text = std::to_string(r.number("rate"));
  if (r.has("concurrency")) {
    sc.load.arrival = serve::ArrivalKind::ClosedLoop;
    sc.load.concurrency = r.integer("concurrency");
  }
  if (r.boolean_or("offline", false)) sc.load.arrival = serve::ArrivalKind::Offline;
  sc.prefill_chips = r.integer_or("prefill_chips", sc.prefill_chips);
  sc.draft_len = static_cast<int>(r.integer_or("draft_len", sc.draft_len));
  sc.acceptance = r.number_or("acceptance", sc.acceptance);
  sc.load.seed = static_cast<std::uint64_t>(r.integer_or("seed", static_cast<long long>(sc.load.seed)));
  if (r.has("timeout")) sc.timeout = r.quantity<core::Seconds>("timeout");
  if (r.has("ttft_slo")) sc.ttft_slo = r.quantity<core::Seconds>("ttft_slo");
  if (r.has("tpot_slo")) sc.tpot_slo = r.quantity<core::Seconds>("tpot_slo");
  r.ignore("description");
  r.finish();
  d.set_file(path);
  d.throw_if_any();
}

Json report_json(const serve::ServeReport& rep) {
  const auto& s = rep.sim;
  Json j;
  j["system"] = rep.scenario.system;
  j["model"] = rep.scenario.model;
  j["framework"] = rep.framework;
  j["chips"] = rep.chips_used;
  j["tp"] = rep.scenario.tp;
  j["pp"] = rep.scenario.pp;
  j["ep"] = rep.scenario.ep;
  j["engines"] = rep.engines;
  j["decode_engines"] = rep.decode_engines;
  j["requests"] = s.requests;
  j["duration_s"] = s.duration.base();
  j["throughput_requests_per_s"] = s.requests_per_s;
  j["throughput_tokens_per_s"] = s.output_tokens_per_s;
  j["throughput_tokens_per_s_per_chip"] = rep.output_tokens_per_s_per_chip;
  j["input_tokens_per_s"] = s.input_tokens_per_s;
  auto put = [&](const char* name, const serve::Percentiles& p) {
    j[std::string(name) + "_mean"] = p.mean;
    j[std::string(name) + "_p50"] = p.p50;
    j[std::string(name) + "_p90"] = p.p90;
    j[std::string(name) + "_p99"] = p.p99;
  };
  put("ttft_ms", s.ttft_ms);
  put("tpot_ms", s.tpot_ms);
  put("itl_ms", s.itl_ms);
  put("e2e_latency_s", s.e2e_s);
  j["goodput_requests_per_s"] = rep.goodput_requests_per_s;
  j["timed_out_requests"] = s.timed_out;
  j["preemptions"] = s.preemptions;
  j["mean_batch_per_engine"] = s.mean_batch;
  j["mean_kv_utilisation"] = s.mean_kv_utilisation;
  j["memory_per_chip_gib"] = {{"hbm", core::to_gib(rep.memory.hbm)}, {"weights", core::to_gib(rep.memory.weights)},
                              {"workspace", core::to_gib(rep.memory.workspace)},
                              {"kv_cache", core::to_gib(rep.memory.kv_capacity)}};
  j["kv_tokens_per_engine"] = rep.memory.kv_tokens;
  const auto& st = rep.sample_decode_step;
  j["decode_step_ms"] = {{"total", core::to_ms(st.total)}, {"linear", core::to_ms(st.linear)},
                         {"attention", core::to_ms(st.attention)}, {"comm", core::to_ms(st.comm)},
                         {"overhead", core::to_ms(st.overhead)}};
  j["energy_j_per_output_token"] = rep.joules_per_output_token;
  j["energy_estimated"] = rep.energy_estimated;
  j["power_per_chip_w"] = rep.power_per_chip_w;
  j["cost_dollars_per_million_output_tokens"] = rep.dollars_per_million_output_tokens;
  j["price_estimated"] = rep.price_estimated;
  Json tl = Json::array();
  for (const auto& p : s.timeline) tl.push_back({{"time_s", p.time_s}, {"kv_utilisation", p.kv_utilisation}, {"batch", p.batch}});
  j["timeline"] = tl;
  j["assumptions"] = rep.assumptions;
  return j;
}

void print_report(const serve::ServeReport& rep) {
  const auto& s = rep.sim;
  std::cout << strformat("%s on %lld x %s (%s, tp=%d pp=%d ep=%d, %d engine(s)%s)\n", rep.scenario.model.c_str(),
                         rep.chips_used, rep.scenario.system.c_str(), rep.framework.c_str(), rep.scenario.tp,
                         rep.scenario.pp, rep.scenario.ep, rep.engines,
                         rep.decode_engines ? strformat(" + %d decode", rep.decode_engines).c_str() : "");
  std::cout << strformat("memory per chip: weights %.1f GiB, workspace %.1f GiB, KV cache %.1f GiB of %.1f GiB HBM (%lld tokens/engine)\n",
                         core::to_gib(rep.memory.weights), core::to_gib(rep.memory.workspace),
                         core::to_gib(rep.memory.kv_capacity), core::to_gib(rep.memory.hbm), rep.memory.kv_tokens);
  std::cout << strformat("requests %lld in %.2f s: %.2f req/s, %.0f output tok/s (%.1f per chip)\n", s.requests,
                         s.duration.base(), s.requests_per_s, s.output_tokens_per_s, rep.output_tokens_per_s_per_chip);
  auto row = [](const char* n, const serve::Percentiles& p, const char* u) {
    std::cout << strformat("  %-6s mean %9.2f  p50 %9.2f  p90 %9.2f  p99 %9.2f %s\n", n, p.mean, p.p50, p.p90, p.p99, u);
  };
  row("TTFT", s.ttft_ms, "ms");
  row("TPOT", s.tpot_ms, "ms");
  row("E2E", s.e2e_s, "s");
  std::cout << strformat("batch/engine %.1f, KV use %.0f%%, preemptions %lld, goodput %.2f req/s, timed out %lld\n",
                         s.mean_batch, 100 * s.mean_kv_utilisation, s.preemptions, rep.goodput_requests_per_s, s.timed_out);
  std::cout << strformat("energy %.3f J/token%s, cost $%.3f per M output tokens%s\n", rep.joules_per_output_token,
                         rep.energy_estimated ? " (estimated)" : "", rep.dollars_per_million_output_tokens,
                         rep.price_estimated ? " (estimated price)" : "");
  const auto& st = rep.sample_decode_step;
  std::cout << strformat("decode step at the mean batch: %.2f ms = linear %.2f + attention %.2f + comm %.2f + overhead %.2f\n",
                         core::to_ms(st.total), core::to_ms(st.linear), core::to_ms(st.attention), core::to_ms(st.comm),
                         core::to_ms(st.overhead));
  for (const auto& a : rep.assumptions) std::cout << "  assumption: " << a << "\n";
}

Json candidate_json(const serve::PlanCandidate& c) {
  return Json{{"tp", c.tp}, {"max_num_seqs", c.max_num_seqs}, {"prefill_chips", c.prefill_chips},
              {"chips", c.chips}, {"meets_slo", c.meets_slo}, {"ttft_ms_p90", c.ttft_p90_ms},
              {"tpot_ms_p90", c.tpot_p90_ms}, {"throughput_tokens_per_s_per_chip", c.output_tokens_per_s_per_chip},
              {"cost_dollars_per_million_output_tokens", c.dollars_per_million_output_tokens},
              {"energy_j_per_output_token", c.joules_per_output_token}, {"note", c.note}};
}

}  // namespace

int run_serve(const Args& args) {
  CLI::App app{"simulate serving a request load", "xpusim serve"};
  serve::ServeScenario sc;
  std::string config, trace, rate, framework, scheduler, timeout = "60 s", ttft_slo = "2 s", tpot_slo = "200 ms";
  long long concurrency = 0;
  bool offline = false, json = false, search = false, compare = false, no_chunk = false;
  std::vector<std::string> systems;
  sc.load.requests = 1000;
  app.add_option("--config", config, "YAML/JSON scenario (flags override it)");
  app.add_option("--system", sc.system, "catalog system id");
  app.add_option("--model", sc.model, "model id or path to a config.json");
  app.add_option("--chips", sc.chips, "total chips (default: one engine)");
  app.add_option("--tp", sc.tp, "tensor parallel (default: smallest that fits)");
  app.add_option("--pp", sc.pp, "pipeline stages");
  app.add_option("--ep", sc.ep, "expert parallel");
  app.add_flag("--dp-attention", sc.attention_dp, "DP attention with EP experts (tp = 1)");
  app.add_option("--precision", sc.precision, "matmul precision: bf16, fp8, int8, mxfp8, mxfp4, nvfp4");
  app.add_option("--weight-precision", sc.weight_precision, "weight storage when it differs (weight-only)");
  app.add_option("--kv-precision", sc.kv_precision, "KV cache dtype (default fp8 with fp8/fp4 math)");
  app.add_option("--framework", framework, "trtllm, vllm, nim, sglang, neuron-tnx, neuron-nxdi");
  app.add_option("--scheduler", scheduler, "static, decode-priority, prefill-priority");
  app.add_option("--max-num-seqs", sc.max_num_seqs, "running sequences per engine");
  app.add_option("--max-batched-tokens", sc.max_batched_tokens, "tokens per step per engine");
  app.add_option("--static-batch", sc.static_batch, "static batch size");
  app.add_option("--block-size", sc.block_size, "KV page size in tokens");
  app.add_flag("--no-chunked-prefill", no_chunk, "whole prompts only");
  app.add_option("--in-len", sc.load.in_len, "prompt tokens");
  app.add_option("--out-len", sc.load.out_len, "output tokens");
  app.add_option("--trace", trace, "CSV trace: arrival_s,in_len,out_len");
  app.add_option("--rate", rate, "Poisson arrival rate (requests/s)");
  app.add_option("--concurrency", concurrency, "closed-loop clients");
  app.add_flag("--offline", offline, "all requests queued at once");
  app.add_option("--requests", sc.load.requests, "requests to simulate");
  app.add_option("--seed", sc.load.seed, "random seed");
  app.add_option("--prefill-chips", sc.prefill_chips, "disaggregated: chips in the prefill pool");
  app.add_option("--draft-len", sc.draft_len, "speculative decoding: draft tokens per step");
  app.add_option("--acceptance", sc.acceptance, "speculative decoding: per-token acceptance");
  app.add_option("--draft-model", sc.draft_model, "speculative decoding: draft model id");
  app.add_option("--timeout", timeout, "endpoint timeout, e.g. '60 s'");
  app.add_option("--ttft-slo", ttft_slo, "TTFT SLO for goodput/search, e.g. '2 s'");
  app.add_option("--tpot-slo", tpot_slo, "TPOT SLO for goodput/search, e.g. '200 ms'");
  app.add_flag("--search", search, "fewest chips and the plan meeting --rate within the SLOs");
  app.add_flag("--compare", compare, "search on several systems side by side");
  app.add_option("--systems", systems, "systems for --compare (default: trn3-ultraserver-gen2 trn2-ultraserver gb300-nvl72)");
  app.add_flag("--json", json, "print one JSON document");
  std::string calibration_file;
  add_calibration_option(app, calibration_file);
  if (int rc = parse(app, args); rc >= 0) return rc;

  if (!config.empty()) {
    serve::ServeScenario fromfile;
    std::string frate;
    fromfile.load.requests = sc.load.requests;
    apply_config(config, fromfile, frate);
    // Flags given explicitly override the file.
    auto given = [&](const char* f) { return app.count(f) > 0; };
    if (!given("--system")) sc.system = fromfile.system;
    if (!given("--model")) sc.model = fromfile.model;
    if (!given("--chips")) sc.chips = fromfile.chips;
    if (!given("--tp")) sc.tp = fromfile.tp;
    if (!given("--pp")) sc.pp = fromfile.pp;
    if (!given("--ep")) sc.ep = fromfile.ep;
    if (!given("--precision")) sc.precision = fromfile.precision;
    if (!given("--kv-precision")) sc.kv_precision = fromfile.kv_precision;
    if (!given("--weight-precision")) sc.weight_precision = fromfile.weight_precision;
    if (!given("--framework")) sc.framework = fromfile.framework;
    if (!given("--scheduler")) sc.scheduler = fromfile.scheduler;
    if (!given("--max-num-seqs")) sc.max_num_seqs = fromfile.max_num_seqs;
    if (!given("--max-batched-tokens")) sc.max_batched_tokens = fromfile.max_batched_tokens;
    if (!given("--in-len")) sc.load.in_len = fromfile.load.in_len;
    if (!given("--out-len")) sc.load.out_len = fromfile.load.out_len;
    if (!given("--requests")) sc.load.requests = fromfile.load.requests;
    if (!given("--seed")) sc.load.seed = fromfile.load.seed;
    if (!given("--prefill-chips")) sc.prefill_chips = fromfile.prefill_chips;
    if (!given("--draft-len")) sc.draft_len = fromfile.draft_len;
    if (!given("--acceptance")) sc.acceptance = fromfile.acceptance;
    if (!given("--rate") && !frate.empty()) rate = frate;
    if (!given("--concurrency") && fromfile.load.arrival == serve::ArrivalKind::ClosedLoop) concurrency = fromfile.load.concurrency;
    if (!given("--offline") && fromfile.load.arrival == serve::ArrivalKind::Offline && frate.empty() && concurrency == 0) offline = offline || fromfile.load.arrival == serve::ArrivalKind::Offline;
    sc.timeout = fromfile.timeout;
    sc.ttft_slo = fromfile.ttft_slo;
    sc.tpot_slo = fromfile.tpot_slo;
  }
  core::Diagnostics d;
  if (sc.system.empty() && !compare) d.error("system", "required", "", "a catalog id (xpusim catalog lists them)");
  if (sc.model.empty()) d.error("model", "required", "", "a model id or a path to a config.json");
  if (!framework.empty()) {
    auto fw = serve::parse_framework(framework);
    if (!fw) d.error("framework", "unknown framework", framework, core::join(serve::framework_names()),
                     core::did_you_mean(framework, serve::framework_names()));
    else sc.framework = *fw;
  }
  if (!scheduler.empty()) {
    auto k = serve::parse_scheduler(scheduler);
    if (!k) d.error("scheduler", "unknown scheduler", scheduler, "static, decode-priority, prefill-priority");
    else sc.scheduler = *k;
  }
  if (no_chunk) sc.chunked_prefill = false;
  const int loads = (!rate.empty()) + (concurrency > 0) + offline + (!trace.empty());
  if (loads > 1 && !(search || compare))
    d.error("load", "choose one of --rate, --concurrency, --offline, --trace");
  if (app.count("--timeout")) sc.timeout = parse_seconds(timeout, "timeout");
  if (app.count("--ttft-slo")) sc.ttft_slo = parse_seconds(ttft_slo, "ttft_slo");
  if (app.count("--tpot-slo")) sc.tpot_slo = parse_seconds(tpot_slo, "tpot_slo");
  double rate_v = 0;
  if (!rate.empty()) {
    try { rate_v = std::stod(rate); } catch (...) { d.error("rate", "not a number", rate, "requests per second, e.g. 10"); }
  }
  d.throw_if_any();
  if (!trace.empty()) {
    sc.load.arrival = serve::ArrivalKind::Trace;
    sc.load.trace = serve::read_trace(trace);
    for (const auto& r : sc.load.trace) {
      sc.load.in_len = std::max(sc.load.in_len, r.in_len);
      sc.load.out_len = std::max(sc.load.out_len, r.out_len);
    }
  } else if (concurrency > 0) {
    sc.load.arrival = serve::ArrivalKind::ClosedLoop;
    sc.load.concurrency = concurrency;
  } else if (rate_v > 0) {
    sc.load.arrival = serve::ArrivalKind::Poisson;
    sc.load.rate_per_s = rate_v;
  } else if (!rate.empty()) {
    core::fail("rate", "must be positive", rate);
  } else {
    sc.load.arrival = serve::ArrivalKind::Offline;
  }

  const auto cat = hw::Catalog::load(data_dir() + "/catalog");
  const calib::Params params = load_calibration(calibration_file);
  serve::ServeEnv env{&cat, data_dir() + "/models", &params};

  if (search || compare) {
    if (!(rate_v > 0)) core::fail("rate", "--search and --compare need --rate", rate, "requests per second");
    serve::SearchSpec ss;
    ss.base = sc;
    ss.rate_per_s = rate_v;
    ss.ttft_p90_slo = sc.ttft_slo;
    ss.tpot_p90_slo = sc.tpot_slo;
    ss.requests = std::min<long long>(sc.load.requests, 2000);
    std::vector<serve::SearchResult> res;
    if (compare) res = serve::compare_systems(ss, systems.empty() ? serve::default_compare_systems() : systems, env);
    else res.push_back(serve::search_plan(ss, env));
    if (json) {
      Json j = Json::array();
      for (const auto& r : res) {
        Json e{{"system", r.system}, {"found", r.found}, {"best", candidate_json(r.best)}};
        Json tried = Json::array();
        for (const auto& c : r.tried) tried.push_back(candidate_json(c));
        e["tried"] = tried;
        j.push_back(e);
      }
      std::cout << (compare ? Json{{"compare", j}} : j[0]).dump(2) << "\n";
    } else {
      std::cout << strformat("%-24s %6s %4s %8s %10s %10s %12s %10s\n", "system", "chips", "tp", "prefill", "ttft_p90", "tpot_p90",
                             "tok/s/chip", "$/Mtok");
      for (const auto& r : res) {
        if (!r.found) {
          std::cout << strformat("%-24s  no plan: %s\n", r.system.c_str(), r.best.note.c_str());
          continue;
        }
        const auto& b = r.best;
        std::cout << strformat("%-24s %6lld %4d %8lld %8.0fms %8.1fms %12.1f %10.3f  J/tok %.3f\n", r.system.c_str(), b.chips,
                               b.tp, b.prefill_chips, b.ttft_p90_ms, b.tpot_p90_ms, b.output_tokens_per_s_per_chip,
                               b.dollars_per_million_output_tokens, b.joules_per_output_token);
      }
    }
    bool any = false;
    for (const auto& r : res) any = any || r.found;
    return any ? 0 : 1;
  }

  auto rep = serve::run_scenario(sc, env);
  if (!rep) {
    if (json) std::cout << Json{{"feasible", false}, {"reason", rep.error()}}.dump(2) << "\n";
    std::cerr << "xpusim serve: infeasible: " << rep.error() << "\n";
    return 1;
  }
  if (json) std::cout << report_json(*rep).dump(2) << "\n";
  else print_report(*rep);
  return 0;
}

}  // namespace xpusim::cli
