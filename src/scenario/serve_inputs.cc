#include "xpusim/scenario/serve_inputs.h"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>
#include <cmath>
#include <utility>

#include "xpusim/config/document.h"
#include "xpusim/config/values.h"
#include "xpusim/core/format.h"
#include "xpusim/core/limits.h"
#include "xpusim/core/unit_parse.h"
#include "xpusim/core/suggest.h"
#include "file_fields.h"

namespace xpusim::scenario {

namespace {

// Requests simulated when unset; --search and --compare simulate at most kMaxSearchRequests.
constexpr long long kDefaultRequests = 1000;
constexpr long long kMaxSearchRequests = 2000;

void read_plan_keys(config::FieldReader& r, ServeInputs& in) {
  read_count(r, "tp", in.tp);
  read_count(r, "pp", in.pp);
  read_count(r, "ep", in.ep);
  read_flag(r, "attention_dp", in.attention_dp);
  read_positive_number(r, "moe_load_imbalance", in.moe_load_imbalance);
  read_text(r, "precision", in.precision);
  read_flag(r, "allow_fallback", in.allow_fallback);
  read_text(r, "weight_precision", in.weight_precision);
  read_text(r, "kv_precision", in.kv_precision);
  read_text(r, "state_precision", in.state_precision);
  read_text(r, "scheduler", in.scheduler);
  read_count(r, "max_num_seqs", in.max_num_seqs);
  read_count(r, "max_batched_tokens", in.max_batched_tokens);
  read_count(r, "static_batch", in.static_batch);
  read_count(r, "block_size", in.block_size);
  read_flag(r, "chunked_prefill", in.chunked_prefill);
  read_flag(r, "prefix_cache", in.prefix_cache);
  read_count(r, "prefix_cache_tokens", in.prefix_cache_tokens);
  read_text(r, "kv_tier", in.kv_tier);
  read_text(r, "kv_pool", in.kv_pool);
  read_count(r, "compiled_seq_len", in.compiled_seq_len);
  read_count(r, "prefill_chips", in.prefill_chips);
  read_count(r, "decode_chips", in.decode_chips);
  read_non_negative_count(r, "draft_len", in.draft_len);
  read_fraction(r, "acceptance", in.acceptance);
  read_text(r, "draft_model", in.draft_model);
}

void read_workload_keys(config::FieldReader& r, ServeInputs& in) {
  read_count(r, "in_len", in.in_len);
  read_count(r, "out_len", in.out_len);
  read_count(r, "requests", in.requests);
  read_non_negative_count(r, "seed", in.seed);
  read_positive_number(r, "rate", in.rate);
  read_count(r, "concurrency", in.concurrency);
  read_flag(r, "offline", in.offline);
  read_text(r, "arrivals", in.arrivals);
  read_count(r, "arrivals_block_tokens", in.arrivals_block_tokens);
  read_text(r, "arrivals_window", in.arrivals_window);
  read_count(r, "arrivals_sample", in.arrivals_sample);
  read_positive_number(r, "arrivals_speedup", in.arrivals_speedup);
  read_duration(r, "timeout", in.timeout);
  read_duration(r, "ttft_slo", in.ttft_slo);
  read_duration(r, "tpot_slo", in.tpot_slo);
}

void read_top_keys(config::FieldReader& r, ServeInputs& in) {
  read_text(r, "system", in.system);
  read_text(r, "prefill_system", in.prefill_system);
  read_text(r, "decode_system", in.decode_system);
  read_text(r, "model", in.model);
  read_count(r, "chips", in.chips);
  read_text(r, "framework", in.framework);
  r.ignore("description");
}

template <typename Body>
ServeInputs read_doc(const config::Json& doc, const std::string& path, Body body) {
  core::Diagnostics d;
  config::FieldReader r(doc, "", d);
  ServeInputs in;
  read_top_keys(r, in);
  body(r, in);
  r.finish();
  d.set_file(path);
  d.throw_if_any();
  return in;
}

void resolve_names(const ServeInputs& in, serve::ServeScenario& sc, core::Diagnostics& d) {
  if (in.framework) {
    // NAME[@VERSION]: the version picks the stack's range when the profile is built.
    const size_t at = in.framework->find('@');
    const std::string name = in.framework->substr(0, at);
    auto fw = serve::parse_framework(name);
    if (!fw) d.error("framework", "unknown framework", *in.framework,
                     core::join(serve::framework_names()) + ", optionally @VERSION (trtllm@1.1.0rc5)",
                     core::did_you_mean(name, serve::framework_names()));
    else sc.framework = *fw;
    if (at != std::string::npos) {
      sc.framework_version = in.framework->substr(at + 1);
      if (sc.framework_version.empty())
        d.error("framework", "no version after '@'", *in.framework, "NAME@VERSION, e.g. trtllm@1.1.0rc5");
    }
  }
  if (in.scheduler) {
    auto k = serve::parse_scheduler(*in.scheduler);
    if (!k) d.error("scheduler", "unknown scheduler", *in.scheduler, "static, decode-priority, prefill-priority");
    else sc.scheduler = *k;
  }
}

// Everything but the load: names, layout, scheduler overrides, speculation, timeouts.
// The comma-separated items of a --kv-tier value, in order (a trailing empty item dropped).
std::vector<std::string> kv_tier_items(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) items.push_back(item);
  return items;
}

// "host:SIZE", "ssd:SIZE" or both, comma-separated (KV offload below the prefix cache, per
// engine): the sizes into `sc`, or diagnostics on kv_tier.
void parse_kv_tiers(const std::string& text, serve::ServeScenario& sc, core::Diagnostics& d) {
  const std::string expected = "host:SIZE, ssd:SIZE or both, comma-separated, e.g. host:512GiB,ssd:4TiB (per engine)";
  std::set<std::string> seen;
  if (!text.empty() && text.back() == ',') return d.error("kv_tier", "ends with a comma", config::brief(text), expected);
  for (const std::string& item : kv_tier_items(text)) {
    const std::size_t colon = item.find(':');
    const std::string tier = item.substr(0, colon);
    if (colon == std::string::npos) return d.error("kv_tier", "not a tier and a size", config::brief(item), expected);
    if (tier == "remote")
      return d.error("kv_tier", "a remote pool is shared by every engine", tier, "host or ssd here; --kv-pool remote:SIZE");
    if (tier != "host" && tier != "ssd") return d.error("kv_tier", "unknown tier", config::brief(tier), expected);
    if (!seen.insert(tier).second) return d.error("kv_tier", "tier given twice", tier, expected);
    const auto size = core::parse_quantity<core::Bytes>(item.substr(colon + 1));
    if (!size) return d.error("kv_tier", size.error(), config::brief(item.substr(colon + 1)), "a size such as 512GiB");
    if (!(size->base() >= 1.0 && size->base() <= core::limits::kKvTierBytes))
      return d.error("kv_tier", "out of range", config::brief(item.substr(colon + 1)), "a size from 1 B to 1 PiB");
    (tier == "host" ? sc.kv_host : sc.kv_ssd) = *size;
  }
  if (seen.empty()) d.error("kv_tier", "names no tier", config::brief(text), expected);
}

// "remote:SIZE" (KV offload to a pool over the scale-out network, shared by every engine).
void parse_kv_pool(const std::string& text, serve::ServeScenario& sc, core::Diagnostics& d) {
  const std::string expected = "remote:SIZE, e.g. remote:100TiB (one pool for every engine)";
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos || text.substr(0, colon) != "remote")
    return d.error("kv_pool", "not a remote pool and its size", config::brief(text), expected);
  const auto size = core::parse_quantity<core::Bytes>(text.substr(colon + 1));
  if (!size) return d.error("kv_pool", size.error(), config::brief(text.substr(colon + 1)), "a size such as 100TiB");
  if (!(size->base() >= 1.0 && size->base() <= core::limits::kKvPoolBytes))
    return d.error("kv_pool", "out of range", config::brief(text.substr(colon + 1)), "a size from 1 B to 1 EiB");
  sc.kv_remote = *size;
}

serve::ServeScenario scenario_without_load(const ServeInputs& in, core::Diagnostics& d) {
  serve::ServeScenario sc;
  sc.system = in.system.value_or("");
  sc.model = in.model.value_or("");
  if (!in.model) d.error("model", "required", "", "a model id or a path to a config.json");
  resolve_names(in, sc, d);
  sc.chips = in.chips.value_or(sc.chips);
  sc.tp = static_cast<int>(in.tp.value_or(sc.tp));
  sc.pp = static_cast<int>(in.pp.value_or(sc.pp));
  sc.ep = static_cast<int>(in.ep.value_or(sc.ep));
  sc.attention_dp = in.attention_dp.value_or(sc.attention_dp);
  if (in.moe_load_imbalance) sc.moe_load_imbalance = in.moe_load_imbalance;
  sc.precision = in.precision.value_or(sc.precision);
  sc.allow_fallback = in.allow_fallback.value_or(sc.allow_fallback);
  sc.weight_precision = in.weight_precision.value_or(sc.weight_precision);
  sc.kv_precision = in.kv_precision.value_or(sc.kv_precision);
  sc.state_precision = in.state_precision.value_or(sc.state_precision);
  if (in.chunked_prefill) sc.chunked_prefill = *in.chunked_prefill;
  if (in.prefix_cache) sc.prefix_caching = *in.prefix_cache;
  sc.prefix_cache_tokens = in.prefix_cache_tokens.value_or(0);
  if (in.kv_tier) parse_kv_tiers(*in.kv_tier, sc, d);
  if (in.kv_pool) parse_kv_pool(*in.kv_pool, sc, d);
  sc.max_num_seqs = in.max_num_seqs.value_or(sc.max_num_seqs);
  sc.max_batched_tokens = in.max_batched_tokens.value_or(sc.max_batched_tokens);
  sc.static_batch = in.static_batch.value_or(sc.static_batch);
  sc.block_size = in.block_size.value_or(sc.block_size);
  sc.compiled_seq_len = in.compiled_seq_len.value_or(sc.compiled_seq_len);
  sc.prefill_chips = in.prefill_chips.value_or(sc.prefill_chips);
  sc.decode_chips = in.decode_chips.value_or(sc.decode_chips);
  sc.prefill_system = in.prefill_system.value_or("");
  sc.decode_system = in.decode_system.value_or("");
  sc.draft_len = static_cast<int>(in.draft_len.value_or(sc.draft_len));
  sc.acceptance = in.acceptance.value_or(sc.acceptance);
  sc.draft_model = in.draft_model.value_or(sc.draft_model);
  // Speculative decoding runs only with draft tokens: its other settings alone would be dropped.
  // An explicit draft_len 0 (a sweep's baseline point) says so and keeps them.
  if (!in.draft_len) {
    if (in.acceptance) d.error("acceptance", "needs speculative decoding", core::fmt_num(*in.acceptance), "--draft-len K > 0 with it");
    if (in.draft_model) d.error("draft_model", "needs speculative decoding", *in.draft_model, "--draft-len K > 0 with it");
  }
  sc.load.in_len = in.in_len.value_or(sc.load.in_len);
  sc.load.out_len = in.out_len.value_or(sc.load.out_len);
  sc.load.lengths_stated = in.in_len.has_value() || in.out_len.has_value();
  sc.load.requests = in.requests.value_or(kDefaultRequests);
  if (in.seed) sc.load.seed = static_cast<std::uint64_t>(*in.seed);
  sc.timeout = in.timeout.value_or(sc.timeout);
  sc.ttft_slo = in.ttft_slo.value_or(sc.ttft_slo);
  sc.tpot_slo = in.tpot_slo.value_or(sc.tpot_slo);
  sc.pue = in.pue;
  return sc;
}

// A whole field as a finite number (no unit, no trailing characters).
bool parse_plain_number(const std::string& text, double& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(out);
}

// "FROM..TO": two times in seconds of the file's clock, FROM < TO.
void parse_window(const std::string& text, serve::TraceShaping& s, core::Diagnostics& d) {
  const std::size_t dots = text.find("..");
  double from = -1, to = -1;
  bool ok = dots != std::string::npos;
  if (ok) {
    const std::string a = text.substr(0, dots), b = text.substr(dots + 2);
    ok = parse_plain_number(a, from) && parse_plain_number(b, to) && from >= 0 && to > from;
  }
  if (!ok) {
    d.error("arrivals_window", "not a window", text, "FROM..TO in seconds of the file's clock, 0 <= FROM < TO (e.g. 600..1200)");
    return;
  }
  s.window_from_s = from;
  s.window_to_s = to;
}

// The trace's rows: read, cut and scaled, their prefix blocks checked at the block size.
void read_arrivals(const ServeInputs& in, serve::LoadSpec& load) {
  const std::string& file = *in.arrivals;
  load.arrival = serve::ArrivalKind::Trace;
  load.lengths_stated = false;  // a trace's own lengths: requests beyond the context are clipped
  serve::ArrivalsFile arrivals = serve::read_arrivals_file(file);
  serve::TraceShaping shaping;
  core::Diagnostics d;
  if (in.arrivals_window) parse_window(*in.arrivals_window, shaping, d);
  d.throw_if_any();
  shaping.sample = in.arrivals_sample.value_or(0);
  shaping.speedup = in.arrivals_speedup.value_or(1.0);
  load.trace = serve::shape_trace(std::move(arrivals.requests), shaping, file);
  load.trace_block_tokens = in.arrivals_block_tokens.value_or(load.trace_block_tokens);
  serve::check_prefix_blocks(file, load);
  for (const auto& r : load.trace) {
    load.in_len = std::max(load.in_len, r.in_len);
    load.out_len = std::max(load.out_len, r.out_len);
  }
}

}  // namespace

namespace {

// The files a serving scenario names, read from beside it when they are there.
ServeInputs with_files_beside(ServeInputs in, const std::string& path) {
  resolve_beside(path, in.model);
  resolve_beside(path, in.draft_model);
  resolve_beside(path, in.arrivals, /*always_a_path=*/true);
  return in;
}

}  // namespace

ServeInputs read_serve_file(const std::string& path) {
  return with_files_beside(serve_inputs_from_json(load_scenario_document(path), path), path);
}

ServeInputs serve_inputs_from_json(const config::Json& doc, const std::string& path) {
  return read_doc(doc, path, [](config::FieldReader& r, ServeInputs& in) {
    if (const config::Json* plan = r.object("plan", false)) {
      config::FieldReader pr(*plan, "plan", r.diagnostics());
      read_plan_keys(pr, in);
      pr.finish();
    }
    if (const config::Json* workload = r.object("workload", false)) {
      config::FieldReader wr(*workload, "workload", r.diagnostics());
      read_workload_keys(wr, in);
      wr.finish();
    }
  });
}

ServeInputs read_flat_serve_file(const std::string& path) {
  return with_files_beside(read_doc(load_scenario_document(path), path,
                                    [](config::FieldReader& r, ServeInputs& in) {
                                      read_plan_keys(r, in);
                                      read_workload_keys(r, in);
                                    }),
                           path);
}

void fill_unset(ServeInputs& given, const ServeInputs& fallback) {
  auto fill = [](auto& dst, const auto& src) {
    if (!dst) dst = src;
  };
  for (auto [dst, src] : {std::pair{&given.system, &fallback.system}, {&given.model, &fallback.model},
                          {&given.prefill_system, &fallback.prefill_system},
                          {&given.decode_system, &fallback.decode_system},
                          {&given.framework, &fallback.framework}, {&given.precision, &fallback.precision},
                          {&given.weight_precision, &fallback.weight_precision},
                          {&given.kv_precision, &fallback.kv_precision},
                          {&given.state_precision, &fallback.state_precision}, {&given.scheduler, &fallback.scheduler},
                          {&given.draft_model, &fallback.draft_model}, {&given.arrivals, &fallback.arrivals},
                          {&given.arrivals_window, &fallback.arrivals_window}, {&given.kv_tier, &fallback.kv_tier},
                          {&given.kv_pool, &fallback.kv_pool}})
    fill(*dst, *src);
  for (auto [dst, src] : {std::pair{&given.chips, &fallback.chips}, {&given.tp, &fallback.tp}, {&given.pp, &fallback.pp},
                          {&given.ep, &fallback.ep}, {&given.max_num_seqs, &fallback.max_num_seqs},
                          {&given.max_batched_tokens, &fallback.max_batched_tokens},
                          {&given.static_batch, &fallback.static_batch}, {&given.block_size, &fallback.block_size},
                          {&given.prefill_chips, &fallback.prefill_chips}, {&given.decode_chips, &fallback.decode_chips},
                          {&given.draft_len, &fallback.draft_len},
                          {&given.compiled_seq_len, &fallback.compiled_seq_len},
                          {&given.in_len, &fallback.in_len}, {&given.out_len, &fallback.out_len},
                          {&given.requests, &fallback.requests}, {&given.concurrency, &fallback.concurrency},
                          {&given.seed, &fallback.seed}, {&given.prefix_cache_tokens, &fallback.prefix_cache_tokens},
                          {&given.arrivals_block_tokens, &fallback.arrivals_block_tokens},
                          {&given.arrivals_sample, &fallback.arrivals_sample}})
    fill(*dst, *src);
  for (auto [dst, src] : {std::pair{&given.attention_dp, &fallback.attention_dp},
                          {&given.chunked_prefill, &fallback.chunked_prefill}, {&given.offline, &fallback.offline},
                          {&given.allow_fallback, &fallback.allow_fallback}, {&given.prefix_cache, &fallback.prefix_cache}})
    fill(*dst, *src);
  for (auto [dst, src] : {std::pair{&given.timeout, &fallback.timeout}, {&given.ttft_slo, &fallback.ttft_slo},
                          {&given.tpot_slo, &fallback.tpot_slo}})
    fill(*dst, *src);
  fill(given.rate, fallback.rate);
  fill(given.acceptance, fallback.acceptance);
  fill(given.moe_load_imbalance, fallback.moe_load_imbalance);
  fill(given.arrivals_speedup, fallback.arrivals_speedup);
}

void check_flag_values(const ServeInputs& in, core::Diagnostics& d) {
  for (const auto& [flag, v] : {std::pair{"--chips", in.chips}, {"--tp", in.tp}, {"--pp", in.pp}, {"--ep", in.ep},
                                {"--max-num-seqs", in.max_num_seqs}, {"--max-batched-tokens", in.max_batched_tokens},
                                {"--static-batch", in.static_batch}, {"--block-size", in.block_size},
                                {"--prefill-chips", in.prefill_chips}, {"--decode-chips", in.decode_chips},
                                {"--compiled-seq-len", in.compiled_seq_len}, {"--in-len", in.in_len},
                                {"--out-len", in.out_len}, {"--requests", in.requests},
                                {"--concurrency", in.concurrency}, {"--prefix-cache-tokens", in.prefix_cache_tokens},
                                {"--arrivals-block-tokens", in.arrivals_block_tokens},
                                {"--arrivals-sample", in.arrivals_sample}})
    config::check_positive_count(d, flag, v);
  if (in.block_size && *in.block_size > core::limits::kKvBlockTokens)
    d.error("--block-size", "a KV page beyond what serving engines use", std::to_string(*in.block_size),
            "1 to " + std::to_string(core::limits::kKvBlockTokens) + " tokens (the range of serving.frameworks.*.block_size)");
  config::check_non_negative_count(d, "--draft-len", in.draft_len);
  config::check_non_negative_count(d, "--seed", in.seed);
  config::check_positive_number(d, "--rate", in.rate);
  config::check_positive_number(d, "--arrivals-speedup", in.arrivals_speedup);
  config::check_fraction(d, "--acceptance", in.acceptance);
  check_overrides(in.overrides, d);
  check_pue(in.pue, d);
}

serve::ServeScenario build_serve(const ServeInputs& in) {
  core::Diagnostics d;
  const bool hetero = in.prefill_system || in.decode_system;
  if (!in.system && !hetero) d.error("system", "required", "", "a catalog id (xpusim catalog lists them)");
  if (in.system && hetero)
    d.error("system", "give either --system or --prefill-system/--decode-system", *in.system,
            "the pools' systems only");
  if (!hetero && in.decode_chips)
    d.error("decode_chips", "needs --prefill-system and --decode-system", std::to_string(*in.decode_chips),
            "--chips and --prefill-chips for pools of one system");
  serve::ServeScenario sc = scenario_without_load(in, d);
  const int loads = in.rate.has_value() + in.concurrency.has_value() + in.offline.value_or(false) +
                    in.arrivals.has_value();
  if (loads > 1) d.error("load", "choose one of rate, concurrency, offline, arrivals");
  if (in.arrivals && in.requests)
    d.error("requests", "an arrivals file's rows are its requests", std::to_string(*in.requests),
            "no --requests with --arrivals (cut the file to the rows you want)");
  if (!in.arrivals && in.arrivals_block_tokens)
    d.error("arrivals_block_tokens", "needs an arrivals file", std::to_string(*in.arrivals_block_tokens),
            "--arrivals FILE whose rows carry prefix_hashes");
  if (!in.arrivals && (in.arrivals_window || in.arrivals_sample || in.arrivals_speedup))
    d.error(in.arrivals_window ? "arrivals_window" : in.arrivals_sample ? "arrivals_sample" : "arrivals_speedup",
            "needs an arrivals file", "", "--arrivals FILE");
  d.throw_if_any();
  auto& load = sc.load;
  if (in.arrivals) {
    read_arrivals(in, load);
  } else if (in.concurrency) {
    load.arrival = serve::ArrivalKind::ClosedLoop;
    load.concurrency = *in.concurrency;
  } else if (in.rate) {
    load.arrival = serve::ArrivalKind::Poisson;
    load.rate_per_s = *in.rate;
  } else {
    load.arrival = serve::ArrivalKind::Offline;
  }
  return sc;
}

namespace {

// The heterogeneous search chooses the pools: both systems named, no pool sizes (the prefill pool
// and --chips: apply_stated_layout), no --system.
void check_hetero_search(const ServeInputs& in, bool compare, core::Diagnostics& d) {
  if (!in.prefill_system || !in.decode_system)
    d.error(in.prefill_system ? "decode_system" : "prefill_system", "the heterogeneous search needs both systems", "",
            "--prefill-system A --decode-system B");
  if (compare) d.error("compare", "not with --prefill-system/--decode-system", "", "--search");
  if (in.system)
    d.error("system", "give either --system or --prefill-system/--decode-system", *in.system, "the pools' systems only");
  if (in.decode_chips)
    d.error("decode_chips", "chosen by the search", std::to_string(*in.decode_chips), "no --decode-chips");
  if (in.pp && *in.pp != 1)
    d.error("pp", "the heterogeneous search runs one pipeline stage", std::to_string(*in.pp), "no --pp, or 1");
}

// A trace load as the flags that state it: the file and how it was cut, scaled and cached.
std::string arrivals_flags(const ServeInputs& in) {
  std::string f = "--arrivals " + *in.arrivals;
  if (in.arrivals_window) f += " --arrivals-window " + *in.arrivals_window;
  if (in.arrivals_sample) f += " --arrivals-sample " + std::to_string(*in.arrivals_sample);
  if (in.arrivals_speedup) f += " --arrivals-speedup " + core::fmt_num(*in.arrivals_speedup, 6);
  if (in.arrivals_block_tokens) f += " --arrivals-block-tokens " + std::to_string(*in.arrivals_block_tokens);
  if (in.prefix_cache) f += std::string(" --prefix-cache ") + (*in.prefix_cache ? "on" : "off");
  if (in.prefix_cache_tokens) f += " --prefix-cache-tokens " + std::to_string(*in.prefix_cache_tokens);
  if (in.kv_tier) f += " --kv-tier " + *in.kv_tier;
  if (in.kv_pool) f += " --kv-pool " + *in.kv_pool;
  return f;
}

// What the user states of the layout narrows the search, and what the search chooses (the chips,
// the pools) cannot be stated: --tp, --ep, --pp, --dp-attention and --max-num-seqs are kept;
// --chips, --prefill-chips and a closed or offline load (--concurrency, --offline) are refused
// rather than ignored.
void apply_stated_layout(const ServeInputs& in, serve::SearchSpec& ss, core::Diagnostics& d) {
  // The search serves --rate as Poisson arrivals, or a trace; another load would be dropped.
  const char* poisson = "--rate (served as Poisson arrivals) or --arrivals FILE";
  if (in.concurrency) d.error("concurrency", "not a load the search serves", std::to_string(*in.concurrency), poisson);
  if (in.offline.value_or(false)) d.error("offline", "not a load the search serves", "true", poisson);
  if (in.arrivals && in.rate)
    d.error("rate", "an arrivals file sets the rate", core::fmt_num(*in.rate), "--rate or --arrivals, not both");
  if (in.chips) d.error("chips", "chosen by the search", std::to_string(*in.chips), "no --chips (it finds the fewest)");
  if (in.prefill_chips)
    d.error("prefill_chips", "chosen by the search", std::to_string(*in.prefill_chips), "no --prefill-chips");
  const bool dp = in.attention_dp.value_or(false);
  if (dp && in.tp && *in.tp != 1) d.error("tp", "DP attention needs tp = 1", std::to_string(*in.tp), "no --tp, or 1");
  if (dp && in.pp && *in.pp != 1)
    d.error("pp", "DP attention runs one pipeline stage", std::to_string(*in.pp), "no --pp, or 1");
  if (in.pp) ss.pp_candidates = {static_cast<int>(*in.pp)};
  if (in.moe_load_imbalance && !in.ep)
    d.error("moe_load_imbalance", "the imbalance is over the expert-parallel ranks: state --ep with it",
            core::fmt_num(*in.moe_load_imbalance), "--ep N with N > 1");
  if (in.tp && !dp) ss.tp_candidates = {static_cast<int>(*in.tp)};
  if (in.ep) ss.ep_candidates = {static_cast<int>(*in.ep)};
  if (in.max_num_seqs) ss.max_num_seqs_candidates = {*in.max_num_seqs};
  if (in.attention_dp) {
    ss.try_dp_attention = dp;
    ss.try_tp_attention = !dp;
  } else if (in.tp && *in.tp > 1) {
    ss.try_dp_attention = false;  // a stated tp > 1 is tensor-parallel attention
  }
}

}  // namespace

serve::SearchSpec build_search(const ServeInputs& in, bool compare) {
  core::Diagnostics d;
  const bool hetero = in.prefill_system || in.decode_system;
  if (!in.system && !compare && !hetero) d.error("system", "required", "", "a catalog id (xpusim catalog lists them)");
  serve::SearchSpec ss;
  ss.base = scenario_without_load(in, d);
  if (!in.rate && !in.arrivals) d.error("rate", "--search and --compare need --rate or --arrivals", "", "requests per second");
  if (hetero) check_hetero_search(in, compare, d);
  apply_stated_layout(in, ss, d);
  d.throw_if_any();
  ss.ttft_p90_slo = ss.base.ttft_slo;
  ss.tpot_p90_slo = ss.base.tpot_slo;
  if (in.arrivals) {
    read_arrivals(in, ss.base.load);
    const auto& trace = ss.base.load.trace;
    const double rate = serve::trace_rate_per_s(trace);
    ss.rate_per_s = rate > 0 ? rate : 1.0;
    ss.requests = std::min<long long>(static_cast<long long>(trace.size()), kMaxSearchRequests);
    ss.load_flags = arrivals_flags(in);
    return ss;
  }
  ss.rate_per_s = *in.rate;
  ss.base.load.arrival = serve::ArrivalKind::Poisson;
  ss.base.load.rate_per_s = *in.rate;
  ss.requests = std::min<long long>(ss.base.load.requests, kMaxSearchRequests);
  return ss;
}

std::vector<WithoutTier> without_each_offload_tier(const ServeInputs& in) {
  std::vector<WithoutTier> out;
  const std::vector<std::string> items = in.kv_tier ? kv_tier_items(*in.kv_tier) : std::vector<std::string>{};
  for (const char* tier : {"host", "ssd"}) {
    const std::string prefix = std::string(tier) + ":";
    std::vector<std::string> rest;
    for (const auto& item : items)
      if (item.rfind(prefix, 0) != 0) rest.push_back(item);
    if (rest.size() == items.size()) continue;
    WithoutTier w{tier, in};
    w.inputs.kv_tier = rest.empty() ? std::nullopt : std::optional<std::string>(core::join(rest, ","));
    out.push_back(std::move(w));
  }
  if (in.kv_pool) {
    WithoutTier w{"remote", in};
    w.inputs.kv_pool.reset();
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace xpusim::scenario
