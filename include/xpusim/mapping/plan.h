#pragma once
// Parallel plans for training and serving. Plain data; mapping/plan.cc validates them against
// a model and a chip count (divisibility), mapping/memory.h sizes them per chip.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "xpusim/core/diagnostics.h"
#include "xpusim/core/dtype.h"
#include "xpusim/core/result.h"
#include "xpusim/workload/accounting.h"

namespace xpusim::workload { struct ModelSpec; }

namespace xpusim::mapping {

enum class Zero { None, Zero1, Zero2, Zero3, Fsdp };  ///< optimizer/gradient/parameter sharding
enum class Recompute { None, Selective, Full };       ///< activation recomputation
/// What selective recomputation keeps, which the framework decides: Megatron's drops only the
/// attention core (Korthikanti et al. 2022); AXLearn's remat policy saves only the QKV and MLP
/// up-projection outputs and the layer input, and recomputes the rest of the layer's forward.
enum class SelectiveScope { AttentionCore, AllButProjections };

std::string zero_name(Zero z);          ///< "none", "1", "2", "3", "fsdp"
std::string recompute_name(Recompute r);  ///< "none", "selective", "full"
/// The mode named by recompute_name, or nothing for any other name (the caller reports it).
std::optional<Recompute> recompute_from_name(const std::string& name);
/// The names recompute_from_name accepts, in order.
const std::vector<std::string>& recompute_names();
/// The stage named by zero_name ("none", "1", "2", "3", "fsdp"), or nothing (the caller reports it).
std::optional<Zero> zero_from_name(const std::string& name);
/// The names zero_from_name accepts, in order.
const std::vector<std::string>& zero_names();
/// The validation CSV's spelling of a stage ("none", "zero1", "zero2", "zero3", "fsdp"; the
/// README's fsdp_or_zero column), and its inverse; one table with zero_name.
std::string zero_csv_name(Zero z);
std::optional<Zero> zero_from_csv_name(const std::string& name);
const std::vector<std::string>& zero_csv_names();

/// A training plan. chips = tp × pp × cp × dp; experts are sharded ep-ways inside dp × cp
/// (Megatron-core convention: the expert-parallel group is carved out of data parallelism).
struct TrainPlan {
  int tp = 1;   ///< tensor parallel
  int pp = 1;   ///< pipeline stages
  int dp = 1;   ///< data parallel replicas
  int cp = 1;   ///< context parallel (sequence split across chips, ring attention)
  int ep = 1;   ///< expert parallel
  int vpp = 1;  ///< virtual pipeline stages per rank (interleaved 1F1B)
  bool sequence_parallel = true;  ///< Megatron SP: shards norm/dropout activations over tp
  Zero zero = Zero::Zero1;
  Recompute recompute = Recompute::None;
  SelectiveScope selective = SelectiveScope::AttentionCore;  ///< meaning of Recompute::Selective
  long long micro_batch = 1;    ///< sequences per micro-batch per dp replica
  long long global_batch = 1;   ///< sequences per optimizer step
  long long seq_len = 2048;
  core::Dtype precision = core::Dtype::Bf16;  ///< matmul precision
  // Added (additive):
  int expert_tp = 0;            ///< expert tensor parallel (Megatron ETP); 0 = same as tp
  bool flash_attention = true;  ///< fused attention: the s×s scores are never stored
  /// Pipeline schedule (mapping/schedule.h registry); empty = 1f1b for vpp 1, interleaved for vpp > 1.
  std::string schedule = "";
  /// Async TP (torchtitan's AsyncTP): each TP/SP all-gather and reduce-scatter is split into tp
  /// chunks pipelined with the GEMM it feeds or drains, so only the first chunk and what the GEMM
  /// cannot cover are exposed (docs/calibration.md, "Async TP"); false: the framework's
  /// tp_comm_exposed share of them is.
  bool async_tp = false;
  /// LoRA fine-tuning: > 0 freezes every base weight and trains rank-`lora_rank` adapters on the
  /// attention projections (workload::lora_adapter_ops): the backward computes no base weight
  /// gradients, and only the adapters are reduced over data parallelism, held in the optimizer
  /// and updated. 0: every weight trains (pre-training, full fine-tuning).
  int lora_rank = 0;
  /// The weights the adapters sit beside (workload::LoraTargets).
  workload::LoraTargets lora_targets = workload::LoraTargets::AllLinear;
  /// Multi-token prediction depth (DeepSeek-V3 trained with 1): that many MTP modules on the last
  /// pipeline stage, each a copy of the last layer's block, eh_proj and a second pass through the
  /// shared LM head and loss (workload::mtp_ops). 0: Megatron's default, none.
  int mtp_layers = 0;
  /// Mixture of experts: tokens the busiest expert-parallel rank receives over the mean (1 =
  /// balanced: the force-balanced routing of MoE benchmarks, what EPLB aims for). Its grouped
  /// GEMMs, permutes and all-to-all volume scale by it; the step waits for that rank.
  double moe_load_imbalance = 1.0;
  /// Mixture of experts, Megatron's moe_expert_capacity_factor: an expert takes at most this
  /// many times its mean share of the routed rows and drops the rest (0 = dropless). With
  /// moe_pad_to_capacity every expert runs exactly its capacity (fixed shapes).
  double moe_capacity_factor = 0;
  bool moe_pad_to_capacity = false;
  /// With Recompute::Full, Megatron's block method (--recompute-method block
  /// --recompute-num-layers N): only the first N layers of each model chunk (a pipeline stage,
  /// or with vpp a virtual stage) are recomputed; the others keep their activations. 0: every
  /// layer (--recompute-method uniform, one layer a group).
  int recompute_layers = 0;
  /// The busiest expert-parallel rank's routed rows over the mean, after the capacity: F,
  /// min(F, cf) with a capacity factor, cf when padded to it.
  double moe_expert_load() const {
    if (moe_capacity_factor <= 0) return moe_load_imbalance;
    return moe_pad_to_capacity ? moe_capacity_factor : std::min(moe_load_imbalance, moe_capacity_factor);
  }

  int chips() const { return tp * pp * cp * dp; }
  int etp() const { return expert_tp > 0 ? expert_tp : tp; }
  /// Ranks that hold the same dense weights and reduce their gradients: dp × cp.
  int dense_dp() const { return dp * cp; }
  /// Ranks that hold the same expert shard (Megatron expert-data-parallel): tp·cp·dp/(ep·etp).
  int expert_dp() const { return tp * cp * dp / (ep * etp()); }
  /// Micro-batches per step per pipeline = global_batch / (dp × micro_batch).
  long long micro_batches() const { return global_batch / (static_cast<long long>(dp) * micro_batch); }
};

/// A serving plan: one model replica spans tp × pp chips; experts ep-ways within it.
struct ServePlan {
  int tp = 1;
  int pp = 1;
  int ep = 1;
  core::Dtype weight_dtype = core::Dtype::Bf16;
  core::Dtype kv_dtype = core::Dtype::Bf16;
  core::Dtype math_dtype = core::Dtype::Bf16;
  core::Dtype state_dtype = core::Dtype::Bf16;  ///< a hybrid's Mamba-2 state (engines' default: bf16)
  double moe_load_imbalance = 1.0;  ///< as TrainPlan's: the busiest expert-parallel rank's tokens over the mean
  int chips_per_replica() const { return tp * pp; }
};

/// Whether the backward reruns a layer's forward beyond its attention core (full recomputation,
/// or selective recomputation that keeps only the projections): the layer's input is all it
/// holds across the pass, and its forward TP collectives run again.
bool recomputes_layer(const TrainPlan& plan);
/// The FLOP accounting of the plan's recomputation (workload::train_flops_per_token).
workload::RecomputeKind recompute_kind(const TrainPlan& plan);
/// Layer `layer`'s position in its model chunk under mapping::stage_layers' split of `layers`
/// layers: with vpp (layers divisible by pp·vpp) chunks of layers/(pp·vpp) in turn, else the
/// contiguous stages of layers_per_stage.
int position_in_chunk(const TrainPlan& plan, int layers, int layer);
/// The most layers one model chunk holds under the same split.
int most_layers_per_chunk(const TrainPlan& plan, int layers);
/// Whether the plan recomputes layer `layer` of a `layers`-layer model as it recomputes layers:
/// recomputes_layer, and with recompute_layers N > 0 only at a position in its chunk below N.
bool recomputes_layer(const TrainPlan& plan, int layers, int layer);
/// The FLOP accounting of layer `layer`: recompute_kind, or None for a layer recompute_layers
/// leaves out.
workload::RecomputeKind recompute_kind(const TrainPlan& plan, int layers, int layer);
/// The share of the model's layers the plan recomputes in full with recompute_layers N (1
/// without it): what the hardware FLOPs of full recomputation are scaled by.
double recomputed_layer_share(const TrainPlan& plan, int layers);

/// Checks divisibility of a training plan against a model and chip count: tp divides heads
/// (and kv heads or the reverse), pp ≤ layers, chips = tp·pp·cp·dp, ep divides dp·cp and the
/// expert count, global batch divisible by dp × micro-batch, seq_len divisible by cp (and
/// 2·cp for causal load balance), and a pipeline schedule that can run the plan's shape. Returns the reason when infeasible.
core::Result<bool> check_train_plan(const TrainPlan& plan, const workload::ModelSpec& model,
                                    int chips);

/// A stated MoE load imbalance (train and serve): it needs a mixture of experts and a stated
/// ep > 1, and lies in [1, ep] (the busiest of ep ranks receives at least the mean and at most
/// every token). Diagnostics name `path` and the value.
void check_moe_load_imbalance(core::Diagnostics& d, const std::string& path, const std::optional<double>& imbalance,
                              const workload::ModelSpec& model, long long ep);

}  // namespace xpusim::mapping
