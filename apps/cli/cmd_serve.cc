// xpusim serve: simulate serving a request load on a system (continuous batching, paged KV,
// SLOs), or search the fewest chips for a rate and an SLO (--search), or compare systems
// (--compare). Flags or a scenario file (--scenario); flags given on the command line win.
// Parses flags and calls the library (scenario/ loads and resolves, report/ renders).

#include <fstream>
#include <iostream>
#include <optional>

#include "cli_util.h"
#include "flags.h"
#include "xpusim/api/api.h"
#include "xpusim/config/values.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/report/html_report.h"
#include "xpusim/report/serve_report.h"
#include "xpusim/report/trust_report.h"
#include "xpusim/serve/software_range.h"
#include "xpusim/serve/trace_stats.h"
#include "xpusim/workload/hf_config.h"

namespace xpusim::cli {

namespace {

struct ServeFlags {
  scenario::ServeInputs in;
  std::string scenario_file, config_file, arrivals, trace;
  std::optional<std::string> timeout, ttft_slo, tpot_slo, prefix_cache;
  std::string calibration_file, html;
  bool no_chunk = false, json = false, search = false, compare = false;
  std::vector<std::string> systems;
};

void add_plan_flags(CLI::App& app, scenario::ServeInputs& in, ServeFlags& f) {
  add_optional(app, "--system", in.system, "catalog system id");
  add_optional(app, "--model", in.model, "model id or path to a config.json");
  add_optional(app, "--chips", in.chips, "total chips (default: one engine)");
  add_optional(app, "--tp", in.tp, "tensor parallel (default: smallest that fits)");
  add_optional(app, "--pp", in.pp, "pipeline stages");
  add_optional(app, "--ep", in.ep, "expert parallel");
  add_optional_flag(app, "--dp-attention", in.attention_dp, "DP attention with EP experts (tp = 1)");
  add_optional(app, "--moe-load-imbalance", in.moe_load_imbalance,
               "mixture of experts: tokens the busiest expert-parallel rank receives over the mean (needs --ep > 1; "
               "default 1, balanced routing)");
  add_optional(app, "--precision", in.precision, "matmul precision: bf16, fp8, int8, mxfp8, mxfp4, nvfp4");
  add_optional_flag(app, "--allow-fallback", in.allow_fallback,
                    "a precision the chip lacks: store the weights in it, run the matmuls in the nearest the chip has (stated)");
  add_optional(app, "--weight-precision", in.weight_precision, "weight storage when it differs (weight-only)");
  add_optional(app, "--kv-precision", in.kv_precision, "KV cache dtype (default fp8 with fp8/fp4 math)");
  add_optional(app, "--state-precision", in.state_precision,
               "hybrid models: the Mamba-2 state dtype, bf16 (default) or fp32 (vLLM --mamba-ssm-cache-dtype)");
  add_optional(app, "--framework", in.framework,
               "NAME[@VERSION]: trtllm, vllm, nim, sglang, neuron-tnx, neuron-nxdi, optimum-neuron, vllm-neuron; "
               "@VERSION (PEP 440, e.g. trtllm@1.1.0rc5; Neuron stacks: the Neuron SDK release) picks the version "
               "range of data/calibration/stacks/serving.yaml (default: the stack's default range)");
  add_optional(app, "--scheduler", in.scheduler, "static, decode-priority, prefill-priority");
  add_optional(app, "--max-num-seqs", in.max_num_seqs, "running sequences per engine");
  add_optional(app, "--max-batched-tokens", in.max_batched_tokens, "tokens per step per engine");
  add_optional(app, "--static-batch", in.static_batch, "static batch size");
  add_optional(app, "--block-size", in.block_size, "KV page size in tokens");
  add_optional(app, "--compiled-seq-len", in.compiled_seq_len,
               "Neuron static shapes: the compiled sequence length (buckets: powers of two from 128 below it, then it)");
  app.add_flag("--no-chunked-prefill", f.no_chunk, "whole prompts only");
  add_optional(app, "--prefill-chips", in.prefill_chips, "disaggregated: chips in the prefill pool");
  add_optional(app, "--prefill-system", in.prefill_system,
               "heterogeneous disaggregation: the prefill pool's system (with --decode-system, docs/fusion.md)");
  add_optional(app, "--decode-system", in.decode_system, "heterogeneous disaggregation: the decode pool's system");
  add_optional(app, "--decode-chips", in.decode_chips, "heterogeneous disaggregation: chips in the decode pool");
  add_optional(app, "--draft-len", in.draft_len, "speculative decoding: draft tokens per step");
  add_optional(app, "--acceptance", in.acceptance, "speculative decoding: per-token acceptance");
  add_optional(app, "--draft-model", in.draft_model,
               "speculative decoding: draft model id, or mtp for the model's own multi-token-prediction module");
}

void add_workload_flags(CLI::App& app, scenario::ServeInputs& in, ServeFlags& f) {
  add_optional(app, "--in-len", in.in_len, "prompt tokens");
  add_optional(app, "--out-len", in.out_len, "output tokens");
  app.add_option("--arrivals", f.arrivals, "CSV of requests to replay: arrival_s,in_len,out_len[,prefix_hashes][,session_id,turn]");
  add_optional(app, "--arrivals-block-tokens", in.arrivals_block_tokens,
               "tokens per block of the arrivals file's prefix_hashes (default 512, the Mooncake traces')");
  add_optional(app, "--arrivals-window", in.arrivals_window,
               "FROM..TO: only the requests arriving in [FROM, TO) seconds of the file, times counted from FROM");
  add_optional(app, "--arrivals-sample", in.arrivals_sample, "keep N of the requests, evenly spaced in file order");
  add_optional(app, "--arrivals-speedup", in.arrivals_speedup, "arrival times divided by X (2: twice the rate)");
  add_optional(app, "--prefix-cache", f.prefix_cache,
               "on | off: prefix caching of the trace's shared prompt blocks (default: the framework's; docs/serving.md)");
  add_optional(app, "--prefix-cache-tokens", in.prefix_cache_tokens,
               "prefix cache per engine in tokens (default: the engine's KV cache)");
  add_optional(app, "--kv-tier", in.kv_tier,
               "KV offload: host:SIZE of host memory per engine (e.g. host:512GiB) that takes the blocks the prefix "
               "cache evicts, ssd:SIZE of local NVMe per engine below it (e.g. host:512GiB,ssd:4TiB); a prompt's blocks "
               "found there load back (host link, the node's SSDs) instead of being prefilled");
  add_optional(app, "--kv-pool", in.kv_pool,
               "KV offload: remote:SIZE, one pool over the scale-out network shared by every engine (e.g. "
               "remote:100TiB, as Mooncake Store): each prefilled prompt's blocks are written to it, and a prompt's "
               "blocks no local tier holds load from it instead of being prefilled");
  add_optional(app, "--rate", in.rate, "Poisson arrival rate (requests/s)");
  add_optional(app, "--concurrency", in.concurrency, "closed-loop clients");
  add_optional_flag(app, "--offline", in.offline, "all requests queued at once");
  add_optional(app, "--requests", in.requests, "requests to simulate (default 1000)");
  add_optional(app, "--seed", in.seed, "random seed");
  add_optional(app, "--timeout", f.timeout, "endpoint timeout, e.g. '60 s' (default 60 s)");
  add_optional(app, "--ttft-slo", f.ttft_slo, "TTFT SLO for goodput/search, e.g. '2 s' (default 2 s)");
  add_optional(app, "--tpot-slo", f.tpot_slo, "TPOT SLO for goodput/search, e.g. '200 ms' (default 200 ms)");
  add_estimate_flags(app, in.overrides);
  add_optional(app, "--pue", in.pue, "site power usage effectiveness, > 1 and < 3 (default: the calibration's)");
}

// Durations and the other flag values judged like a file's values; flags then win over the file.
void resolve_inputs(ServeFlags& f) {
  core::Diagnostics d;
  auto duration = [&](const std::optional<std::string>& text, const char* flag, std::optional<core::Seconds>& out) {
    if (text) out = config::parse_positive_duration(d, flag, *text);
  };
  duration(f.timeout, "--timeout", f.in.timeout);
  duration(f.ttft_slo, "--ttft-slo", f.in.ttft_slo);
  duration(f.tpot_slo, "--tpot-slo", f.in.tpot_slo);
  if (f.no_chunk) f.in.chunked_prefill = false;
  if (f.prefix_cache) {
    if (*f.prefix_cache == "on" || *f.prefix_cache == "off") f.in.prefix_cache = *f.prefix_cache == "on";
    else d.error("--prefix-cache", "not a switch", *f.prefix_cache, "on or off");
  }
  if (!f.arrivals.empty()) f.in.arrivals = f.arrivals;
  scenario::check_flag_values(f.in, d);
  d.throw_if_any();
  if (!f.scenario_file.empty()) scenario::fill_unset(f.in, scenario::read_serve_file(f.scenario_file));
  if (!f.config_file.empty()) {
    std::cerr << "xpusim serve: --config is deprecated and will be removed: use --scenario with nested plan: and "
                 "workload: blocks (docs/scenarios.md)\n";
    scenario::fill_unset(f.in, scenario::read_flat_serve_file(f.config_file));
  }
}

// --price/--tdp replace the estimates of the one system simulated (not of --compare's several).
std::vector<std::string> apply_serve_overrides(hw::Catalog& cat, const ServeFlags& f) {
  if (!f.in.overrides.any()) return {};
  if (f.compare) {
    const char* flag = f.in.overrides.price_usd_per_chip_hour ? "--price" : "--tdp";
    core::fail(flag, "applies to the one system simulated, not to --compare", flag,
               "--system ID with --search or a single run");
  }
  if (!f.in.system) core::fail("--system", "missing", "", "a system id, e.g. trn3-ultraserver-gen2");
  return scenario::apply_overrides(cat, *f.in.system, f.in.overrides);
}

std::vector<serve::SearchResult> searched(const ServeFlags& f, const serve::SearchSpec& spec, const serve::ServeEnv& env) {
  if (!spec.base.prefill_system.empty()) return serve::compare_hetero(spec, env);
  if (f.compare) return serve::compare_systems(spec, f.systems.empty() ? serve::default_compare_systems() : f.systems, env);
  return {serve::search_plan(spec, env)};
}

int run_search(const ServeFlags& f, const serve::ServeEnv& env, const std::vector<std::string>& overrides) {
  const serve::SearchSpec spec = scenario::build_search(f.in, f.compare);
  const bool hetero = !spec.base.prefill_system.empty();
  const std::vector<serve::SearchResult> results = searched(f, spec, env);
  // A trace whose prompts share prefixes: the same search without the prefix cache, and without
  // each offload tier named, beside it (docs/serving.md, "Search and compare"), unless the run
  // already turned the cache off.
  std::vector<report::SearchWithout> without;
  const std::vector<scenario::WithoutTier> tiers = scenario::without_each_offload_tier(f.in);
  if (serve::rows_with_prefix_blocks(spec.base.load.trace) > 0 && f.in.prefix_cache.value_or(true)) {
    scenario::ServeInputs off = f.in;
    off.prefix_cache = false;
    without.push_back({report::kWithoutPrefixCache, searched(f, scenario::build_search(off, f.compare), env)});
    for (const auto& w : tiers)
      without.push_back({w.tier == "remote" ? "remote pool" : w.tier + " tier",
                         searched(f, scenario::build_search(w.inputs, f.compare), env)});
  }
  if (f.json) {
    nlohmann::ordered_json doc = report::search_document(provenance(true, true, f.calibration_file), f.in, results, f.compare);
    if (!without.empty()) doc["without_prefix_cache"] = report::search_results_json(without.front().results);
    if (without.size() > 1) {
      nlohmann::ordered_json by_tier = nlohmann::ordered_json::object();
      for (size_t k = 1; k < without.size(); ++k) by_tier[tiers[k - 1].tier] = report::search_results_json(without[k].results);
      doc["without_offload_tier"] = by_tier;
    }
    std::cout << doc.dump(2) << "\n";
  } else {
    for (const auto& note : overrides) std::cout << "override: " << note << "\n";
    std::cout << report::search_text(results);
    if (!without.empty()) std::cout << report::search_without_text(results, without);
  }
  if (hetero) return results.front().found ? 0 : 1;  // the question was the heterogeneous plan
  for (const auto& r : results)
    if (r.found) return 0;
  return 1;
}

// The serving timeline as Chrome trace JSON (docs/serving.md, "Timeline").
void write_trace(const std::string& path, const serve::SimResult& sim) {
  write_text_file("--trace", path, serve::chrome_trace_json(sim));
}

}  // namespace

int run_serve(const Args& args) {
  CLI::App app{"simulate serving a request load", "xpusim serve"};
  ServeFlags f;
  app.add_option("--scenario", f.scenario_file, "YAML/JSON scenario with plan: and workload: (flags override it)");
  app.add_option("--config", f.config_file, "deprecated: a flat scenario file (use --scenario)");
  add_plan_flags(app, f.in, f);
  add_workload_flags(app, f.in, f);
  app.add_option("--trace", f.trace,
                 "write the serving timeline to FILE (Chrome trace JSON, opens in Perfetto): a track per "
                 "engine with its steps, the first 1000 requests' queue/prefill/decode phases");
  app.add_flag("--search", f.search,
               "fewest chips and the plan meeting --rate within the SLOs; with --prefill-system/--decode-system "
               "the cheapest heterogeneous deployment per hour, beside each system alone");
  app.add_flag("--compare", f.compare, "search on several systems side by side");
  app.add_option("--systems", f.systems, "systems for --compare (default: trn3-ultraserver-gen2 trn2-ultraserver gb300-nvl72)");
  app.add_flag("--json", f.json, "print one JSON document");
  add_calibration_option(app, f.calibration_file);
  add_catalog_option(app);
  add_html_option(app, f.html);
  if (int rc = parse(app, args); rc >= 0) return rc;
  resolve_inputs(f);

  auto cat = load_catalog();
  const std::vector<std::string> overrides = apply_serve_overrides(cat, f);
  const calib::Params params = load_calibration(f.calibration_file);
  const serve::ServeEnv env{&cat, data_dir() + "/models", &params};
  if ((f.search || f.compare) && !f.html.empty())
    core::fail("--html", "applies to a single run, not to --search or --compare", f.html, "a run without them");
  if ((f.search || f.compare) && !f.trace.empty())
    core::fail("--trace", "applies to a single run, not to --search or --compare", f.trace, "a run without them");
  if (f.search || f.compare) return run_search(f, env, overrides);
  serve::ServeScenario sc = scenario::build_serve(f.in);
  sc.trace = !f.trace.empty();
  const auto result = serve::run_scenario(sc, env);
  if (!result) {
    if (f.json) std::cout << report::serve_infeasible_document(provenance(true, true, f.calibration_file), f.in, result.error()).dump(2) << "\n";
    std::cerr << "xpusim serve: infeasible: " << result.error() << "\n";
    return 1;
  }
  serve::ServeReport rep = *result;
  rep.software_range = serve::software_range(rep, env);
  rep.assumptions.insert(rep.assumptions.begin(), overrides.begin(), overrides.end());
  if (!f.trace.empty()) write_trace(f.trace, rep.sim);
  if (!f.html.empty()) {
    // With a prefix cache: the same run without it, and the trace replayed through caches of
    // 1/16 to 4 times the engines' combined capacity.
    std::optional<serve::ServeReport> uncached;
    report::PrefixCachePage page;
    if (rep.prefix_caching) {
      serve::ServeScenario off = rep.scenario;
      off.prefix_caching = false;
      off.kv_host = {};
      off.kv_ssd = {};
      off.kv_remote = {};
      if (auto r = serve::run_scenario(off, env)) uncached = *r;
      page.uncached = uncached ? &*uncached : nullptr;
      page.engines = rep.engines;
      const long long all = rep.prefix_cache_tokens_per_engine * std::max(1, rep.engines);
      std::vector<long long> capacities;
      for (const long long divisor : {16, 4, 1}) capacities.push_back(std::max<long long>(1, all / divisor));
      capacities.push_back(all * 4);
      page.replays = serve::trace_stats(rep.scenario.load.trace, rep.prefix_block_tokens, capacities).caches;
    }
    write_html(f.html, report::serve_html(provenance(true, true, f.calibration_file), rep, scenario::rate_curve(rep, env),
                                          rep.prefix_caching ? &page : nullptr));
  }
  const validation::TrustData trust = load_trust_data();
  const auto model = workload::load_model(rep.scenario.model, env.models_dir);
  const auto assessment = validation::assess(trust, report::serve_query(rep, cat.system(rep.scenario.system), model));
  const auto metrics = report::serve_metrics(rep);
  if (f.json) {
    std::cout << api::serve_document(provenance(true, true, f.calibration_file), trust, cat, env.models_dir, f.in, rep)
                     .dump(2)
              << "\n";
  } else {
    std::cout << report::serve_text(rep) << report::trust_text(trust, assessment, metrics);
  }
  return 0;
}

}  // namespace xpusim::cli
