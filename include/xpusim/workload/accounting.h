#pragma once
// Exact parameter, FLOP and byte accounting for a ModelSpec.
//
// Conventions (documented in docs/models.md):
// - A GEMM of (m × k) by (k × n) is 2·m·n·k FLOPs.
// - Model FLOPs per training token = 6 × (active matmul parameters, incl. the LM head, not
//   the input embedding) + attention FLOPs (QK^T and AV: 2 × 2 × s_ctx × d_head × heads per
//   token forward, times 3 for training; causal halves the average context).
// - Hardware FLOPs add the recomputed forward: selective recompute re-runs attention's
//   score/softmax/AV part; full recompute re-runs the transformer layers' forward (8N instead
//   of 6N for the layers; the LM head is not checkpointed, as in Megatron-LM).

#include "xpusim/core/dtype.h"
#include "xpusim/core/units.h"
#include "xpusim/workload/model.h"
#include "xpusim/workload/ops.h"

namespace xpusim::workload {

struct ParamCounts {
  double total = 0;       ///< every weight, incl. embeddings, LM head (untied), norms, biases
  double active = 0;      ///< weights touched by one token (top-k + shared experts)
  double embedding = 0;   ///< input embedding (+ learned positions)
  double lm_head = 0;     ///< 0 when tied
  double per_layer_dense_attn = 0;  ///< attention block (incl. its norm) of one layer
  double expert = 0;      ///< one routed expert
  // Added (additive):
  double routed_total = 0;  ///< all routed-expert weights of all layers (what EP shards)
  double matmul_active = 0; ///< weights one token multiplies: active layers' GEMM weights + LM
                            ///< head (counted even when tied); no embedding, norms or biases
};

ParamCounts count_params(const ModelSpec& m);
/// The embedding (+ learned positions) and the untied LM head alone: what a pipeline's first and
/// last stages add, without count_params' walk over every layer.
double embedding_params(const ModelSpec& m);
double lm_head_params(const ModelSpec& m);

/// Parameters of one layer, split by what they are (for memory and FLOP accounting).
struct LayerParams {
  bool moe = false;
  double attn_matmul = 0;    ///< q/k/v/o (MLA: q_a, q_b, kv_a, kv_b, o) GEMM weights
  double attn_other = 0;     ///< attention biases, q/k norms, MLA latent norms, sinks, input norm
  double mlp_norm = 0;       ///< the MLP's input norm (0 when one norm feeds both branches)
  double dense_matmul = 0;   ///< dense MLP GEMM weights (0 in MoE layers)
  double dense_bias = 0;
  double router_matmul = 0;
  double router_bias = 0;
  double expert_matmul = 0;  ///< ONE routed expert's GEMM weights
  double expert_bias = 0;    ///< ONE routed expert's biases
  double shared_matmul = 0;  ///< all shared experts
  double shared_bias = 0;
  int experts = 0;
  int top_k = 0;

  double attention() const { return attn_matmul + attn_other; }
  double routed() const { return experts * (expert_matmul + expert_bias); }
  /// Everything but the routed experts (what TP shards and every EP rank holds).
  double non_routed() const {
    return attention() + mlp_norm + dense_matmul + dense_bias + router_matmul + router_bias +
           shared_matmul + shared_bias;
  }
  double total() const { return non_routed() + routed(); }
  double active() const { return non_routed() + top_k * (expert_matmul + expert_bias); }
  double matmul_active() const {
    return attn_matmul + dense_matmul + router_matmul + shared_matmul + top_k * expert_matmul;
  }
};
LayerParams layer_params(const ModelSpec& m, int layer);
/// Weights of a multi-token-prediction module besides its block: eh_proj (2h × h) and its two
/// norms (of the hidden state and of the next token's embedding).
double mtp_own_params(const ModelSpec& m);
/// Weights one multi-token-prediction module adds to the model: its block (a copy of the last
/// layer's) and mtp_own_params.
double mtp_module_params(const ModelSpec& m);

/// Mean number of keys a query sees in a causal sequence of `seq` tokens with an optional
/// sliding window (0 = none): (1/s)·Σ_{i=1..s} min(i, w); (s+1)/2 without a window.
double causal_mean_keys(long long seq, long long window);

/// Forward attention FLOPs (QK^T and AV) of one query token in layer `layer` attending to
/// `keys` keys: 2·heads·(d_qk + d_v)·keys.
double attention_flops_per_token(const ModelSpec& m, int layer, double keys);

/// KV-cache elements per token of layer `layer` on one of `tp` chips: K and V of the layer's kv
/// heads on the chip (replicated when tp exceeds them), MLA's latent and rope key (replicated),
/// and sparse attention's indexer key (replicated); 0 for a layer without attention.
double kv_elements_per_token_layer(const ModelSpec& m, int layer, long long tp = 1);

/// Forward FLOPs of sparse attention's lightning indexer for one query scoring `keys` keys:
/// 2·index_heads·index_head_dim·keys (its projections are among the layer's GEMM weights).
double indexer_flops_per_token(const ModelSpec& m, double keys);

/// Active GEMM weights per token of layer `layer` downstream of the attention core or the MLP
/// activation: the output projection, the down-projections (routed top-k and shared) and the
/// router. A remat policy that saves only the QKV and up-projection outputs recomputes these.
double output_side_matmul(const ModelSpec& m, int layer);

/// Selective: the attention core (Megatron); SelectiveAllButProjections: the layer's forward
/// except its QKV and up-projection GEMMs (AXLearn); Full: the layer's whole forward.
enum class RecomputeKind { None, Selective, SelectiveAllButProjections, Full };

/// Training FLOPs per token at sequence length `seq` (causal attention).
struct TrainFlops {
  double model = 0;     ///< forward + backward, no recompute (what MFU counts)
  double hardware = 0;  ///< including recomputation
};
/// With `lora_rank` > 0 (LoRA fine-tuning) every base weight is frozen: the backward computes
/// input gradients only (2N, not 4N), and the adapters (lora_params) train in full: model FLOPs
/// are 4N + 3·attention + 6·adapters per token.
TrainFlops train_flops_per_token(const ModelSpec& m, long long seq, RecomputeKind rc, int lora_rank = 0,
                                 LoraTargets lora_targets = LoraTargets::AllLinear);

/// Forward FLOPs per token of one Mamba-2 layer's chunked SSD scan (the matmul form of Dao & Gu
/// 2024 with chunks of min(chunk, seq) tokens): per group C·Bᵀ (Q·N multiply-adds per token),
/// per head the intra-chunk (L∘CBᵀ)·X (Q·P), the chunk state Bᵀ·X (N·P) and its read-out C·h
/// (N·P). The in_proj and out_proj GEMMs are parameters (count_params), not counted here.
double mamba_scan_flops_per_token(const ModelSpec& m, long long seq);
/// Forward FLOPs per token of one gated DeltaNet layer's chunked delta rule (chunks of
/// C = min(chunk, seq)): per key head Q·Kᵀ and K·Kᵀ within the chunk (2·C·dk multiply-adds per
/// token), per value head the WY factors and the intra-chunk output (C·(2·dv + dk)) and the state
/// read-out, correction and update (3·dk·dv).
double linear_attention_scan_flops_per_token(const ModelSpec& m, long long seq);
/// The scan of layer `layer` if it is recurrent, else 0: Mamba-2's chunked SSD, DeltaNet's chunked
/// delta rule, or Mamba-1's selective scan (4 multiply-adds per channel and state element).
double recurrent_scan_flops_per_token(const ModelSpec& m, int layer, long long seq);
/// Forward FLOPs of layer `layer`'s recurrent step (decode), 0 for other layers: Mamba-2 updates
/// and reads its state with 2 multiply-adds per element, Mamba-1 with 4 (it also discretises A
/// and B), the delta rule with 3 (read-out, correction, update).
double recurrent_step_flops_per_token(const ModelSpec& m, int layer);
/// Recurrent state of layer `layer` for one sequence, 0 for other layers: Mamba-2's SSM state
/// (heads·P·N) or DeltaNet's (value heads·dk·dv), and the last conv_kernel − 1 inputs of the
/// causal conv, in `dtype`. Constant in the context length.
core::Bytes recurrent_state_bytes_per_layer(const ModelSpec& m, int layer, core::Dtype dtype);
/// The whole model's recurrent state of one sequence (0 without recurrent layers).
core::Bytes recurrent_state_bytes_per_sequence(const ModelSpec& m, core::Dtype dtype);

/// Trainable LoRA adapter weights of layer `layer` at rank `rank`: rank·(in + out) for each
/// adapted weight (workload::lora_adapter_ops; a fused QKV projection has one adapter, as
/// NeMo's linear_qkv); 0 for rank 0.
double lora_layer_params(const ModelSpec& m, int layer, int rank, LoraTargets targets);
/// The whole model's LoRA adapter weights at rank `rank`.
double lora_params(const ModelSpec& m, int rank, LoraTargets targets);

/// Forward FLOPs of one prefill token, averaged over a causal prompt of length `prompt_len`.
/// The LM head runs for the last prompt position only (as serving engines do), so its
/// 2·vocab·hidden is divided by prompt_len.
double prefill_flops_per_token(const ModelSpec& m, long long prompt_len);
/// Forward FLOPs of one decode step of one sequence whose context (incl. the new token) is L.
double decode_flops_per_token(const ModelSpec& m, long long context);

/// Parameters a quantized checkpoint keeps in bf16 (ModelSpec::unquantized): its attention and
/// router weights, embedding and LM head as its quantization_config lists them; 0 for most models.
double unquantized_params(const ModelSpec& m);
/// Of one layer's parameters `lp`, those the checkpoint keeps in bf16 (attention, router).
double unquantized_layer_params(const ModelSpec& m, const LayerParams& lp);

/// Bytes of all weights stored in `dtype`, those the checkpoint keeps unquantized in bf16
/// (unquantized_params; norms and biases kept in bf16 are ignored).
core::Bytes weight_bytes(const ModelSpec& m, core::Dtype dtype);
/// Bytes of the weights one decode step must read (active experts only when the batch is 1).
core::Bytes active_weight_bytes(const ModelSpec& m, core::Dtype dtype);
/// KV-cache bytes per token across all attention layers (MLA: compressed latent + rope key; sliding
/// layers are counted in full here; see kv_bytes_per_token_at for the window cap).
core::Bytes kv_bytes_per_token(const ModelSpec& m, core::Dtype dtype);
/// KV-cache bytes of one sequence at context L, with sliding-window layers capped at the window.
core::Bytes kv_bytes_for_context(const ModelSpec& m, core::Dtype dtype, long long context);

}  // namespace xpusim::workload
