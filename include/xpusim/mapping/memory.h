#pragma once
// Memory per chip for training and serving plans.
//
// Training (per chip): weights + gradients + optimizer states (mixed-precision Adam: fp32
// master weights and two fp32 moments = 12 B/param, plus bf16/fp16 weights 2 B and gradients
// 2-4 B, i.e. 16 B/param unsharded) sharded by ZeRO stage; activations per Korthikanti et al.
// 2022 (sbh(34 + 5as/h) bytes per layer without parallelism, divided by t with TP+SP; selective
// recompute drops the 5as/h term; full recompute keeps 2sbh per layer), times the micro-batches
// in flight under 1F1B (pp for the first stage; interleaving multiplies by
// 1 + (pp−1)/(pp·vpp), Megatron); plus a framework workspace. Conventions: docs/models.md.

#include <vector>

#include "xpusim/calib/params.h"
#include "xpusim/core/units.h"
#include "xpusim/mapping/plan.h"
#include "xpusim/workload/model.h"

namespace xpusim::mapping {

/// Assumed parameters of the memory model, the same for training and serving.
struct MemoryParams {
  /// Framework workspace per chip (runtime context, collective-communication buffers,
  /// allocator fragmentation); ZeRO-3/FSDP add their gather buffers on top, and the
  /// activations of a step are counted separately.
  core::Bytes workspace;
};

/// The memory parameters of a calibration (data/calibration/memory.yaml, docs/models.md).
MemoryParams memory_params(const calib::Params& params);

struct TrainMemory {
  core::Bytes weights;
  core::Bytes gradients;
  core::Bytes optimizer;
  core::Bytes activations;
  core::Bytes workspace;  ///< framework/communication buffers, allocator fragmentation
  core::Bytes total() const { return weights + gradients + optimizer + activations + workspace; }
  int stage = 0;  ///< (added) the pipeline stage of the reported chip
};

/// Memory of the most loaded chip: every pipeline stage is sized (the first holds the embedding
/// and the most micro-batches in flight, the last the LM head and logits) and the largest total
/// is returned.
TrainMemory train_memory_per_chip(const workload::ModelSpec& model, const TrainPlan& plan,
                                  const MemoryParams& params);
/// (added) Memory of a chip of pipeline stage `stage` (0-based).
TrainMemory train_memory_of_stage(const workload::ModelSpec& model, const TrainPlan& plan,
                                  int stage, const MemoryParams& params);

/// (added) Activation bytes that one micro-batch leaves stored in layer `layer` on one chip
/// until its backward pass, per Korthikanti et al. 2022 generalised (see docs/models.md):
///   no recompute: s·b·h·(R/t_sp + S/t) + 5·a·s²·b/t (the last term only without flash attention)
///   selective:    s·b·h·(R/t_sp + S/t);   full: 2·s·b·h/t_sp (the layer input)
/// with s = seq/cp, R the replicated terms (10 for GPT), S the TP-sharded ones (24 for GPT),
/// t_sp = t with sequence parallelism, else 1.
core::Bytes activation_bytes_per_layer(const workload::ModelSpec& model, const TrainPlan& plan,
                                       int layer);
/// (added) The same layer without any recompute (what a layer holds while it is recomputed).
core::Bytes activation_bytes_per_layer_no_recompute(const workload::ModelSpec& model,
                                                    const TrainPlan& plan, int layer);
/// (added) Layers held by pipeline stage `stage` (interleaved: vpp chunks of layers/(pp·vpp)).
std::vector<int> stage_layers(int layers, int pp, int vpp, int stage);

struct ServeMemory {
  core::Bytes weights;
  core::Bytes kv_cache;     ///< KV cache, and the Mamba-2 state of hybrid models (per sequence)
  core::Bytes activations;  ///< transient activations of the largest step
  core::Bytes workspace;
  core::Bytes total() const { return weights + kv_cache + activations + workspace; }
};

/// Memory per chip of a replica holding `sequences` sequences of `context` tokens each.
/// The transient activations are sized for one decode token per sequence.
ServeMemory serve_memory_per_chip(const workload::ModelSpec& model, const ServePlan& plan,
                                  long long sequences, long long context, const MemoryParams& params);
/// (added) The same with the transient activations sized for a step of `step_tokens` tokens
/// (e.g. a prefill chunk, or an engine's token budget).
ServeMemory serve_memory_per_chip(const workload::ModelSpec& model, const ServePlan& plan,
                                  long long sequences, long long context, long long step_tokens,
                                  const MemoryParams& params);

/// KV-cache bytes per token per chip for a serving plan (kv heads sharded over tp; MLA caches
/// the compressed latent, replicated over tp).
core::Bytes kv_bytes_per_token_per_chip(const workload::ModelSpec& model, const ServePlan& plan);
/// Recurrent state bytes per sequence per chip of the first pipeline stage (hybrid models'
/// Mamba-2 and DeltaNet layers; 0 without them), split over tp by heads, held in the plan's
/// state_dtype (bf16 by default, as the engines) whatever the context length.
core::Bytes state_bytes_per_sequence_per_chip(const workload::ModelSpec& model, const ServePlan& plan);

}  // namespace xpusim::mapping
