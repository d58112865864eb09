// Parameter, FLOP and byte accounting. Conventions: docs/models.md.

#include "xpusim/workload/accounting.h"

#include <algorithm>

#include "xpusim/core/check.h"
#include "xpusim/workload/ops.h"

namespace xpusim::workload {

namespace {

double d(long long v) { return static_cast<double>(v); }

/// Parameters of one norm over `width` features.
double norm_params(const ModelSpec& m, long long width) {
  const bool bias = m.norm == NormKind::LayerNorm && m.norm_bias;
  return d(width) * (bias ? 2.0 : 1.0);
}

/// GEMM weights and biases of one MLP (dense or one expert) of intermediate size `f`.
void mlp_params(const ModelSpec& m, long long f, double& matmul, double& bias) {
  const double mats = m.mlp == MlpKind::Gated ? 3.0 : 2.0;
  matmul = mats * d(m.hidden) * d(f);
  // Gated: gate and up biases (2f) + down bias (h); two-matrix: up (f) + down (h).
  bias = m.mlp_bias ? (m.mlp == MlpKind::Gated ? 2.0 * d(f) : d(f)) + d(m.hidden) : 0.0;
}

double head_matmul(const ModelSpec& m) { return d(m.vocab) * d(m.hidden); }

/// Forward attention FLOPs per token summed over layers, each layer's queries attending
/// `attended(layer)` keys; with sparse attention the lightning indexer also scores the
/// `kept(layer)` keys the layer keeps.
template <typename Attended, typename Kept>
double attention_flops_all_layers(const ModelSpec& m, Attended attended, Kept kept) {
  double f = 0;
  for (int i = 0; i < m.layers; ++i) {
    if (!m.layer_has_attention(i)) continue;
    f += attention_flops_per_token(m, i, attended(i));
    if (m.dsa.enabled()) f += indexer_flops_per_token(m, kept(i));
  }
  return f;
}

/// Σ over the layers of `per_layer(i)`.
template <typename PerLayer>
double over_layers(const ModelSpec& m, PerLayer per_layer) {
  double total = 0;
  for (int i = 0; i < m.layers; ++i) total += per_layer(i);
  return total;
}

}  // namespace

double kv_elements_per_token_layer(const ModelSpec& m, int layer, long long tp) {
  if (!m.layer_has_attention(layer)) return 0.0;
  // Sparse attention keeps each token's indexer key beside it, replicated over tp.
  const double indexer_key = m.dsa.enabled() ? d(m.dsa.index_head_dim) : 0.0;
  if (m.attention == AttnKind::Mla) return d(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) + indexer_key;
  const long long kv = m.layer_kv_heads(layer);
  const long long kv_per_chip = (kv + tp - 1) / std::max<long long>(1, tp);  // replicated when tp > kv
  return 2.0 * d(kv_per_chip) * d(m.head_dim) + indexer_key;
}

double embedding_params(const ModelSpec& m) {
  double e = d(m.vocab) * d(m.hidden);
  if (m.position == PosKind::Learned) e += d(m.max_position) * d(m.hidden);
  return e;
}

double lm_head_params(const ModelSpec& m) {
  if (m.tied_embeddings) return 0.0;
  return d(m.vocab) * d(m.hidden) + (m.lm_head_bias ? d(m.vocab) : 0.0);
}

namespace {

/// Attention weights of one layer (q/k/v/o, MLA's low-rank projections; biases, q/k norms, sinks).
void attention_params(const ModelSpec& m, int layer, LayerParams& p) {
  const double h = d(m.hidden);
  if (m.attention == AttnKind::Mla) {
    const MlaSpec& a = m.mla;
    const double qk = d(a.qk_nope_head_dim + a.qk_rope_head_dim);
    const double q = a.q_lora_rank > 0 ? h * d(a.q_lora_rank) + d(a.q_lora_rank) * m.heads * qk
                                       : h * m.heads * qk;
    const double kv_a = h * d(a.kv_lora_rank + a.qk_rope_head_dim);
    const double kv_b = d(a.kv_lora_rank) * m.heads * d(a.qk_nope_head_dim + a.v_head_dim);
    const double o = d(m.heads) * d(a.v_head_dim) * h;
    p.attn_matmul = q + kv_a + kv_b + o;
    p.attn_other = (a.q_lora_rank > 0 ? d(a.q_lora_rank) : 0.0) + d(a.kv_lora_rank);
  } else {
    const double qd = d(m.heads) * d(m.head_dim);
    const double kvd = d(m.layer_kv_heads(layer)) * d(m.head_dim);
    // Gated attention: q_proj also yields the output gate, another heads × head_dim.
    p.attn_matmul = h * qd * (m.gated_attention ? 2.0 : 1.0) + 2.0 * h * kvd + qd * h;
    if (m.attn_bias) p.attn_other += qd + 2.0 * kvd;
    if (m.attn_out_bias) p.attn_other += h;
    if (m.qk_norm) p.attn_other += 2.0 * d(m.head_dim);
  }
  if (m.attn_sinks) p.attn_other += d(m.heads);
  if (m.dsa.enabled()) {
    // The lightning indexer: wq_b from the query latent, wk and weights_proj from the input, and
    // the LayerNorm (weight and bias) of its key.
    const SparseAttentionSpec& a = m.dsa;
    const double q_in = m.attention == AttnKind::Mla && m.mla.q_lora_rank > 0 ? d(m.mla.q_lora_rank) : h;
    p.attn_matmul += q_in * d(a.index_heads * a.index_head_dim) + h * d(a.index_head_dim) + h * d(a.index_heads);
    p.attn_other += 2.0 * d(a.index_head_dim);
  }
}

/// Mamba-2 mixer weights (HF Mamba2Mixer / Megatron MambaMixer), counted as the layer's token
/// mixer: in_proj and out_proj are its GEMMs; the depthwise conv (and its bias), dt_bias, A_log,
/// D and the gated RMSNorm its other weights.
void mamba_params(const ModelSpec& m, LayerParams& p) {
  const MambaSpec& s = m.mamba;
  const double h = d(m.hidden);
  if (s.version == 1) {
    // Mamba-1: in_proj, x_proj (to dt, B, C), dt_proj (with its bias) and out_proj; the conv over
    // x, A_log (a state per channel), D, and Jamba's RMSNorms of dt, B and C.
    const double inner = d(s.inner()), rank = d(s.dt_rank), n = d(s.state);
    p.attn_matmul = h * 2.0 * inner + inner * (rank + 2.0 * n) + rank * inner + inner * h;
    if (s.proj_bias) p.attn_other += 2.0 * inner + h;
    p.attn_other += inner * (d(s.conv_kernel) + (s.conv_bias ? 1.0 : 0.0)) + inner + inner * n + inner;
    if (s.dt_bc_norms) p.attn_other += rank + 2.0 * n;
    return;
  }
  p.attn_matmul = h * d(s.in_proj_width()) + d(s.inner()) * h;
  if (s.proj_bias) p.attn_other += d(s.in_proj_width()) + h;
  p.attn_other += d(s.conv_channels()) * (d(s.conv_kernel) + (s.conv_bias ? 1.0 : 0.0));
  p.attn_other += 3.0 * d(s.heads) + d(s.inner());
}

/// Gated DeltaNet weights (Qwen3-Next): in_proj_qkvz and in_proj_ba, out_proj (its GEMMs); the
/// depthwise conv over q, k, v (no bias), dt_bias and A_log per value head and the gated norm over
/// one value head.
void linear_attention_params(const ModelSpec& m, LayerParams& p) {
  const LinearAttentionSpec& s = m.linear;
  const double h = d(m.hidden);
  p.attn_matmul = h * d(s.in_proj_width()) + d(s.value_width()) * h;
  p.attn_other += d(s.conv_channels()) * d(s.conv_kernel) + 2.0 * d(s.value_heads) + d(s.value_dim);
}

}  // namespace

LayerParams layer_params(const ModelSpec& m, int layer) {
  XS_CHECK(layer >= 0 && layer < m.layers, "layer index out of range");
  LayerParams p;
  const double h = d(m.hidden);
  // The token mixer (attention or Mamba-2) and its input norm; a block with only an MLP has one
  // norm, before the MLP.
  const LayerBlock block = m.layer_block(layer);
  if (m.layer_is_mamba(layer)) mamba_params(m, p);
  else if (block == LayerBlock::LinearAttentionMlp) linear_attention_params(m, p);
  else if (m.layer_has_attention(layer)) attention_params(m, layer, p);
  else if (m.layer_linear_mixer(layer)) p.attn_matmul = h * h;  // Nemotron-NAS: attention as a linear layer
  p.attn_other += norm_params(m, m.hidden);  // the attention (or shared, or only) input norm
  p.mlp_norm = m.layer_norms(layer) >= 2 && m.layer_has_mlp_part(layer) ? norm_params(m, m.hidden) : 0.0;
  if (m.layer_linear_mlp(layer)) p.dense_matmul = h * h;  // Nemotron-NAS: the MLP as a linear layer
  if (!m.layer_has_mlp(layer)) return p;

  // MLP.
  p.moe = m.layer_is_moe(layer);
  if (p.moe) {
    p.experts = m.moe.num_experts;
    p.top_k = m.moe.experts_per_token;
    p.router_matmul = h * d(m.moe.num_experts);
    p.router_bias = m.moe.router_bias ? d(m.moe.num_experts) : 0.0;
    mlp_params(m, m.moe.expert_ffn, p.expert_matmul, p.expert_bias);
    if (m.moe.shared_experts > 0) {
      double sm = 0, sb = 0;
      mlp_params(m, m.moe.shared_ffn, sm, sb);
      p.shared_matmul = m.moe.shared_experts * sm;
      p.shared_bias = m.moe.shared_experts * sb;
    }
  } else {
    mlp_params(m, m.layer_ffn(layer), p.dense_matmul, p.dense_bias);
  }
  return p;
}

double mtp_own_params(const ModelSpec& m) {
  const double h = d(m.hidden);
  return 2.0 * h * h + 2.0 * norm_params(m, m.hidden);
}

double mtp_module_params(const ModelSpec& m) { return layer_params(m, m.layers - 1).total() + mtp_own_params(m); }

ParamCounts count_params(const ModelSpec& m) {
  ParamCounts c;
  c.embedding = embedding_params(m);
  c.lm_head = lm_head_params(m);
  const double final_norm = norm_params(m, m.hidden);
  c.total = c.active = c.embedding + c.lm_head + final_norm;
  c.matmul_active = head_matmul(m);
  for (int i = 0; i < m.layers; ++i) {
    const LayerParams p = layer_params(m, i);
    c.total += p.total();
    c.active += p.active();
    c.routed_total += p.routed();
    c.matmul_active += p.matmul_active();
    if (i == 0) c.per_layer_dense_attn = p.attention();
    if (p.moe && c.expert == 0) c.expert = p.expert_matmul + p.expert_bias;
  }
  return c;
}

double output_side_matmul(const ModelSpec& m, int layer) {
  const LayerParams p = layer_params(m, layer);
  const double h = d(m.hidden);
  double o = 0;  // the mixer's output projection
  if (m.layer_is_mamba(layer)) o = d(m.mamba.inner()) * h;  // out_proj
  else if (m.layer_is_linear_attention(layer)) o = d(m.linear.value_width()) * h;
  else if (m.layer_has_attention(layer)) o = d(m.heads) * d(m.v_head_dim()) * h;
  else if (m.layer_linear_mixer(layer)) o = h * h;
  if (m.layer_linear_mlp(layer)) o += h * h;
  if (!m.layer_has_mlp(layer)) return o;
  if (!p.moe) return o + h * d(m.layer_ffn(layer));
  const double shared = d(m.moe.shared_experts) * h * d(m.moe.shared_ffn);
  return o + p.router_matmul + d(p.top_k) * h * d(m.moe.expert_ffn) + shared;
}

double causal_mean_keys(long long seq, long long window) {
  if (seq <= 0) return 0.0;
  const double s = d(seq);
  if (window <= 0 || window >= seq) return (s + 1.0) / 2.0;
  const double w = d(window);
  return (w * (w + 1.0) / 2.0 + (s - w) * w) / s;
}

double attention_flops_per_token(const ModelSpec& m, int layer, double keys) {
  (void)layer;  // every layer has the same head shape; the window is applied by the caller
  return 2.0 * d(m.heads) * d(m.qk_head_dim() + m.v_head_dim()) * keys;
}

double indexer_flops_per_token(const ModelSpec& m, double keys) {
  return 2.0 * d(m.dsa.index_heads) * d(m.dsa.index_head_dim) * keys;
}

double mamba_scan_flops_per_token(const ModelSpec& m, long long seq) {
  const MambaSpec& s = m.mamba;
  const double q = d(std::max<long long>(1, std::min(s.chunk, seq)));
  const double n = d(s.state), p = d(s.head_dim);
  return 2.0 * (d(s.groups) * q * n + d(s.heads) * (q * p + 2.0 * n * p));
}

double linear_attention_scan_flops_per_token(const ModelSpec& m, long long seq) {
  const LinearAttentionSpec& s = m.linear;
  const double c = d(std::max<long long>(1, std::min(s.chunk, seq)));
  const double dk = d(s.key_dim), dv = d(s.value_dim);
  return 2.0 * (d(s.key_heads) * 2.0 * c * dk + d(s.value_heads) * (c * (2.0 * dv + dk) + 3.0 * dk * dv));
}

double recurrent_scan_flops_per_token(const ModelSpec& m, int layer, long long seq) {
  if (m.layer_is_mamba(layer) && m.mamba.version == 1)  // selective scan: 4 multiply-adds per state element
    return 2.0 * 4.0 * d(m.mamba.inner()) * d(m.mamba.state);
  if (m.layer_is_mamba(layer)) return mamba_scan_flops_per_token(m, seq);
  if (m.layer_is_linear_attention(layer)) return linear_attention_scan_flops_per_token(m, seq);
  return 0.0;
}

double recurrent_step_flops_per_token(const ModelSpec& m, int layer) {
  if (m.layer_is_mamba(layer))  // Mamba-1 also discretises A and B each step
    return 2.0 * (m.mamba.version == 1 ? 4.0 : 2.0) * d(m.mamba.heads) * d(m.mamba.head_dim) * d(m.mamba.state);
  if (m.layer_is_linear_attention(layer))
    return 2.0 * 3.0 * d(m.linear.value_heads) * d(m.linear.key_dim) * d(m.linear.value_dim);
  return 0.0;
}

core::Bytes recurrent_state_bytes_per_layer(const ModelSpec& m, int layer, core::Dtype dtype) {
  double state = 0, conv = 0;
  if (m.layer_is_mamba(layer)) {
    const MambaSpec& s = m.mamba;
    state = d(s.heads) * d(s.head_dim) * d(s.state);
    conv = d(s.conv_channels()) * d(std::max<long long>(0, s.conv_kernel - 1));
  } else if (m.layer_is_linear_attention(layer)) {
    const LinearAttentionSpec& s = m.linear;
    state = d(s.value_heads) * d(s.key_dim) * d(s.value_dim);
    conv = d(s.conv_channels()) * d(std::max<long long>(0, s.conv_kernel - 1));
  }
  return core::bytes((state + conv) * core::bytes_per_element(dtype));
}

core::Bytes recurrent_state_bytes_per_sequence(const ModelSpec& m, core::Dtype dtype) {
  return core::bytes(over_layers(m, [&](int i) { return recurrent_state_bytes_per_layer(m, i, dtype).base(); }));
}

double lora_layer_params(const ModelSpec& m, int layer, int rank, LoraTargets targets) {
  if (rank <= 0) return 0.0;
  LayerShard whole;
  whole.batch = 1;
  whole.seq = 1;
  double p = 0;
  for (const auto& op : layer_ops(m, layer, whole))
    if (op.lora_adapted(targets)) p += static_cast<double>(rank) * d(op.k + op.n);
  return p;
}

double lora_params(const ModelSpec& m, int rank, LoraTargets targets) {
  double p = 0;
  for (int i = 0; i < m.layers; ++i) p += lora_layer_params(m, i, rank, targets);
  return p;
}

TrainFlops train_flops_per_token(const ModelSpec& m, long long seq, RecomputeKind rc, int lora_rank,
                                 LoraTargets lora_targets) {
  const double dense = count_params(m).matmul_active;
  const double attn = attention_flops_all_layers(
      m, [&](int i) { return causal_mean_keys(seq, m.layer_key_cap(i)); },
      [&](int i) { return causal_mean_keys(seq, m.layer_window(i)); });
  // The recurrent layers' chunked scans count like attention: forward, and twice it backward.
  const double scan = over_layers(m, [&](int i) { return recurrent_scan_flops_per_token(m, i, seq); });
  const double adapters = lora_params(m, lora_rank, lora_targets);
  TrainFlops f;
  // Forward 2N + attn, backward twice the forward; frozen weights (LoRA) skip their weight
  // gradients, so their backward is 2N, and the adapters train in full.
  f.model = lora_rank > 0 ? 4.0 * dense + 3.0 * attn + 6.0 * adapters : 6.0 * dense + 3.0 * attn;
  f.model += 3.0 * scan;
  switch (rc) {
    case RecomputeKind::None: f.hardware = f.model; break;
    case RecomputeKind::Selective: f.hardware = f.model + attn; break;  // QK^T, softmax, AV
    case RecomputeKind::SelectiveAllButProjections: {
      double output_side = 0;
      for (int i = 0; i < m.layers; ++i) output_side += output_side_matmul(m, i);
      f.hardware = f.model + 2.0 * output_side + attn;
      break;
    }
    // The transformer layers' whole forward; the LM head sits outside the checkpointed layers.
    case RecomputeKind::Full:
      f.hardware = f.model + 2.0 * (dense - head_matmul(m) + adapters) + attn + scan;
      break;
  }
  return f;
}

double prefill_flops_per_token(const ModelSpec& m, long long prompt_len) {
  const double mm = count_params(m).matmul_active;
  const double head = head_matmul(m);
  const double attn = attention_flops_all_layers(
      m, [&](int i) { return causal_mean_keys(prompt_len, m.layer_key_cap(i)); },
      [&](int i) { return causal_mean_keys(prompt_len, m.layer_window(i)); });
  const double p = prompt_len > 0 ? d(prompt_len) : 1.0;
  const double scan = over_layers(m, [&](int i) { return recurrent_scan_flops_per_token(m, i, prompt_len); });
  return 2.0 * (mm - head) + 2.0 * head / p + attn + scan;
}

double decode_flops_per_token(const ModelSpec& m, long long context) {
  const double mm = count_params(m).matmul_active;
  const double attn = attention_flops_all_layers(
      m, [&](int i) { return d(m.layer_attended_keys(i, context)); },
      [&](int i) { return d(m.layer_context(i, context)); });
  return 2.0 * mm + attn + over_layers(m, [&](int i) { return recurrent_step_flops_per_token(m, i); });
}

core::Bytes weight_bytes(const ModelSpec& m, core::Dtype dtype) {
  const double unq = unquantized_params(m);
  return core::bytes((count_params(m).total - unq) * core::bytes_per_element(dtype) +
                     unq * core::bytes_per_element(unquantized_weight_dtype(dtype)));
}

double unquantized_layer_params(const ModelSpec& m, const LayerParams& lp) {
  return (m.unquantized.attention ? lp.attention() : 0.0) +
         (m.unquantized.router ? lp.router_matmul + lp.router_bias : 0.0);
}

double unquantized_params(const ModelSpec& m) {
  if (!m.unquantized.any()) return 0.0;
  double n = over_layers(m, [&](int i) { return unquantized_layer_params(m, layer_params(m, i)); });
  if (m.unquantized.embedding) n += embedding_params(m);
  if (m.unquantized.lm_head) n += lm_head_params(m);
  return n;
}

core::Bytes active_weight_bytes(const ModelSpec& m, core::Dtype dtype) {
  return core::bytes(count_params(m).active * core::bytes_per_element(dtype));
}

core::Bytes kv_bytes_per_token(const ModelSpec& m, core::Dtype dtype) {
  return core::bytes(over_layers(m, [&](int i) { return kv_elements_per_token_layer(m, i); }) *
                     core::bytes_per_element(dtype));
}

core::Bytes kv_bytes_for_context(const ModelSpec& m, core::Dtype dtype, long long context) {
  // Σ over layers of the tokens each layer keeps times its elements per token.
  const double elements = over_layers(
      m, [&](int i) { return d(m.layer_context(i, context)) * kv_elements_per_token_layer(m, i); });
  return core::bytes(elements * core::bytes_per_element(dtype));
}

}  // namespace xpusim::workload
