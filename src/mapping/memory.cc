// Memory per chip for training and serving. Conventions and formulas: docs/models.md.

#include "xpusim/mapping/memory.h"
#include "xpusim/mapping/schedule.h"

#include <algorithm>

#include "xpusim/core/check.h"
#include "xpusim/core/dtype.h"
#include "xpusim/workload/accounting.h"

namespace xpusim::mapping {

namespace {

using workload::LayerParams;
using workload::MlpKind;
using workload::ModelSpec;

double d(long long v) { return static_cast<double>(v); }

// Mixed-precision Adam: bf16 weights, bf16 gradients, fp32 master weights + two fp32 moments.
constexpr double kWeightBytes = 2.0;
constexpr double kGradBytes = 2.0;
constexpr double kOptimizerBytes = 12.0;

/// Activation units (multiples of s·b·h bytes) of an MLP of intermediate size f: the tensors
/// between its GEMMs. Two-matrix MLP: activation input and output, 2·(2f) bytes → 4f/h
/// (16 for f = 4h, Korthikanti). Gated (Megatron fused SwiGLU): the fc1 output [gate, up] 4f and
/// the fc2 input 2f → 6f/h. With fp8/MX GEMMs, Transformer Engine saves the fc2 input as its
/// 1-byte copy; a `frozen` fc2 (LoRA without an adapter on it) saves none: its backward is the
/// input gradient only, which needs the weight, not the input.
double mlp_inner_units(const ModelSpec& m, long long f, bool fp8_inputs, bool frozen) {
  const double fc1_out = m.mlp == MlpKind::Gated ? 4.0 : 2.0;
  const double fc2_in = frozen ? 0.0 : (fp8_inputs ? 1.0 : 2.0);
  return (fc1_out + fc2_in) * d(f) / d(m.hidden);
}

/// Which of a layer's MLP weights LoRA fine-tuning leaves frozen (workload::Op::lora_adapted):
/// the router and routed experts always, the dense MLP and shared experts unless every linear
/// layer is adapted.
/// PyTorch autograd and Transformer Engine keep a GEMM's input only for its weight's gradient, so
/// a frozen GEMM's input is not saved. Without LoRA nothing is frozen.
struct FrozenMlp {
  bool dense = false, shared = false, router = false, routed = false;
};
FrozenMlp frozen_mlp(const TrainPlan& p) {
  if (p.lora_rank <= 0) return {};
  const bool all = p.lora_targets == workload::LoraTargets::AllLinear;
  return {!all, !all, true, true};
}

/// Per-token widths of a recurrent mixer's tensors: in_proj output, conv channels, scan output.
struct RecurrentWidths {
  double in_proj = 0, conv = 0, out = 0;
};
RecurrentWidths recurrent_widths(const ModelSpec& m, int layer) {
  if (m.layer_is_mamba(layer))
    return {d(m.mamba.in_proj_width()), d(m.mamba.conv_channels()), d(m.mamba.inner())};
  return {d(m.linear.in_proj_width()), d(m.linear.conv_channels()), d(m.linear.value_width())};
}

struct LayerUnits {
  double replicated = 0;  ///< stored once per TP rank without SP, split by t with SP
  double sharded = 0;     ///< split by t
};

/// Korthikanti et al. 2022, Sec. 4.1, generalised to GQA/MLA, gated MLPs and MoE. For a
/// GPT layer (MHA, 4h GeLU MLP, two LayerNorms) replicated = 10 and sharded = 24: 34 in all.
/// With `fp8_inputs` (1-byte GEMM precision), the inputs saved for the backward of the QKV,
/// output-projection, fc1 and fc2 GEMMs are their 1-byte copies (Transformer Engine).
LayerUnits layer_units(const ModelSpec& m, int layer, bool fp8_inputs, FrozenMlp frozen) {
  const double h = d(m.hidden);
  const double in = fp8_inputs ? 1.0 : 2.0;  // bytes per saved GEMM-input element
  LayerUnits u;
  if (m.layer_is_recurrent(layer)) {
    // Mamba-2 or DeltaNet mixer: the in_proj input (replicated); the in_proj output, the conv
    // output, the scan output and the out_proj input (sharded).
    const RecurrentWidths w = recurrent_widths(m, layer);
    u.replicated += in;
    u.sharded += (2.0 * w.in_proj + 2.0 * w.conv + (2.0 + in) * w.out) / h;
  } else if (m.layer_has_attention(layer)) {
    // Attention: QKV GEMM input 2 and output-dropout mask 1 (replicated); Q, K, V and the
    // output-projection input, 2 bytes per element (sharded; 8 for MHA).
    u.replicated += in + 1.0;
    const double q = d(m.heads) * d(m.qk_head_dim());
    const double heads_kv = m.attention == workload::AttnKind::Mla ? d(m.heads) : d(m.layer_kv_heads(layer));
    const double k = heads_kv * d(m.qk_head_dim());
    const double v = heads_kv * d(m.v_head_dim());
    const double o_in = d(m.heads) * d(m.v_head_dim());
    u.sharded += (2.0 * (q + k + v) + in * o_in) / h;
    if (m.attention == workload::AttnKind::Mla) {
      // The low-rank latents (q_a output, kv_a output) are inputs of the q_b / kv_b GEMMs.
      u.replicated += 2.0 * d(m.mla.q_lora_rank + m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) / h;
    }
    if (m.dsa.enabled()) {
      // Sparse attention: the indexer's queries (sharded) and keys, and each query's top-k key
      // indices (int32), which the sparse attention's backward reads.
      const workload::SparseAttentionSpec& a = m.dsa;
      u.sharded += 2.0 * d(a.index_heads * a.index_head_dim) / h;
      u.replicated += (2.0 * d(a.index_head_dim) + 4.0 * d(a.topk)) / h;
    }
  }
  if (m.layer_has_mlp(layer)) {
    // MLP: its input 2 (kept while a GEMM reading it is trained) and dropout mask 1
    // (replicated) + the inner tensors (sharded).
    const bool moe = m.layer_is_moe(layer);
    const bool input_read = moe ? !frozen.router || (m.moe.shared_experts > 0 && !frozen.shared) : !frozen.dense;
    u.replicated += (input_read ? in : 0.0) + 1.0;
    if (moe) {
      // MoE: the router's fp32 logits, k permuted copies of the input (the routed experts' fc1
      // inputs), and the inner tensors of k experts of expert_ffn (+ shared experts): "scale by
      // top-k × expert_ffn / ffn".
      const double topk = m.moe.experts_per_token;
      u.replicated += 4.0 * d(m.moe.num_experts) / h;
      u.sharded += (frozen.routed ? 0.0 : 2.0 * topk) +
                   topk * mlp_inner_units(m, m.moe.expert_ffn, fp8_inputs, frozen.routed) +
                   m.moe.shared_experts * mlp_inner_units(m, m.moe.shared_ffn, fp8_inputs, frozen.shared);
    } else {
      u.sharded += mlp_inner_units(m, m.layer_ffn(layer), fp8_inputs, frozen.dense);
    }
  }
  // Nemotron-NAS linear replacements: each keeps its input for the weight gradient.
  if (m.layer_linear_mixer(layer)) u.replicated += in;
  if (m.layer_linear_mlp(layer)) u.replicated += in;
  // Norm inputs, 2 bytes each.
  u.replicated += 2.0 * m.layer_norms(layer);
  return u;
}

/// Activation units of a layer under a remat policy that saves only its input and the outputs
/// of its QKV and MLP up-projection GEMMs (SelectiveScope::AllButProjections), 2 bytes each:
/// the input (replicated), Q, K, V and the up-projection outputs (gate and up for gated MLPs;
/// MoE: top-k routed copies, their up outputs and the shared experts'), sharded.
LayerUnits projection_units(const ModelSpec& m, int layer) {
  const double h = d(m.hidden);
  const double mats_in = m.mlp == MlpKind::Gated ? 2.0 : 1.0;
  const double heads_kv = m.attention == workload::AttnKind::Mla ? d(m.heads) : d(m.layer_kv_heads(layer));
  LayerUnits u;
  u.replicated = 2.0;
  if (m.layer_is_recurrent(layer))
    u.sharded = 2.0 * recurrent_widths(m, layer).in_proj / h;  // the in_proj output
  else if (m.layer_has_attention(layer))
    u.sharded = 2.0 * (d(m.heads) * d(m.qk_head_dim()) + heads_kv * d(m.qk_head_dim() + m.v_head_dim())) / h;
  if (!m.layer_has_mlp(layer)) return u;
  if (m.layer_is_moe(layer)) {
    const double topk = m.moe.experts_per_token;
    u.sharded += 2.0 * topk * (1.0 + mats_in * d(m.moe.expert_ffn) / h) +
                 2.0 * mats_in * m.moe.shared_experts * d(m.moe.shared_ffn) / h;
  } else {
    u.sharded += 2.0 * mats_in * d(m.layer_ffn(layer)) / h;
  }
  return u;
}

double seq_per_rank(const TrainPlan& p) { return d(p.seq_len) / p.cp; }

double sbh(const ModelSpec& m, const TrainPlan& p) {
  return seq_per_rank(p) * d(p.micro_batch) * d(m.hidden);
}

double sp_div(const TrainPlan& p) { return p.sequence_parallel ? p.tp : 1.0; }

double layer_no_recompute(const ModelSpec& m, const TrainPlan& p, int layer) {
  const LayerUnits u = layer_units(m, layer, core::bytes_per_element(p.precision) < 1.5, frozen_mlp(p));
  double bytes = sbh(m, p) * (u.replicated / sp_div(p) + u.sharded / p.tp);
  if (!p.flash_attention && m.layer_has_attention(layer)) {
    // Softmax output 2, dropout mask 1, dropout output 2 bytes per score: 5·a·s²·b/t.
    const double s = seq_per_rank(p);
    bytes += 5.0 * m.heads * s * s * d(p.micro_batch) / p.tp;
  }
  return bytes;
}

/// Layer-micro-batches of activations held at the peak by a chip of pipeline rank `r` holding
/// `layers_on_rank` layers: the schedule's chunk-micro-batches in flight (mapping/schedule.h) times
/// the layers of one chunk. 1F1B: min(m, pp − r) micro-batches of the stage. Interleaved
/// (Megatron): min(m·vpp, 2(pp − r − 1) + (vpp − 1)·pp + 1) chunks of layers/(pp·vpp) layers; for
/// r = 0 that is layers·(1 + (pp − 1)/(pp·vpp)). DualPipe: min(m, pp + 1) chunks, a chunk being
/// one of the rank's two stages.
double inflight_layer_microbatches(const TrainPlan& p, int layers_on_rank, int total_layers, int r) {
  const Schedule& schedule = schedule_of(p);
  const PipelineShape shape = pipeline_shape(p);
  const ChunkPlacement place = schedule.placement(shape, r, 0);
  const double chunk_layers = place.share < 1.0 ? d(total_layers) / p.pp * place.share
                                                : d(layers_on_rank) / schedule.chunks_per_rank(shape);
  return chunk_layers * schedule.inflight_chunks(shape, r);
}

/// Pipeline stages whose layers rank `r` holds (DualPipe: r and pp − 1 − r, one per direction).
std::vector<int> stages_held(const TrainPlan& p, int r) {
  const Schedule& schedule = schedule_of(p);
  const PipelineShape shape = pipeline_shape(p);
  std::vector<int> out;
  for (int c = 0; c < schedule.chunks_per_rank(shape); ++c) {
    const int st = schedule.placement(shape, r, c).stage;
    if (std::find(out.begin(), out.end(), st) == out.end()) out.push_back(st);
  }
  return out;
}

/// Micro-batches whose embedding output a chip of stage r holds (only stage 0 has one):
/// min(m, pp − r) for both schedules (the embedding sits in rank 0's first model chunk).
double inflight_microbatches(const TrainPlan& p, int r) {
  const long long m = std::max<long long>(1, p.micro_batches());
  return d(std::min<long long>(m, p.pp - r));
}

}  // namespace

std::vector<int> stage_layers(int layers, int pp, int vpp, int stage) {
  XS_CHECK(pp >= 1 && stage >= 0 && stage < pp, "stage out of range");
  std::vector<int> out;
  if (vpp > 1 && layers % (pp * vpp) == 0) {
    const int chunk = layers / (pp * vpp);
    for (int v = 0; v < vpp; ++v)
      for (int j = 0; j < chunk; ++j) out.push_back((v * pp + stage) * chunk + j);
    return out;
  }
  // Contiguous; the first (layers mod pp) stages take one extra layer.
  const int base = layers / pp, extra = layers % pp;
  const int begin = stage * base + std::min(stage, extra);
  const int n = base + (stage < extra ? 1 : 0);
  for (int i = 0; i < n; ++i) out.push_back(begin + i);
  return out;
}

core::Bytes activation_bytes_per_layer_no_recompute(const ModelSpec& model, const TrainPlan& plan,
                                                    int layer) {
  return core::bytes(layer_no_recompute(model, plan, layer));
}

core::Bytes activation_bytes_per_layer(const ModelSpec& model, const TrainPlan& plan, int layer) {
  switch (plan.recompute) {
    case Recompute::None:
      return core::bytes(layer_no_recompute(model, plan, layer));
    case Recompute::Selective: {
      if (plan.selective == SelectiveScope::AllButProjections) {
        const LayerUnits u = projection_units(model, layer);
        return core::bytes(sbh(model, plan) * (u.replicated / sp_div(plan) + u.sharded / plan.tp));
      }
      TrainPlan q = plan;
      q.flash_attention = true;  // selective recompute drops exactly the 5as/h term
      return core::bytes(layer_no_recompute(model, q, layer));
    }
    case Recompute::Full:
      // With recompute_layers, a layer past the first N of its chunk keeps its activations.
      if (!recomputes_layer(plan, model.layers, layer)) return core::bytes(layer_no_recompute(model, plan, layer));
      return core::bytes(2.0 * sbh(model, plan) / sp_div(plan));
  }
  return core::Bytes{};
}

TrainMemory train_memory_of_stage(const ModelSpec& model, const TrainPlan& plan, int stage,
                                  const MemoryParams& params) {
  XS_CHECK(plan.tp >= 1 && plan.pp >= 1 && plan.dp >= 1 && plan.cp >= 1 && plan.ep >= 1,
           "plan degrees must be positive (check_train_plan first)");
  const int r = stage;
  const std::vector<int> held = stages_held(plan, r);
  const bool first = std::count(held.begin(), held.end(), 0) > 0;
  const bool last = std::count(held.begin(), held.end(), plan.pp - 1) > 0;
  std::vector<int> layers;
  for (int st : held) {
    const std::vector<int> more = stage_layers(model.layers, plan.pp, plan.vpp, st);
    layers.insert(layers.end(), more.begin(), more.end());
  }
  // Multi-token prediction: each module's block, a copy of the last layer, on the last stage.
  if (last) layers.insert(layers.end(), static_cast<size_t>(std::max(0, plan.mtp_layers)), model.layers - 1);

  // Parameters on this chip (DualPipe: two stages, i.e. two copies of every stage's weights
  // across the pipeline).
  double dense = 0, routed = 0, largest_layer = 0, adapters = 0;
  for (int i : layers) {
    const LayerParams lp = workload::layer_params(model, i);
    dense += lp.non_routed();
    routed += lp.routed();
    adapters += workload::lora_layer_params(model, i, plan.lora_rank, plan.lora_targets);
    largest_layer = std::max(largest_layer, lp.non_routed() / plan.tp + lp.routed() / (plan.ep * plan.etp()));
  }
  if (first) dense += workload::embedding_params(model);  // vocab-parallel embedding (+ learned positions)
  if (last) {
    dense += d(model.hidden);  // final norm
    // Untied LM head; a tied one needs a copy on the last stage when pp > 1 (Megatron).
    dense += model.tied_embeddings ? (plan.pp > 1 ? d(model.vocab) * d(model.hidden) : 0.0)
                                   : workload::lm_head_params(model);
    // Each MTP module's own weights (its block is among `layers`): two norms and eh_proj.
    dense += d(plan.mtp_layers) * workload::mtp_own_params(model);
  }
  const double dense_chip = dense / plan.tp;
  const double expert_chip = routed / (static_cast<double>(plan.ep) * plan.etp());
  const double ddp = plan.dense_dp();
  const double edp = std::max(1, plan.expert_dp());

  const bool shard_opt = plan.zero != Zero::None;
  const bool shard_grad = plan.zero == Zero::Zero2 || plan.zero == Zero::Zero3 || plan.zero == Zero::Fsdp;
  const bool shard_weights = plan.zero == Zero::Zero3 || plan.zero == Zero::Fsdp;

  // LoRA: the base weights are frozen (no gradient, no optimizer state); the adapters, split over
  // tp like the projections they adapt, train.
  const bool lora = plan.lora_rank > 0;
  const double trained_dense = lora ? adapters / plan.tp : dense_chip;
  const double trained_expert = lora ? 0.0 : expert_chip;

  TrainMemory mem;
  mem.stage = r;
  mem.weights = core::bytes(kWeightBytes * ((dense_chip + (lora ? trained_dense : 0.0)) / (shard_weights ? ddp : 1.0) +
                                            expert_chip / (shard_weights ? edp : 1.0)));
  mem.gradients = core::bytes(kGradBytes * (trained_dense / (shard_grad ? ddp : 1.0) +
                                            trained_expert / (shard_grad ? edp : 1.0)));
  mem.optimizer = core::bytes(kOptimizerBytes * (trained_dense / (shard_opt ? ddp : 1.0) +
                                                 trained_expert / (shard_opt ? edp : 1.0)));

  // Activations.
  double per_layer_sum = 0, worst_layer = 0;
  for (int i : layers) {
    per_layer_sum += core::to_bytes(activation_bytes_per_layer(model, plan, i));
    worst_layer = std::max(worst_layer, layer_no_recompute(model, plan, i));
  }
  const double mean_layer = layers.empty() ? 0.0 : per_layer_sum / d(static_cast<long long>(layers.size()));
  double act = mean_layer * inflight_layer_microbatches(plan, static_cast<int>(layers.size()),
                                                        model.layers, r);
  if (recomputes_layer(plan) && !layers.empty()) {
    act += worst_layer;  // the layer being recomputed holds its full activations transiently
  }
  const double unit = sbh(model, plan);
  if (first) act += unit / sp_div(plan) * inflight_microbatches(plan, r);  // embedding dropout mask
  if (last) {
    // Final norm input 2sbh and LM-head input 2sbh (sharded with SP), fp32 logits 4sbv/t.
    // Each MTP module adds its norm inputs and eh_proj input (2 × 2sbh) and its own fp32 logits.
    const double head = 4.0 * unit / sp_div(plan) + 4.0 * unit * d(model.vocab) / d(model.hidden) / plan.tp;
    act += head * (1.0 + d(plan.mtp_layers)) + d(plan.mtp_layers) * 4.0 * unit / sp_div(plan);
  }
  mem.activations = core::bytes(act);

  // Workspace: the documented base, plus ZeRO-3/FSDP's gathered weights of two layers (the one
  // computing and the one being prefetched).
  mem.workspace = params.workspace;
  if (shard_weights) mem.workspace += core::bytes(2.0 * kWeightBytes * largest_layer);
  return mem;
}

TrainMemory train_memory_per_chip(const ModelSpec& model, const TrainPlan& plan,
                                  const MemoryParams& params) {
  TrainMemory best = train_memory_of_stage(model, plan, 0, params);
  for (int r = 1; r < plan.pp; ++r) {
    TrainMemory m = train_memory_of_stage(model, plan, r, params);
    if (m.total() > best.total()) best = m;
  }
  return best;
}

namespace {

/// Recurrent state of layer `layer` for one sequence on one chip (in the plan's state dtype;
/// heads split over tp); 0 for a layer that is not recurrent.
double state_layer_chip(const ModelSpec& m, int layer, const ServePlan& p) {
  return workload::recurrent_state_bytes_per_layer(m, layer, p.state_dtype).base() / p.tp;
}

ServeMemory serve_stage(const ModelSpec& model, const ServePlan& plan, long long sequences,
                        long long context, long long step_tokens, int r, const MemoryParams& params) {
  const std::vector<int> layers = stage_layers(model.layers, plan.pp, 1, r);
  const bool first = r == 0, last = r == plan.pp - 1;
  double dense = 0, routed = 0;
  double unquantized = 0;  // of `dense`: the weights the checkpoint keeps in bf16 (ModelSpec::unquantized)
  double kv_elements = 0;  // Σ over this stage's layers of the KV elements each keeps per sequence
  double state = 0;  // Σ over this stage's recurrent layers of one sequence's state per chip
  for (int i : layers) {
    const LayerParams lp = workload::layer_params(model, i);
    dense += lp.non_routed();
    routed += lp.routed();
    unquantized += workload::unquantized_layer_params(model, lp);
    kv_elements += d(model.layer_context(i, context)) * workload::kv_elements_per_token_layer(model, i, plan.tp);
    state += state_layer_chip(model, i, plan);
  }
  if (first) {
    dense += workload::embedding_params(model);
    if (model.unquantized.embedding) unquantized += workload::embedding_params(model);
  }
  if (last) {
    dense += d(model.hidden);
    const double head = model.tied_embeddings ? (plan.pp > 1 ? d(model.vocab) * d(model.hidden) : 0.0)
                                              : workload::lm_head_params(model);
    dense += head;
    if (model.unquantized.lm_head) unquantized += head;
  }
  const double wb = core::bytes_per_element(plan.weight_dtype);
  const double wb16 = core::bytes_per_element(workload::unquantized_weight_dtype(plan.weight_dtype));
  ServeMemory mem;
  // Experts: ep-ways within the tp group of the stage, each expert tensor-split over tp/ep.
  mem.weights = core::bytes((wb * (dense - unquantized) + wb16 * unquantized) / plan.tp +
                            wb * routed / std::max(plan.tp, plan.ep));
  mem.kv_cache = core::bytes(d(sequences) * kv_elements * core::bytes_per_element(plan.kv_dtype));
  if (state > 0) mem.kv_cache += core::bytes(d(sequences) * state);
  // Transient activations of one step of `step_tokens` tokens: residual stream and norm output
  // (2h), the largest inner MLP tensor (sharded over tp), and, on the last stage, fp32 logits
  // of one position per sequence.
  const double ab = core::bytes_per_element(plan.math_dtype);
  const double inner = model.is_moe() ? d(model.moe.experts_per_token) * d(model.moe.expert_ffn) +
                                            d(model.moe.shared_experts) * d(model.moe.shared_ffn)
                                      : d(model.ffn);  // a heterogeneous model's widest layer
  const double inner_width = std::max(inner, d(model.ffn)) * (model.mlp == MlpKind::Gated ? 3.0 : 2.0);
  double act = d(step_tokens) * ab * (2.0 * d(model.hidden) + inner_width / plan.tp);
  if (last) act += d(sequences) * 4.0 * d(model.vocab) / plan.tp;
  mem.activations = core::bytes(act);
  mem.workspace = params.workspace;
  return mem;
}

}  // namespace

ServeMemory serve_memory_per_chip(const ModelSpec& model, const ServePlan& plan,
                                  long long sequences, long long context, long long step_tokens,
                                  const MemoryParams& params) {
  XS_CHECK(plan.tp >= 1 && plan.pp >= 1 && plan.ep >= 1, "serve plan degrees must be positive");
  ServeMemory best = serve_stage(model, plan, sequences, context, step_tokens, 0, params);
  for (int r = 1; r < plan.pp; ++r) {
    ServeMemory m = serve_stage(model, plan, sequences, context, step_tokens, r, params);
    if (m.total() > best.total()) best = m;
  }
  return best;
}

ServeMemory serve_memory_per_chip(const ModelSpec& model, const ServePlan& plan,
                                  long long sequences, long long context, const MemoryParams& params) {
  return serve_memory_per_chip(model, plan, sequences, context, sequences, params);
}

MemoryParams memory_params(const calib::Params& params) {
  return MemoryParams{params.bytes("memory.workspace_per_chip")};
}

core::Bytes kv_bytes_per_token_per_chip(const ModelSpec& model, const ServePlan& plan) {
  double elements = 0;
  for (int i : stage_layers(model.layers, plan.pp, 1, 0)) elements += workload::kv_elements_per_token_layer(model, i, plan.tp);
  return core::bytes(elements * core::bytes_per_element(plan.kv_dtype));
}

core::Bytes state_bytes_per_sequence_per_chip(const ModelSpec& model, const ServePlan& plan) {
  double state = 0;
  for (int i : stage_layers(model.layers, plan.pp, 1, 0)) state += state_layer_chip(model, i, plan);
  return core::bytes(state);
}

}  // namespace xpusim::mapping
