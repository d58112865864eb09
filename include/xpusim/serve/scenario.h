#pragma once
// A serving scenario by names (system, model, layout, precision, framework, scheduler, load),
// resolved against the catalog and the model files into step-cost models and a simulation,
// and the report a user reads: throughput, latency percentiles, KV and batch over time,
// goodput, timeouts, energy and cost. The CLI, the validation predictor and plan search all
// go through run_scenario().

#include <optional>
#include <string>
#include <vector>

#include "xpusim/core/result.h"
#include "xpusim/core/units.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/net/fusion.h"
#include "xpusim/serve/framework.h"
#include "xpusim/serve/simulator.h"

namespace xpusim::serve {

struct ServeScenario {
  std::string system;            ///< catalog id
  std::string model;             ///< model id or path to a config.json
  long long chips = 0;           ///< total chips (0 = one engine's worth)
  int tp = 0;                    ///< 0 = smallest power of two that leaves room for the KV cache
  int pp = 1;
  int ep = 1;
  bool attention_dp = false;     ///< DP attention + EP experts (tp must be 1)
  /// Mixture of experts: tokens the busiest expert-parallel rank receives over the mean (empty:
  /// 1, balanced routing; needs ep > 1, at most ep).
  std::optional<double> moe_load_imbalance;
  std::string precision = "bf16";       ///< matmul precision
  std::string weight_precision;         ///< empty = precision (int8/fp8 weight-only: set this)
  std::string kv_precision;             ///< empty = fp8 for fp8/fp4 math, else bf16
  std::string state_precision = "bf16";  ///< a hybrid's Mamba-2 state: bf16 or fp32 (vLLM --mamba-ssm-cache-dtype)
  /// A matmul precision the chip has no peak for: false, an error listing the chip's precisions;
  /// true, the weights are stored in it and the matmuls run in the nearest precision the chip
  /// has (compute::executed_dtype), stated in the report's assumptions.
  bool allow_fallback = false;
  std::optional<Framework> framework;   ///< empty = default for the chip
  std::string framework_version;        ///< e.g. "0.6.1" (version-specific kernels); empty = current
  bool overlap_ep_comm = false;         ///< two-batch overlap of the EP all-to-all
  long long compiled_seq_len = 0;       ///< Neuron static shapes: decode attends over this bucket
  // Scheduler overrides (empty / 0 = the framework's default).
  std::optional<SchedulerKind> scheduler;
  std::optional<KvPolicy> kv_policy;
  std::optional<bool> chunked_prefill;
  std::optional<bool> prefix_caching;   ///< empty = the framework's default
  long long prefix_cache_tokens = 0;    ///< per engine; 0 = the engine's KV cache
  /// KV offload to host memory: bytes of host memory per engine for the blocks the prefix cache
  /// evicts (0 = none; needs prefix caching). docs/serving.md, "KV offload to host memory".
  core::Bytes kv_host;
  /// KV offload to local SSD: bytes of NVMe per engine for the blocks the host tier (or, without
  /// one, the prefix cache) evicts (0 = none). docs/serving.md, "KV offload to local SSD".
  core::Bytes kv_ssd;
  /// KV offload to a remote pool over the scale-out network, shared by every engine (bytes in all;
  /// 0 = none). docs/serving.md, "KV offload to a remote pool".
  core::Bytes kv_remote;
  long long max_num_seqs = 0, max_batched_tokens = 0, static_batch = 0, block_size = 0;
  LoadSpec load;
  long long prefill_chips = 0;   ///< > 0: disaggregated, this many chips prefill, the rest decode
  /// Heterogeneous disaggregation (docs/fusion.md): prefill on prefill_chips chips of
  /// prefill_system, decode on decode_chips chips of decode_system; chips = their sum. Both
  /// systems set, or neither.
  std::string prefill_system, decode_system;
  long long decode_chips = 0;
  int draft_len = 0;             ///< speculative decoding: tokens drafted per step (0 = off)
  double acceptance = 0.7;       ///< per-token acceptance
  std::string draft_model;       ///< draft model id/path (empty = heads on the target, no cost)
  core::Seconds timeout = core::seconds(60);
  core::Seconds ttft_slo = core::seconds(2);
  core::Seconds tpot_slo = core::milliseconds(200);
  bool trace = false;            ///< record the serving timeline (SimResult::trace, bounded)
  std::optional<double> pue;     ///< site power usage effectiveness; empty = reliability.facility.pue
  /// Every field equal: the same run (validation::ServeRunCache runs it once).
  bool operator==(const ServeScenario&) const = default;
};

struct ServeEnv {
  const hw::Catalog* catalog = nullptr;
  std::string models_dir;
  const calib::Params* calibration = nullptr;  ///< fitted and assumed parameters; must be set
};

/// One pool of a heterogeneous run: its system, chips and what it did.
struct PoolReport {
  std::string role;             ///< "prefill" or "decode"
  std::string system, framework;
  long long chips = 0;
  int engines = 0;
  double utilisation = 0;       ///< busy engine time over engines x duration
  double energy_j = 0;          ///< the pool's chips, with their overhead power
  double dollars = 0;
  double power_per_chip_w = 0;
  ReplicaMemory memory;         ///< per chip
};

/// The software range of a Trainium forecast (serve/software_range.h, docs/serving.md).
/// One end of the range: the run's headline figures and the software it assumed.
struct SoftwareEnd {
  std::string software;    ///< "optimum-neuron <1 (slowest validated Neuron stack on this load)"
  std::string stack;       ///< the same, short: "optimum-neuron <1", "neuron-nxdi with GPU-grade serving software"
  double ttft_mean_ms = 0, tpot_mean_ms = 0;
  double ttft_p90_ms = 0, tpot_p90_ms = 0;
  double output_tokens_per_s_per_chip = 0;
  double e2e_mean_s = 0;
};

struct SoftwareRange {
  std::string central;     ///< the stack the forecast assumed ("neuron-nxdi >=2.21,<3")
  SoftwareEnd low, high;   ///< the slowest validated Neuron stack; GPU-grade serving software
};

/// The share of requests past the endpoint timeout above which a run is reported as overloaded.
inline constexpr double kTimedOutWarningShare = 0.01;

struct ServeReport {
  ServeScenario scenario;               ///< with every default filled in
  std::vector<std::string> assumptions; ///< defaults chosen and why
  /// What makes the run's figures unlike a healthy deployment's (load_warnings): requests past
  /// the endpoint timeout, an offered rate beyond what the run completes.
  std::vector<std::string> warnings;
  std::string framework;
  /// The software modelled (FrameworkProfile): the version stated (empty: none, the default
  /// range applies), its range, and whether measurements stand behind that range.
  std::string framework_version, framework_version_range;
  bool framework_version_validated = true;
  ReplicaMemory memory;                 ///< per chip of a (prefill) engine
  int engines = 0, decode_engines = 0;
  long long chips_used = 0;
  SimResult sim;
  /// Open-loop runs (Poisson, trace): the sustained capacity, the offline throughput of the same
  /// engines on the same length mix (requests/s; 0 when not measured), and whether the offered
  /// rate exceeds it. An overloaded run reports its throughput over the whole run, drain included.
  double capacity_requests_per_s = 0;
  bool overloaded = false;
  /// Open-loop runs: the rate the arrivals offered (a Poisson run's drawn arrivals over its
  /// steady-state window, a trace's requests over its span; 0 for closed loops and offline runs).
  double offered_requests_per_s = 0;
  /// Prefix caching (a trace with prefix_hashes and the cache on): its block size and capacity
  /// per engine in tokens; the hits are sim.prefix.
  bool prefix_caching = false;
  long long prefix_block_tokens = 0, prefix_cache_tokens_per_engine = 0;
  long long kv_host_tokens_per_engine = 0;  ///< the host tier (KV offload); 0 = none
  long long kv_ssd_tokens_per_engine = 0;   ///< the local-SSD tier (KV offload); 0 = none
  long long kv_remote_tokens = 0;           ///< the remote pool (KV offload), all engines; 0 = none
  long long model_context = 0;  ///< the model config's max positions (0: not stated)
  double output_tokens_per_s_per_chip = 0;
  double goodput_requests_per_s = 0;
  double joules_per_output_token = 0;
  double pue = 1;                        ///< site power usage effectiveness used
  double site_joules_per_output_token = 0;  ///< joules_per_output_token x pue (the building's share)
  double dollars_per_million_output_tokens = 0;
  double power_per_chip_w = 0;
  bool energy_estimated = true, price_estimated = true;
  StepCost sample_decode_step;          ///< one decode step at the mean batch (breakdown)
  StepCost sample_prefill_step;         ///< one whole prompt of in_len tokens alone (breakdown)
  // Heterogeneous disaggregation only (pools empty otherwise).
  std::vector<PoolReport> pools;        ///< prefill, decode
  net::CrossLink kv_link;               ///< the link the KV caches crossed
  double kv_bytes_per_token_per_chip = 0;
  double kv_bytes_total = 0;            ///< all chips, the whole run
  double kv_transfer_mean_ms = 0;       ///< per request
  /// A Trainium run's software range (serve::software_range; set by single runs, not searches).
  std::optional<SoftwareRange> software_range;
};

/// Why a scenario cannot run (expected infeasibility, exit 1): the memory breakdown.
struct Infeasible {
  std::string reason;
};

/// Resolves and simulates. Bad names or layouts throw core::InputError (with the closest
/// match); a model that does not fit returns an error holding the memory breakdown.
core::Result<ServeReport> run_scenario(const ServeScenario& sc, const ServeEnv& env);

/// The default tp: the smallest power of two (dividing the heads and `chips`, at most the
/// chips) whose weights take at most `max_weight_share` of a chip's HBM
/// (serving.defaults.max_weight_share_of_hbm), as run_scenario fills it.
int default_tp(const hw::SystemSpec& sys, const workload::ModelSpec& m, core::Dtype weights,
               long long chips, bool attention_dp, double max_weight_share);

/// Dtype from a precision name; InputError naming `path` with the valid names.
core::Dtype precision_dtype(const std::string& name, const std::string& path);

}  // namespace xpusim::serve
