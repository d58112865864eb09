#pragma once
// Serving frameworks: the few global, documented parameters of each framework family that the
// step-cost model needs (per-step host overhead, per-layer overhead, kernel efficiencies), and
// the scheduler defaults a user of that framework gets. Values and how they were fitted:
// docs/serving.md, "Framework parameters". Never keyed on a model, a row or a source.

#include <optional>
#include <string>
#include <vector>

#include "xpusim/calib/params.h"
#include "xpusim/compute/calibration.h"
#include "xpusim/core/units.h"
#include "xpusim/hw/spec.h"

namespace xpusim::serve {

/// NeuronOptimum (Hugging Face optimum-neuron) and NeuronVllm (the vLLM Neuron plugin) serve
/// through NxD Inference models with their own releases, defaults and front ends.
enum class Framework { TensorRtLlm, Vllm, Nim, Sglang, NeuronTnx, NeuronNxdi, NeuronOptimum, NeuronVllm };
/// A Neuron stack: compiled static-shape graphs, heads padded to tp.
bool is_neuron(Framework f);

/// "trtllm", "vllm", "nim", "sglang", "neuron-tnx", "neuron-nxdi".
std::string framework_name(Framework f);
std::optional<Framework> parse_framework(const std::string& name);
std::vector<std::string> framework_names();
/// The framework a user of this chip gets by default: TensorRT-LLM on NVIDIA, NxDI on Trainium.
Framework default_framework(const hw::ChipSpec& chip);

/// How the engine forms batches.
enum class SchedulerKind {
  StaticBatch,     ///< fixed batch, prefill all then decode until the longest finishes
  DecodePriority,  ///< continuous batching, decodes first then prefill chunks in the budget
  PrefillPriority  ///< continuous batching, a prefill-only step whenever a request is admissible
};
std::string scheduler_name(SchedulerKind k);
std::optional<SchedulerKind> parse_scheduler(const std::string& name);

/// KV admission policy.
enum class KvPolicy {
  Reserve,   ///< reserve prompt + max output at admission (TRT-LLM GUARANTEED_NO_EVICT)
  OnDemand   ///< allocate blocks as tokens arrive; preempt (recompute) the newest when full (vLLM)
};

struct FrameworkProfile {
  Framework framework = Framework::TensorRtLlm;
  /// The software stack modelled: the version stated (empty: none), the range that applies and
  /// whether measurements stand behind it (data/calibration/stacks/serving.yaml).
  std::string version;
  std::string version_range;
  bool version_validated = true;
  /// Serving-kernel efficiencies replacing the compute layer's training-fitted calibration
  /// (fraction of dense peak for GEMMs, extra factor for low precision, flash attention,
  /// HBM streaming) and the per-kernel overhead (launch; ~0 under CUDA graphs / compiled NEFFs).
  compute::Calibration calibration;
  /// Extra factor on the math rate of prompt (context-encoding) steps: unfused prefill kernels
  /// and context-encoding graph quality on Neuron (the bucket padding is StaticShapes'); 1
  /// elsewhere.
  /// It scales the math rate only (GEMM and attention FLOPs), not weight streaming: a short
  /// prompt stays bound by reading the weights.
  double prefill_efficiency = 0;
  /// Fixed cost of a step that runs a prompt (context encoding): on Neuron the context graph is
  /// a separate compiled NEFF and the host pads the prompt to its bucket and lays out the KV
  /// cache for the decode graph. 0 where prompts share the decode step's graph (GPUs).
  core::Seconds prefill_step_overhead;
  /// Decode attention reads each KV head once for its whole query group (GQA-aware kernels:
  /// TensorRT-LLM XQA from v0.7, FlashInfer, vLLM paged attention v2). False: once per query
  /// head (TensorRT-LLM masked MHA before v0.7: the stack table's setting).
  bool gqa_kv_sharing = true;
  /// Expert-parallel all-to-all overlapped with compute (SGLang/DeepEP two-batch overlap):
  /// a step costs max(compute, communication) instead of their sum.
  bool overlap_ep_comm = false;
  /// The host forms the next step while the current one runs (SchedulerSpec::schedule_ahead).
  bool schedule_ahead = false;
  /// MoE decode: experts no token routes to are skipped (grouped GEMMs over the routed experts
  /// only, NxDI selective loading); false: every local expert's weights stream every step.
  bool moe_skip_idle_experts = true;
  /// Prefix caching on by default (vLLM's automatic prefix caching, SGLang's RadixAttention,
  /// TensorRT-LLM's KV block reuse): SchedulerSpec::prefix_caching.
  bool prefix_caching = false;
  /// Loads from the KV offload tiers run layer by layer beside the step's compute (SGLang
  /// HiCache): SchedulerSpec::layerwise_kv_load.
  bool kv_load_layerwise = false;
  /// MoE prompts (context encoding) on compiled blockwise kernels: each routed expert's rows
  /// padded up to whole blocks of this many rows, at moe_prefill_efficiency of the prompt math
  /// rate (Neuron stacks); 0: routed rows only.
  long long moe_prefill_block = 0;
  long long max_prefill_seqs = 0;  ///< prompts per step (SchedulerSpec::max_prefill_seqs)
  double moe_prefill_efficiency = 1.0;
  /// Token routing per MoE layer and step: the HBM bytes each routed element (tokens × top-k ×
  /// hidden) moves through the permute and unpermute kernels (serving.moe.route_bytes_per_element),
  /// timed at the chip's achievable HBM rate.
  core::Bytes moe_route_bytes_per_element;
  core::Seconds step_overhead;   ///< per engine iteration: scheduling, sampling, host sync
  /// Host time per operator of a step that runs outside CUDA graphs (one with prompt tokens):
  /// Python dispatch and kernel launches, issued while the device runs (only the part the
  /// device time does not cover is exposed, as host_time_per_sequence's).
  core::Seconds eager_operator_host_time;
  /// Operators a routed-expert layer's prompt step dispatches from the host beyond the layer
  /// model's (routing, activation quantisation, token permutation and their reductions, which
  /// workload::layer_ops folds into its router and dispatch operators), each at
  /// eager_operator_host_time; 0 where the stack compiles or fuses them.
  double moe_eager_operators = 0;
  core::Seconds layer_overhead;  ///< per layer per iteration (collective launch/sync latency)
  /// Host work per running sequence per iteration (the executor loop's bookkeeping, sampling
  /// and responses). The host prepares step n+1 while the device runs step n, so a step takes
  /// max(device time, host time) + step_overhead. 0 where the device always dominates.
  core::Seconds host_time_per_sequence;
  // Scheduler defaults a user of this framework gets.
  SchedulerKind scheduler = SchedulerKind::DecodePriority;
  KvPolicy kv_policy = KvPolicy::Reserve;
  bool chunked_prefill = true;
  long long max_num_seqs = 0;
  long long max_batched_tokens = 0;
  long long block_size = 0;      ///< KV page size in tokens
  /// On-demand KV admission: the share of every running sequence's remaining output limit a new
  /// request must leave room for (SGLang's new_token_ratio); 0 = room for its prompt only.
  double new_token_ratio = 0;
  double kv_memory_fraction = 0;  ///< fraction of HBM left after weights given to the KV cache
  /// Compiled static shapes (Neuron): smallest sequence bucket, 0 = dynamic shapes
  /// (serve::StaticShapes, docs/serving.md "Static shapes").
  long long static_shape_min_bucket = 0;
};

/// The profile of framework `f` at `version` on `chip` from `params` (serving.kernels.<family>.*,
/// serving.frameworks.<name>.*, and the settings of the version's range in the stack table;
/// empty version: the stack's default range). A version that is not PEP 440 or that no range
/// holds is an InputError on "framework" naming the known ranges.
FrameworkProfile framework_profile(Framework f, const std::string& version, const hw::ChipSpec& chip,
                                   const calib::Params& params);

}  // namespace xpusim::serve
