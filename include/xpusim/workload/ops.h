#pragma once
// The operators of one transformer layer (and of the embedding/LM head) for a given shard of
// work: tokens on this chip, tensor-parallel degree, context-parallel degree, expert-parallel
// degree. Plain data consumed by compute/ (which times each op on a chip). FLOPs are forward
// FLOPs; backward is derived by compute/ (2× for GEMMs: data and weight gradients).

#include <optional>
#include <string>
#include <vector>

#include "xpusim/core/dtype.h"
#include "xpusim/workload/model.h"

namespace xpusim::workload {

enum class OpKind { Gemm, Attention, Elementwise, MoeDispatch, Scan };

/// What a layer GEMM does with the layer's activations. Remat policies name GEMMs by role
/// (AXLearn's Fuji saves the QKV and the MLP up-projection outputs): a role, not an op name, is
/// what mapping/engine code tests.
enum class GemmRole {
  Other,           ///< output/down projections, the router, the LM head
  QkvProjection,   ///< query/key/value projections, MLA's low-rank q/kv projections included
  UpProjection,    ///< the MLP's up (and gate) projection, dense, routed expert or shared
};

/// The weights LoRA adapts: the attention projections (query/key/value and output: the MLPerf
/// Llama-2-70B LoRA reference), or every linear layer of the block (those and the dense MLP's up
/// and down projections: Megatron-Bridge's and NeMo's linear_qkv, linear_proj, linear_fc1,
/// linear_fc2). Routed experts, the router and the LM head are never adapted.
enum class LoraTargets { Attention, AllLinear };
/// "attention" or "all-linear".
std::string lora_targets_name(LoraTargets t);
/// The targets named `name`; nullopt for any other name.
std::optional<LoraTargets> parse_lora_targets(const std::string& name);

struct Op {
  OpKind kind = OpKind::Gemm;
  std::string name;
  // GEMM: (m × k) · (k × n), repeated `count` times (grouped GEMM for experts).
  long long m = 0, n = 0, k = 0, count = 1;
  // Attention (flash-style): batch × heads on this chip, query and key lengths, head dims.
  long long batch = 0, heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, d_qk = 0, d_v = 0;
  bool causal = true;
  long long window = 0;  ///< sliding window (0 = full)
  /// Kernel calls the keys are split into: context-parallel ring attention runs one
  /// flash-attention call per ring step (cp), each over its chunk of the keys.
  long long kv_chunks = 1;
  // Scan (a recurrent layer's scan, one fused kernel chain): m tokens in chunks of q_len, heads ×
  // d_v channels, state size d_qk, kv_heads B/C groups (all on this chip), by scan_kind.
  enum class ScanKind {
    Ssd,        ///< Mamba-2's chunked SSD
    DeltaRule,  ///< gated DeltaNet's chunked delta rule (heads: value heads, kv_heads: key heads, d_qk: key dim)
    Selective,  ///< Mamba-1's selective scan: a recurrence over the tokens, the state in on-chip memory
  };
  ScanKind scan_kind = ScanKind::Ssd;
  // Elementwise: elements read+written (memory-bound).
  double elements = 0;
  bool weights = false;  ///< the GEMM's k × n operand is a weight (read from HBM once)
  GemmRole role = GemmRole::Other;
  /// The weight does not train (LoRA fine-tuning's base weights): the backward computes the
  /// input gradient only, and the weight has no gradient to reduce or optimizer state to update.
  bool frozen = false;
  /// A LoRA adapter's GEMM (lora_adapter_ops): runs in bf16 whatever the base layers' precision
  /// (frameworks keep adapters out of their fp8/fp4 recipes).
  bool adapter = false;
  /// The weight is one the checkpoint keeps in bf16 (ModelSpec::unquantized): the GEMM runs in
  /// bf16 and reads its weight at 2 bytes whatever the plan's formats.
  bool unquantized = false;

  double flops() const;  ///< forward FLOPs of this op
  /// A routed expert's op (expert_up, expert_act, expert_down): sharded by ep, not tp.
  bool is_expert() const { return name.rfind("expert_", 0) == 0; }
  /// A GEMM whose k × n operand is a weight: a dense layer's, or with is_expert() a routed expert's.
  bool is_weight_gemm() const { return kind == OpKind::Gemm && weights; }
  /// A weight GEMM whose weight trains (not frozen).
  bool is_trained_weight_gemm() const { return is_weight_gemm() && !frozen; }
  /// An attention projection (query/key/value, MLA's low-rank ones, the output projection; a
  /// Mamba-2 mixer's in_proj and out_proj): the weights LoRA fine-tuning adapts (lora_adapter_ops).
  bool is_attention_projection() const {
    return is_weight_gemm() && (role == GemmRole::QkvProjection || name == "o_proj" || name == "out_proj");
  }
  /// Whether LoRA with these targets adapts this op's weight.
  bool lora_adapted(LoraTargets targets) const {
    return is_attention_projection() ||
           (targets == LoraTargets::AllLinear && is_weight_gemm() && (name == "mlp_up" || name == "mlp_down" ||
                                                                       name == "shared_up" || name == "shared_down"));
  }
  /// Attention: the keys the average query sees (causal mean, capped by the sliding window).
  double mean_keys() const;
};

/// How one layer's work is split on a chip.
struct LayerShard {
  long long batch = 1;    ///< sequences in this micro-batch
  long long seq = 2048;   ///< full sequence length (before context parallelism)
  long long q_len = 0;    ///< new tokens per sequence (0 = seq: training/prefill)
  long long kv_len = 0;   ///< context per sequence (0 = seq)
  int tp = 1;
  int cp = 1;
  int ep = 1;
  /// Expert tensor parallelism: each expert's FFN split over etp chips (0 = tp, Megatron's
  /// default when experts are sharded out of data parallelism; serving engines that place
  /// experts ep-ways inside the tp group use tp/ep).
  int etp = 0;
  bool sequence_parallel = true;
  /// Serving a quantized checkpoint: the modules it keeps in bf16 (ModelSpec::unquantized) run in
  /// bf16 (Op::unquantized). Training leaves it off: its recipes set their own formats.
  bool checkpoint_formats = false;
  /// How a MoE layer's grouped expert GEMM spends its rows (serving; training keeps Balanced).
  enum class ExpertRows {
    Balanced,    ///< every local expert gets tokens·top_k/local rows (all weights read)
    Touched,     ///< only the experts some token routes to run (expected count under uniform
                 ///< routing, E_local·(1 − (1 − k/E)^T)); idle experts read no weights
    Blockwise,   ///< compiled blockwise kernels: the routed experts' rows are padded up to
                 ///< whole blocks of expert_block rows (a few rows per expert cost a block)
  };
  ExpertRows expert_rows = ExpertRows::Balanced;
  /// Tokens this (the busiest) expert-parallel rank receives over the mean (1 = balanced).
  double expert_load = 1.0;
  /// Share of the shard's tokens·top_k routed rows that this chip's experts receive. 1 when
  /// every rank of the expert-parallel group brings tokens of its own (training's expert data
  /// parallelism, DP attention); 1/ep when the experts sit ep-ways inside a tensor-parallel
  /// group whose ranks all hold the same tokens (serving with TP attention): each rank then
  /// runs only the rows routed to its own ep-th of the experts.
  double expert_row_share = 1.0;
  long long expert_block = 0;  ///< Blockwise: rows per block
  /// LoRA fine-tuning (training): > 0 freezes every base weight and adds adapters of this rank
  /// (lora_adapter_ops) to lora_targets; 0 = every weight trains.
  int lora_rank = 0;
  LoraTargets lora_targets = LoraTargets::AllLinear;
};

/// Expected experts, of `local` on this chip out of `experts`, that at least one of `tokens`
/// tokens routes to (each picks `top_k` distinct experts uniformly): local·(1 − (1 − k/E)^T).
double expected_touched_experts(long long local, long long experts, long long top_k, long long tokens);
/// Expected maximum of n independent standard normal variables (0 for n ≤ 1; 1.4236 for 8).
double expected_max_of_normals(int n);
/// The touched experts of the busiest of `ranks` expert-parallel ranks, each holding `local`
/// experts: the mean count plus expected_max_of_normals(ranks) standard deviations of a rank's
/// count (local·p·(1 − p), p the chance an expert is touched), at most `local`.
double busiest_rank_touched_experts(long long local, long long experts, long long top_k, long long tokens, int ranks);

/// The format a checkpoint keeps an unquantized weight in (Op::unquantized, ModelSpec::
/// unquantized) under a plan whose weights are `plan_weights`: bf16, unless the plan's format is
/// no narrower.
core::Dtype unquantized_weight_dtype(core::Dtype plan_weights);

/// Forward operators of layer `layer` (0-based) for one shard.
std::vector<Op> layer_ops(const ModelSpec& m, int layer, const LayerShard& s);
/// LM head (logits) + loss for one shard; the input embedding is a gather (elementwise).
std::vector<Op> head_ops(const ModelSpec& m, const LayerShard& s);
std::vector<Op> embedding_ops(const ModelSpec& m, const LayerShard& s);
/// A multi-token-prediction module's own operators (DeepSeek-V3 MTP, Megatron's
/// MultiTokenPredictionLayer): the RMSNorms of the hidden state and of the next token's
/// embedding, and eh_proj from their concatenation (2h) back to h, column-parallel over tp. Its
/// transformer block is a copy of the last layer; it shares the embedding and the LM head.
std::vector<Op> mtp_ops(const ModelSpec& m, const LayerShard& s);

/// LoRA (Hu et al. 2021): the rank-`rank` adapter of a frozen weight GEMM `frozen` (m × k · k × n),
/// Y += (X·A)·B with A k × rank and B rank × n, as two GEMMs on the same shard: A's k and B's n
/// are the frozen op's own (a column-parallel projection's B is split like its weight and its A is
/// whole; a row-parallel one's A is split and its B whole). Trainable weights: rank·(k + n).
std::vector<Op> lora_adapter_ops(const Op& frozen, int rank);

}  // namespace xpusim::workload
