#pragma once
// A serving scenario as the user wrote it (flags or a YAML/JSON scenario file) and its
// resolution into a serve::ServeScenario (one run) or a serve::SearchSpec (--search/--compare).
//
// Scenario file shape (docs/scenarios.md), shared with training:
//   system, model, chips, framework, description, prefill_system, decode_system
//   plan:     tp, pp, ep, attention_dp, precision, allow_fallback, weight_precision, kv_precision, state_precision, scheduler,
//             max_num_seqs, max_batched_tokens, static_batch, block_size, chunked_prefill,
//             compiled_seq_len,
//             prefill_chips, decode_chips, draft_len, acceptance, draft_model, moe_load_imbalance,
//             prefix_cache, prefix_cache_tokens, kv_tier, kv_pool
//   workload: in_len, out_len, requests, seed, one of rate / concurrency / offline / arrivals,
//             arrivals_block_tokens, arrivals_window, arrivals_sample, arrivals_speedup,
//             timeout, ttft_slo, tpot_slo

#include <optional>
#include <string>
#include <vector>

#include "xpusim/config/document.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/scenario/overrides.h"
#include "xpusim/serve/scenario.h"
#include "xpusim/serve/search.h"

namespace xpusim::scenario {

/// Every input optional: unset means "the documented default", never 0.
struct ServeInputs {
  std::optional<std::string> system, model, framework;
  std::optional<std::string> prefill_system, decode_system;  ///< heterogeneous pools (docs/fusion.md)
  std::optional<long long> chips;
  // plan:
  std::optional<long long> tp, pp, ep, max_num_seqs, max_batched_tokens, static_batch, block_size;
  std::optional<long long> prefill_chips, decode_chips, draft_len;
  std::optional<long long> compiled_seq_len;  ///< Neuron static shapes: the compiled sequence length
  std::optional<bool> attention_dp, chunked_prefill, allow_fallback;
  std::optional<bool> prefix_cache;              ///< prefix caching on or off (default: the framework's)
  std::optional<long long> prefix_cache_tokens;  ///< the cache per engine (default: its KV cache)
  /// KV offload: "host:SIZE", host memory per engine for the blocks the prefix cache evicts.
  std::optional<std::string> kv_tier;
  std::optional<std::string> kv_pool;  ///< "remote:SIZE": KV offload to a pool all engines share
  std::optional<std::string> precision, weight_precision, kv_precision, state_precision, scheduler, draft_model;
  std::optional<double> acceptance;
  std::optional<double> moe_load_imbalance;  ///< serve::ServeScenario::moe_load_imbalance
  // workload:
  std::optional<long long> in_len, out_len, requests, concurrency, seed;
  std::optional<double> rate;
  std::optional<bool> offline;
  std::optional<std::string> arrivals;  ///< CSV file arrival_s,in_len,out_len[,prefix_hashes][,session_id,turn]
  std::optional<long long> arrivals_block_tokens;  ///< tokens per prefix_hashes block (default 512)
  /// The trace cut and scaled (serve::TraceShaping): "FROM..TO" seconds of the file's clock,
  /// every (n / N)-th row, arrival times divided by the speedup.
  std::optional<std::string> arrivals_window;
  std::optional<long long> arrivals_sample;
  std::optional<double> arrivals_speedup;
  std::optional<core::Seconds> timeout, ttft_slo, tpot_slo;
  EstimateOverrides overrides;  ///< --price, --tdp (flags only): apply_overrides() on the catalog
  std::optional<double> pue;    ///< --pue (flag only): site PUE (default reliability.facility.pue)
};

/// Reads a scenario file (nested plan: and workload:). Errors carry the file and key path.
ServeInputs read_serve_file(const std::string& path);
/// The same keys from a document already read (a sweep point, a Python call); `path` names the
/// source in diagnostics (a file, or empty).
ServeInputs serve_inputs_from_json(const config::Json& doc, const std::string& path);
/// Reads the flat keys of the deprecated `serve --config` file (tp, rate, ... at the top).
ServeInputs read_flat_serve_file(const std::string& path);

/// Fills every unset field of `given` from `fallback` (flags given on the command line win).
void fill_unset(ServeInputs& given, const ServeInputs& fallback);

/// Judges the values of flags (paths "--tp", "--rate", ...) with the checks a file's values get.
void check_flag_values(const ServeInputs& in, core::Diagnostics& d);

/// The scenario of one run: names checked, the one load chosen (arrivals, concurrency, rate,
/// else offline), an arrivals file read. InputError on bad input.
serve::ServeScenario build_serve(const ServeInputs& in);

/// The plan search of --search / --compare (needs a rate; any other load is ignored; the
/// system is required unless `compare`, which names its own systems).
serve::SearchSpec build_search(const ServeInputs& in, bool compare);

/// One KV offload tier the inputs name ("host", "ssd" of --kv-tier; "remote" of --kv-pool) and
/// the same inputs without it: what a search on a trace sets beside its answer.
struct WithoutTier {
  std::string tier;
  ServeInputs inputs;
};
/// Every offload tier the inputs name, in lookup order (host, ssd, remote), each left out once.
std::vector<WithoutTier> without_each_offload_tier(const ServeInputs& in);

}  // namespace xpusim::scenario
