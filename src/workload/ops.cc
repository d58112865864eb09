#include "xpusim/workload/ops.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

namespace xpusim::workload {

double Op::mean_keys() const {
  // Queries are the last q_len positions of a kv_len context: causally the average query sees
  // kv_len − q_len/2 keys (exactly half when q_len == kv_len); a sliding window caps the context.
  const double kv = static_cast<double>(kv_len);
  const double seen = causal ? std::max(0.0, kv - static_cast<double>(q_len) / 2.0) : kv;
  return window > 0 ? std::min(seen, static_cast<double>(window)) : seen;
}

double Op::flops() const {
  switch (kind) {
    case OpKind::Gemm:
      return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
             static_cast<double>(count);
    case OpKind::Attention: {
      // QK^T and AV: 2·q·kv·d each, per head, over the keys each query sees.
      const double pairs = static_cast<double>(q_len) * mean_keys();
      return 2.0 * pairs * static_cast<double>(d_qk + d_v) * static_cast<double>(heads) *
             static_cast<double>(batch);
    }
    case OpKind::Elementwise:
    case OpKind::MoeDispatch:
      return elements;  // ~1 FLOP per element; negligible next to GEMMs
    case OpKind::Scan: {
      const double chunk = static_cast<double>(q_len), state = static_cast<double>(d_qk);
      const double width = static_cast<double>(d_v);
      // Delta rule per token: Q·Kᵀ and K·Kᵀ per key head (2·C·dk), per value head the WY factors
      // and intra-chunk output (C·(2·dv + dk)) and the state read-out, correction, update (3·dk·dv).
      if (scan_kind == ScanKind::Selective)  // per channel and state element: discretise, B·x, update, read-out
        return 2.0 * 4.0 * static_cast<double>(m) * static_cast<double>(heads * d_v) * state;
      if (scan_kind == ScanKind::DeltaRule)
        return 2.0 * static_cast<double>(m) *
               (static_cast<double>(kv_heads) * 2.0 * chunk * state +
                static_cast<double>(heads) * (chunk * (2.0 * width + state) + 3.0 * state * width));
      // SSD per token: C·Bᵀ per group (Q·N), per head (L∘CBᵀ)·X (Q·P), Bᵀ·X and C·h (N·P each).
      return 2.0 * static_cast<double>(m) *
             (static_cast<double>(kv_heads) * chunk * state + static_cast<double>(heads) * (chunk * width + 2.0 * state * width));
    }
  }
  return 0.0;
}

double expected_touched_experts(long long local, long long experts, long long top_k, long long tokens) {
  if (experts <= 0 || local <= 0) return 0.0;
  const double miss = 1.0 - std::min(1.0, static_cast<double>(top_k) / static_cast<double>(experts));
  return static_cast<double>(local) * (1.0 - std::pow(miss, static_cast<double>(std::max<long long>(0, tokens))));
}

namespace {

// E[max of n standard normals] = ∫ x·n·φ(x)·Φ(x)^(n−1) dx, by the trapezoid rule over ±9
// (deterministic; the tails beyond add under 1e-9 for n ≤ 10^6).
double integrate_max_of_normals(int n) {
  constexpr int kSteps = 1800;
  constexpr double kSpan = 9.0, kDx = 2.0 * kSpan / kSteps;
  const double inv_sqrt_2pi = 1.0 / std::sqrt(2.0 * M_PI);
  double sum = 0.0;
  for (int i = 0; i <= kSteps; ++i) {
    const double x = -kSpan + kDx * i;
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    const double f = x * n * inv_sqrt_2pi * std::exp(-0.5 * x * x) * std::pow(cdf, n - 1);
    sum += (i == 0 || i == kSteps) ? 0.5 * f : f;
  }
  return sum * kDx;
}

}  // namespace

double expected_max_of_normals(int n) {
  if (n <= 1) return 0.0;
  // Expert-parallel degrees up to 64 from a table built once (a step cost asks per layer kind).
  constexpr int kTabulated = 64;
  static const std::vector<double> table = [] {
    std::vector<double> t(kTabulated + 1, 0.0);
    for (int i = 2; i <= kTabulated; ++i) t[static_cast<size_t>(i)] = integrate_max_of_normals(i);
    return t;
  }();
  if (n <= kTabulated) return table[static_cast<size_t>(n)];
  // Wider groups (wide EP over a rack) once each, shared by the threads of a run.
  static std::mutex wide_lock;
  static std::map<int, double> wide;
  const std::lock_guard<std::mutex> hold(wide_lock);
  const auto it = wide.find(n);
  return it != wide.end() ? it->second : wide.emplace(n, integrate_max_of_normals(n)).first->second;
}

double busiest_rank_touched_experts(long long local, long long experts, long long top_k, long long tokens, int ranks) {
  const double mean = expected_touched_experts(local, experts, top_k, tokens);
  if (ranks <= 1 || local <= 0) return mean;
  // Each local expert is touched independently with probability p (to first order): a rank's
  // count has variance local·p·(1 − p), and the step waits for the busiest of `ranks` ranks.
  const double p = mean / static_cast<double>(local);
  const double sd = std::sqrt(static_cast<double>(local) * p * (1.0 - p));
  return std::min(static_cast<double>(local), mean + expected_max_of_normals(ranks) * sd);
}

namespace {

long long div_up(long long a, long long b) { return (a + b - 1) / b; }

Op gemm(std::string name, GemmRole role, long long m, long long n, long long k, long long count = 1) {
  Op o;
  o.kind = OpKind::Gemm;
  o.name = std::move(name);
  o.role = role;
  o.m = m;
  o.n = n;
  o.k = k;
  o.count = count;
  o.weights = true;
  return o;
}

Op elementwise(std::string name, double elements) {
  Op o;
  o.kind = OpKind::Elementwise;
  o.name = std::move(name);
  o.elements = elements;
  return o;
}

/// The per-chip sizes one layer's operators are built from.
struct LayerDims {
  long long q_len, kv_len, tokens, hidden, tp, heads, kv_heads;
};

LayerDims layer_dims(const ModelSpec& md, int layer, const LayerShard& s) {
  LayerDims d;
  d.q_len = s.q_len > 0 ? s.q_len : s.seq;
  d.kv_len = s.kv_len > 0 ? s.kv_len : s.seq;
  d.tokens = s.batch * div_up(d.q_len, s.cp);  // tokens on this chip
  d.hidden = md.hidden;
  d.tp = s.tp;
  d.heads = std::max<long long>(1, md.heads / d.tp);
  d.kv_heads = std::max<long long>(1, md.layer_kv_heads(layer) / d.tp);
  return d;
}

/// Query/key/value projections (MLA: low-rank q and kv); sets the per-head widths d_qk, d_v.
void add_qkv_projections(const ModelSpec& md, const LayerDims& d, std::vector<Op>& ops, long long& d_qk,
                         long long& d_v) {
  const long long tokens = d.tokens, h = d.hidden, heads = d.heads, kvh = d.kv_heads;
  d_qk = md.head_dim;
  d_v = md.head_dim;
  if (md.attention == AttnKind::Mla) {
    const auto& a = md.mla;
    d_qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    d_v = a.v_head_dim;
    if (a.q_lora_rank > 0) {
      ops.push_back(gemm("q_a_proj", GemmRole::QkvProjection, tokens, a.q_lora_rank, h));
      ops.push_back(gemm("q_b_proj", GemmRole::QkvProjection, tokens, heads * d_qk, a.q_lora_rank));
    } else {
      ops.push_back(gemm("q_proj", GemmRole::QkvProjection, tokens, heads * d_qk, h));
    }
    ops.push_back(gemm("kv_a_proj", GemmRole::QkvProjection, tokens, a.kv_lora_rank + a.qk_rope_head_dim, h));
    ops.push_back(gemm("kv_b_proj", GemmRole::QkvProjection, tokens, heads * (a.qk_nope_head_dim + d_v), a.kv_lora_rank));
  } else {
    // Gated attention: the query projection also yields the output gate.
    const long long q_heads = md.gated_attention ? 2 * heads : heads;
    ops.push_back(gemm("qkv_proj", GemmRole::QkvProjection, tokens, (q_heads + 2 * kvh) * md.head_dim, h));
  }
}

Op attention_op(const ModelSpec& md, int layer, const LayerShard& s, const LayerDims& d, long long d_qk,
                long long d_v) {
  const long long q_len = d.q_len, kv_len = d.kv_len, heads = d.heads, kvh = d.kv_heads;
  Op at;
  at.kind = OpKind::Attention;
  at.name = "attention";
  at.batch = s.batch;
  at.heads = heads;
  at.kv_heads = md.attention == AttnKind::Mla ? heads : kvh;
  at.q_len = div_up(q_len, s.cp);
  // With context parallelism each chip's queries attend over the whole context in a ring;
  // the causal work per chip is the total divided by cp (load-balanced chunking).
  at.kv_len = kv_len;
  at.causal = true;
  at.d_qk = d_qk;
  at.d_v = d_v;
  at.window = md.layer_key_cap(layer);  // the sliding window, or sparse attention's top-k
  if (s.cp > 1) {
    // Balanced ring attention: every chip does 1/cp of the causal work over the full context.
    at.q_len = q_len / s.cp;
    at.kv_len = kv_len;
    at.causal = false;
    // Non-causal over full kv with q_len/cp queries = 2× causal share; halve kv to keep
    // total = causal total / cp.
    at.kv_len = std::max<long long>(1, kv_len / 2);
    at.kv_chunks = s.cp;
  }
  return at;
}

/// DeepSeek Sparse Attention's lightning indexer: queries from the query latent (index_heads of
/// index_head_dim, split over tp like the attention heads), one key per token and per-head
/// weights from the layer input, then the scores of every earlier key (QKᵀ alone: no values; the
/// ReLU and the head-weighted sum are elementwise) and the top-k selection over them.
void add_lightning_indexer(const ModelSpec& md, int layer, const LayerShard& s, const LayerDims& d,
                           const Op& attention, std::vector<Op>& ops) {
  const SparseAttentionSpec& a = md.dsa;
  const long long heads = std::max<long long>(1, a.index_heads / d.tp);
  const long long q_in = md.attention == AttnKind::Mla && md.mla.q_lora_rank > 0 ? md.mla.q_lora_rank : d.hidden;
  ops.push_back(gemm("indexer_q", GemmRole::Other, d.tokens, heads * a.index_head_dim, q_in));
  ops.push_back(gemm("indexer_k", GemmRole::Other, d.tokens, a.index_head_dim, d.hidden));
  ops.push_back(gemm("indexer_weights", GemmRole::Other, d.tokens, heads, d.hidden));
  Op scores = attention;
  scores.name = "indexer_scores";
  scores.heads = heads;
  scores.kv_heads = 1;
  scores.d_qk = a.index_head_dim;
  scores.d_v = 0;
  scores.window = md.layer_window(layer);  // every key the layer keeps
  ops.push_back(scores);
  // Top-k over each query's scores: read them once.
  ops.push_back(elementwise("indexer_topk", static_cast<double>(s.batch) * static_cast<double>(scores.q_len) *
                                                scores.mean_keys()));
}

/// Local experts whose grouped-GEMM member runs (and reads its weights): all of them, or on the
/// touched path the expected number some token routes to. The local experts serve the tokens of
/// the whole expert-parallel group: ep/tp engines' worth when the experts spread beyond the
/// tensor-parallel group (DP attention), else the step's T.
long long running_experts(const ModelSpec& md, const LayerShard& s, long long local, long long tokens) {
  if (s.expert_rows == LayerShard::ExpertRows::Balanced) return local;
  const long long tp = std::max(1, s.tp);
  const long long group_tokens = tokens * std::max<long long>(1, s.ep / tp);
  // The expert-parallel ranks synchronise every layer: the step runs at the busiest rank's count.
  const double touched = busiest_rank_touched_experts(local, md.moe.num_experts, md.moe.experts_per_token,
                                                      group_tokens, std::max(1, s.ep));
  return std::clamp<long long>(static_cast<long long>(std::ceil(touched - 1e-9)), 1, local);
}

/// Router, dispatch and the local experts' grouped GEMMs (plus shared experts) of a MoE layer.
void add_moe_mlp(const ModelSpec& md, const LayerShard& s, const LayerDims& d, int mats_in, std::vector<Op>& ops) {
  const long long tokens = d.tokens, h = d.hidden, tp = d.tp;
    const auto& e = md.moe;
    ops.push_back(gemm("router", GemmRole::Other, tokens, e.num_experts, h));
    ops.push_back(elementwise("router_softmax_topk", 4.0 * static_cast<double>(tokens) * e.num_experts));
    // Balanced routing: this chip's experts process their share of the tokens·top_k rows
    // (expert_row_share), spread over num_experts/ep local experts (grouped GEMM), each
    // expert's FFN split over etp chips.
    const long long local_experts = std::max<long long>(1, e.num_experts / s.ep);
    const long long etp = std::max<long long>(1, s.etp > 0 ? s.etp : s.tp);
    const long long eff = std::max<long long>(1, e.expert_ffn / etp);  // this chip's slice of an expert
    const long long rows_total =
      static_cast<long long>(std::ceil(static_cast<double>(tokens * e.experts_per_token) * s.expert_load * s.expert_row_share - 1e-9));
    const long long gemms = running_experts(md, s, local_experts, tokens);  // grouped-GEMM members that run
    long long rows_per_expert = std::max<long long>(1, div_up(rows_total, gemms));
    if (s.expert_rows == LayerShard::ExpertRows::Blockwise && s.expert_block > 0)
      rows_per_expert = s.expert_block * div_up(rows_per_expert, s.expert_block);
    Op disp;
    disp.kind = OpKind::MoeDispatch;
    disp.name = "moe_dispatch";
    disp.elements = 2.0 * static_cast<double>(rows_total) * static_cast<double>(h);
    ops.push_back(disp);
    ops.push_back(gemm("expert_up", GemmRole::UpProjection, rows_per_expert, mats_in * eff, h, gemms));
    const long long act_rows = s.expert_rows == LayerShard::ExpertRows::Blockwise ? rows_per_expert * gemms : rows_total;
    ops.push_back(elementwise("expert_act", static_cast<double>(act_rows) *
                                                static_cast<double>(eff) * (mats_in + 1)));
    ops.push_back(gemm("expert_down", GemmRole::Other, rows_per_expert, h, eff, gemms));
    if (e.shared_experts > 0) {
      const long long sf = e.shared_ffn * e.shared_experts / tp;
      ops.push_back(gemm("shared_up", GemmRole::UpProjection, tokens, mats_in * sf, h));
      ops.push_back(gemm("shared_down", GemmRole::Other, tokens, h, sf));
    }
}

/// A recurrent layer's chunked scan over this chip's tokens (OpKind::Scan): `heads` × `width`
/// channels with a state of `state` per channel, `groups` shared B/C groups (DeltaNet: key heads).
Op scan_op(std::string name, Op::ScanKind kind, const LayerDims& d, long long chunk, long long heads, long long groups,
           long long width, long long state) {
  Op o;
  o.kind = OpKind::Scan;
  o.name = std::move(name);
  o.scan_kind = kind;
  o.m = d.tokens;
  o.q_len = std::max<long long>(1, std::min(chunk, d.q_len));
  o.heads = heads;
  o.kv_heads = groups;
  o.d_v = width;
  o.d_qk = state;
  return o;
}

/// A Mamba-2 mixer (Megatron MambaMixer, tensor-parallel over heads and B/C groups): in_proj
/// (column-parallel) to z, x, B, C, dt; the causal depthwise conv over x, B, C; the SSD scan;
/// y·silu(z) and the grouped RMSNorm; out_proj (row-parallel).
/// A Mamba-1 mixer (Jamba; vLLM's MambaMixer, tensor-parallel over channels): in_proj to x and z
/// (column-parallel), the causal conv over x, x_proj to dt, B, C (from this chip's channels), dt_proj
/// back to the channels, the selective scan, y·silu(z) and out_proj (row-parallel).
void add_mamba1_mixer(const ModelSpec& md, const LayerDims& d, std::vector<Op>& ops) {
  const MambaSpec& ms = md.mamba;
  const long long tokens = d.tokens;
  const long long inner = std::max<long long>(1, ms.inner() / d.tp);
  ops.push_back(gemm("in_proj", GemmRole::QkvProjection, tokens, 2 * inner, d.hidden));
  ops.push_back(elementwise("mamba_conv", 2.0 * static_cast<double>(tokens) * static_cast<double>(inner)));
  ops.push_back(gemm("x_proj", GemmRole::Other, tokens, ms.dt_rank + 2 * ms.state, inner));
  ops.push_back(gemm("dt_proj", GemmRole::Other, tokens, inner, ms.dt_rank));
  ops.push_back(scan_op("selective_scan", Op::ScanKind::Selective, d, d.q_len, inner, 1, 1, ms.state));
  ops.push_back(elementwise("mamba_gate", 3.0 * static_cast<double>(tokens) * static_cast<double>(inner)));
  ops.push_back(gemm("out_proj", GemmRole::Other, tokens, d.hidden, inner));
}

void add_mamba_mixer(const ModelSpec& md, const LayerDims& d, std::vector<Op>& ops) {
  if (md.mamba.version == 1) {
    add_mamba1_mixer(md, d, ops);
    return;
  }
  const MambaSpec& ms = md.mamba;
  const long long tokens = d.tokens;
  const long long heads = std::max<long long>(1, ms.heads / d.tp);
  const long long groups = std::max<long long>(1, ms.groups / d.tp);
  const long long inner = heads * ms.head_dim;
  const long long conv = inner + 2 * groups * ms.state;
  ops.push_back(gemm("in_proj", GemmRole::QkvProjection, tokens, 2 * inner + 2 * groups * ms.state + heads, d.hidden));
  ops.push_back(elementwise("mamba_conv", 2.0 * static_cast<double>(tokens) * static_cast<double>(conv)));
  ops.push_back(scan_op("ssd_scan", Op::ScanKind::Ssd, d, ms.chunk, heads, groups, ms.head_dim, ms.state));
  ops.push_back(elementwise("mamba_gate_norm", 3.0 * static_cast<double>(tokens) * static_cast<double>(inner)));
  ops.push_back(gemm("out_proj", GemmRole::Other, tokens, d.hidden, inner));
}

/// A gated DeltaNet (Qwen3-Next's linear attention, tensor-parallel over key and value heads):
/// in_proj (q, k, v, z, beta, alpha; column-parallel), the causal depthwise conv over q, k, v, the
/// chunked gated delta rule, the gated RMSNorm and out_proj (row-parallel).
void add_linear_attention_mixer(const ModelSpec& md, const LayerDims& d, std::vector<Op>& ops) {
  const LinearAttentionSpec& la = md.linear;
  const long long tokens = d.tokens;
  const long long key_heads = std::max<long long>(1, la.key_heads / d.tp);
  const long long value_heads = std::max<long long>(1, la.value_heads / d.tp);
  const long long keys = key_heads * la.key_dim, values = value_heads * la.value_dim;
  ops.push_back(gemm("in_proj", GemmRole::QkvProjection, tokens, 2 * keys + 2 * values + 2 * value_heads, d.hidden));
  ops.push_back(elementwise("linear_conv", 2.0 * static_cast<double>(tokens) * static_cast<double>(2 * keys + values)));
  ops.push_back(scan_op("delta_rule_scan", Op::ScanKind::DeltaRule, d, la.chunk, value_heads, key_heads, la.value_dim,
                        la.key_dim));
  ops.push_back(elementwise("linear_gate_norm", 3.0 * static_cast<double>(tokens) * static_cast<double>(values)));
  ops.push_back(gemm("out_proj", GemmRole::Other, tokens, d.hidden, values));
}

}  // namespace

core::Dtype unquantized_weight_dtype(core::Dtype plan_weights) {
  return core::bytes_per_element(plan_weights) < core::bytes_per_element(core::Dtype::Bf16) ? core::Dtype::Bf16
                                                                                              : plan_weights;
}

std::string lora_targets_name(LoraTargets t) { return t == LoraTargets::Attention ? "attention" : "all-linear"; }

std::optional<LoraTargets> parse_lora_targets(const std::string& name) {
  for (LoraTargets t : {LoraTargets::Attention, LoraTargets::AllLinear})
    if (name == lora_targets_name(t)) return t;
  return std::nullopt;
}

std::vector<Op> lora_adapter_ops(const Op& frozen, int rank) {
  if (rank <= 0 || !frozen.is_weight_gemm()) return {};
  Op a = gemm(frozen.name + "_lora_a", GemmRole::Other, frozen.m, rank, frozen.k, frozen.count);
  Op b = gemm(frozen.name + "_lora_b", GemmRole::Other, frozen.m, frozen.n, rank, frozen.count);
  a.adapter = b.adapter = true;
  return {a, b};
}

namespace {

/// LoRA fine-tuning: every base weight frozen, an adapter after each adapted weight.
void apply_lora(std::vector<Op>& ops, int rank, LoraTargets targets) {
  if (rank <= 0) return;
  std::vector<Op> out;
  out.reserve(2 * ops.size());
  for (auto& op : ops) {
    if (op.is_weight_gemm()) op.frozen = true;
    out.push_back(op);
    for (auto& adapter : lora_adapter_ops(op, op.lora_adapted(targets) ? rank : 0)) out.push_back(std::move(adapter));
  }
  ops = std::move(out);
}

/// Nemotron-NAS: attention or an MLP replaced by one hidden × hidden linear layer, with its norm and
/// residual add. It is costed row-parallel (hidden/tp inputs on each chip, one tensor-parallel
/// region, ModelSpec::layer_tp_regions), as the output projection of the part it replaces.
void add_linear_replacement(const char* name, const LayerDims& d, double act, std::vector<Op>& ops) {
  ops.push_back(elementwise("linear_norm", 2.0 * act));
  ops.push_back(gemm(name, GemmRole::Other, d.tokens, d.hidden, std::max<long long>(1, d.hidden / d.tp)));
  ops.push_back(elementwise("linear_residual", 3.0 * act));
}

/// The GEMMs whose weights the checkpoint keeps in bf16 (ModelSpec::unquantized).
void mark_unquantized(const ModelSpec& md, const LayerShard& s, std::vector<Op>& ops) {
  if (!s.checkpoint_formats || (!md.unquantized.attention && !md.unquantized.router)) return;
  for (Op& op : ops) {
    if (op.kind != OpKind::Gemm) continue;
    if ((md.unquantized.attention && op.is_attention_projection()) || (md.unquantized.router && op.name == "router"))
      op.unquantized = true;
  }
}

}  // namespace

std::vector<Op> layer_ops(const ModelSpec& md, int layer, const LayerShard& s) {
  const LayerDims d = layer_dims(md, layer, s);
  const long long tokens = d.tokens, h = d.hidden, tp = d.tp, heads = d.heads, kvh = d.kv_heads;
  std::vector<Op> ops;
  ops.reserve(16);  // a layer has at most about a dozen operators: one allocation
  // Norm + residual traffic: SP shards these elementwise ops over tp.
  const double act = static_cast<double>(tokens) * static_cast<double>(h) /
                     static_cast<double>(s.sequence_parallel ? tp : 1);
  // Norm (read x, write y) and residual add (read two, write one) per block; RoPE rewrites q, k.
  if (md.layer_is_mamba(layer)) {
    ops.push_back(elementwise("mamba_norm", 2.0 * act));
    add_mamba_mixer(md, d, ops);
    ops.push_back(elementwise("mamba_residual", 3.0 * act));
  } else if (md.layer_is_linear_attention(layer)) {
    ops.push_back(elementwise("linear_norm", 2.0 * act));
    add_linear_attention_mixer(md, d, ops);
    ops.push_back(elementwise("linear_residual", 3.0 * act));
  } else if (md.layer_has_attention(layer)) {
    ops.push_back(elementwise("attn_norm", 2.0 * act));
    long long d_qk = 0, d_v = 0;
    add_qkv_projections(md, d, ops, d_qk, d_v);
    const Op at = attention_op(md, layer, s, d, d_qk, d_v);
    if (md.dsa.enabled()) add_lightning_indexer(md, layer, s, d, at, ops);
    if (md.position == PosKind::Rope) {
      const double qk = static_cast<double>(tokens) *
                        static_cast<double>(heads + (md.attention == AttnKind::Mla ? 0 : kvh)) *
                        static_cast<double>(md.attention == AttnKind::Mla ? md.mla.qk_rope_head_dim : md.head_dim);
      ops.push_back(elementwise("rope", 2.0 * qk));
    }
    ops.push_back(at);
    if (md.gated_attention)  // sigmoid(gate) × the attention output: read both, write one
      ops.push_back(elementwise("attn_gate", 3.0 * static_cast<double>(tokens) * static_cast<double>(heads * d_v)));
    ops.push_back(gemm("o_proj", GemmRole::Other, tokens, h, heads * d_v));
    ops.push_back(elementwise("attn_residual", 3.0 * act));
  } else if (md.layer_linear_mixer(layer)) {
    add_linear_replacement("attn_linear", d, act, ops);
  }
  if (md.layer_linear_mlp(layer)) add_linear_replacement("mlp_linear", d, act, ops);
  if (md.layer_has_mlp(layer)) {
    ops.push_back(elementwise("mlp_norm", 2.0 * act));
    const int mats_in = md.mlp == MlpKind::Gated ? 2 : 1;
    if (md.layer_is_moe(layer)) {
      add_moe_mlp(md, s, d, mats_in, ops);
    } else {
      const long long f = md.layer_ffn(layer) / tp;
      ops.push_back(gemm("mlp_up", GemmRole::UpProjection, tokens, mats_in * f, h));
      // Activation: reads the up-projection (gate and up for gated MLPs), writes one output.
      ops.push_back(elementwise("mlp_act", static_cast<double>(tokens) * static_cast<double>(f) * (mats_in + 1)));
      ops.push_back(gemm("mlp_down", GemmRole::Other, tokens, h, f));
    }
    ops.push_back(elementwise("mlp_residual", 3.0 * act));
  }
  mark_unquantized(md, s, ops);
  apply_lora(ops, s.lora_rank, s.lora_targets);
  return ops;
}

std::vector<Op> head_ops(const ModelSpec& md, const LayerShard& s) {
  const long long q_len = s.q_len > 0 ? s.q_len : s.seq;
  const long long tokens = s.batch * div_up(q_len, s.cp);
  std::vector<Op> ops;
  ops.push_back(elementwise("final_norm", 2.0 * static_cast<double>(tokens * md.hidden)));
  ops.push_back(gemm("lm_head", GemmRole::Other, tokens, div_up(md.vocab, s.tp), md.hidden));
  ops.back().unquantized = s.checkpoint_formats && md.unquantized.lm_head;
  // Softmax cross-entropy over the vocabulary in fp32: write, read and rewrite the logits
  // (3 passes of 4-byte values = 6 bf16-element passes).
  ops.push_back(elementwise("softmax_loss", 6.0 * static_cast<double>(tokens) *
                                                static_cast<double>(div_up(md.vocab, s.tp))));
  apply_lora(ops, s.lora_rank, s.lora_targets);
  return ops;
}

std::vector<Op> embedding_ops(const ModelSpec& md, const LayerShard& s) {
  const long long q_len = s.q_len > 0 ? s.q_len : s.seq;
  const long long tokens = s.batch * div_up(q_len, s.cp);
  return {elementwise("embedding", 2.0 * static_cast<double>(tokens * md.hidden))};
}

std::vector<Op> mtp_ops(const ModelSpec& md, const LayerShard& s) {
  const long long q_len = s.q_len > 0 ? s.q_len : s.seq;
  const long long tokens = s.batch * div_up(q_len, s.cp);
  std::vector<Op> ops;
  ops.push_back(elementwise("mtp_norms", 2.0 * 2.0 * static_cast<double>(tokens * md.hidden)));
  ops.push_back(gemm("mtp_eh_proj", GemmRole::Other, tokens, div_up(md.hidden, s.tp), 2 * md.hidden));
  apply_lora(ops, s.lora_rank, s.lora_targets);
  return ops;
}


}  // namespace xpusim::workload
