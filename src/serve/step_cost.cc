#include "xpusim/serve/step_cost.h"

#include <algorithm>
#include <cmath>

#include "xpusim/core/check.h"
#include "xpusim/net/collective.h"
#include "xpusim/net/topology.h"
#include "xpusim/workload/ops.h"

namespace xpusim::serve {

using core::Dtype;

namespace {

// Largest token count whose linear-layer cost is memoised (a step rarely exceeds it).
constexpr long long kCacheTokens = 1 << 16;

}  // namespace

double chunk_pairs(double done, double q, long long key_cap) {
  const double full = q * (done + q / 2.0);
  if (key_cap <= 0) return full;
  // Queries at positions done+1 .. done+q see min(position, cap) keys: the ones below the cap
  // see their position (the continuous causal mean), the rest cap each.
  const double cap = static_cast<double>(key_cap);
  const double below = std::clamp(cap - done, 0.0, q);
  return below * (done + below / 2.0) + (q - below) * cap;
}

void add_prefill_chunk(double done, double q, long long key_cap, StepWork& w) {
  w.prefill_tokens += static_cast<long long>(q);
  w.prefill_pairs += chunk_pairs(done, q, 0);
  w.prefill_attended_pairs += chunk_pairs(done, q, key_cap);
}

StepCostModel::StepCostModel(const hw::SystemSpec& sys, const workload::ModelSpec& model,
                             ReplicaPlan plan, FrameworkProfile profile,
                             const mapping::MemoryParams& memory, const net::Topology* topo)
    : sys_(sys), model_(model), plan_(plan), profile_(std::move(profile)), topo_(topo) {
  build_chip_models();
  count_layer_kinds();
  set_attention_shape();
  size_memory(memory);
  cost_lm_head();
  // Memo tables grow on demand (a model built for one short search trial stays small).
  cache_.assign(1025, Linear{});
  if (profile_.prefill_efficiency < 1.0 || (profile_.moe_prefill_block > 0 && model_.is_moe()))
    cache_prompt_.assign(cache_.size(), Linear{});
}

void StepCostModel::build_chip_models() {
  chip_ = std::make_unique<compute::ChipModel>(sys_.chip, profile_.calibration);
  compute::Calibration prompt = profile_.calibration;
  prompt.gemm_efficiency *= std::min(1.0, profile_.prefill_efficiency);
  chip_prompt_ = std::make_unique<compute::ChipModel>(sys_.chip, prompt);
  prompt.gemm_efficiency *= std::min(1.0, profile_.moe_prefill_efficiency);
  chip_prompt_experts_ = std::make_unique<compute::ChipModel>(sys_.chip, prompt);
  const auto& p = plan_.plan;
  prec_.gemm = p.math_dtype;
  prec_.weights = p.weight_dtype;
  prec_.kv = p.kv_dtype;
  prec_.activations = Dtype::Bf16;
}

int StepCostModel::attention_tp() const { return plan_.attention_dp ? 1 : plan_.plan.tp; }

workload::LayerShard StepCostModel::shard(long long tokens, bool prompt) const {
  using Rows = workload::LayerShard::ExpertRows;
  workload::LayerShard s;
  s.expert_rows = profile_.moe_skip_idle_experts ? Rows::Touched : Rows::Balanced;
  s.expert_load = plan_.plan.moe_load_imbalance;
  s.checkpoint_formats = true;  // a served checkpoint's bf16 modules run in bf16
  if (prompt && profile_.moe_prefill_block > 0) {
    s.expert_rows = Rows::Blockwise;
    s.expert_block = profile_.moe_prefill_block;
  }
  s.batch = 1;
  s.seq = tokens;
  s.q_len = tokens;
  s.kv_len = tokens;
  s.tp = attention_tp();
  s.ep = plan_.plan.ep;
  s.etp = std::max(1, s.tp / std::max(1, plan_.plan.ep));  // experts ep-ways inside the tp group
  // The expert-parallel group holds max(1, ep/tp) engines' distinct tokens (DP attention: ep of
  // them; TP attention: one set, every rank's); each rank's experts get 1/ep of their routes.
  const int ep = std::max(1, s.ep);
  s.expert_row_share = static_cast<double>(std::max(1, ep / std::max(1, s.tp))) / ep;
  return s;
}

void StepCostModel::count_layer_kinds() {
  const int pp = std::max(1, plan_.plan.pp);
  layers_per_chip_ = (model_.layers + pp - 1) / pp;
  // Layer kinds (routed-expert or dense MLP; sliding or full attention; the block of a hybrid)
  // on the first stage.
  for (int i = 0; i < layers_per_chip_ && i < model_.layers; ++i) {
    const bool moe = model_.layer_is_moe(i), sliding = model_.layer_sliding(i);
    const workload::LayerBlock block = model_.layer_block(i);
    const workload::LayerShape shape = model_.layer_shape(i);
    auto it = std::find_if(kinds_.begin(), kinds_.end(), [&](const Kind& k) {
      return k.moe == moe && k.sliding == sliding && k.block == block && k.shape == shape;
    });
    if (it == kinds_.end()) {
      Kind k{moe, sliding, 1, i, block, shape, false, workload::Op{}, 0.0, 0.0};
      describe_recurrent(k);
      kinds_.push_back(k);
    } else {
      ++it->count;
    }
    if (model_.layer_has_attention(i)) {
      ++attention_layers_per_chip_;
      const double kv = kv_heads_on_chip(i);
      auto g = std::find_if(kv_head_groups_.begin(), kv_head_groups_.end(), [&](const auto& e) { return e.first == kv; });
      if (g == kv_head_groups_.end()) kv_head_groups_.emplace_back(kv, 1);
      else ++g->second;
    }
    // Megatron TP: one all-reduce after each row-parallel output (one for a parallel block).
    tp_reductions_per_chip_ += model_.layer_tp_regions(i);
  }
  // Operators a prompt step dispatches from the host (eager_operator_host_time each): the layer
  // model's, and in a routed-expert layer the routing kernels it folds together.
  for (const auto& k : kinds_) {
    const double ops = static_cast<double>(workload::layer_ops(model_, k.layer, shard(1, false)).size());
    operators_per_forward_ += static_cast<double>(k.count) * (ops + (k.moe ? profile_.moe_eager_operators : 0.0));
  }
}

void StepCostModel::describe_recurrent(Kind& k) const {
  if (!model_.layer_is_recurrent(k.layer)) return;
  k.recurrent = true;
  const double tp = static_cast<double>(std::max(1, plan_.plan.tp));
  k.state_bytes = workload::recurrent_state_bytes_per_layer(model_, k.layer, plan_.plan.state_dtype).base() / tp;
  k.step_flops = workload::recurrent_step_flops_per_token(model_, k.layer) / tp;
  for (const auto& op : workload::layer_ops(model_, k.layer, shard(kCacheTokens, true)))
    if (op.kind == workload::OpKind::Scan) k.scan = op;
}

double StepCostModel::kv_heads_on_chip(int layer) const {
  if (model_.attention == workload::AttnKind::Mla) return 1.0;
  const int tp = attention_tp();
  return static_cast<double>(std::max(1, (model_.layer_kv_heads(layer) + tp - 1) / tp));
}

void StepCostModel::set_attention_shape() {
  const int tp = attention_tp();
  heads_ = std::max(1, (model_.heads + tp - 1) / tp);  // padded heads
  if (model_.attention == workload::AttnKind::Mla) {
    // Absorbed MLA decode: every head reads the shared latent (kv_lora + rope) per token.
    d_qk_ = static_cast<double>(model_.mla.kv_lora_rank + model_.mla.qk_rope_head_dim);
    d_v_ = static_cast<double>(model_.mla.kv_lora_rank);
  } else {
    d_qk_ = static_cast<double>(model_.qk_head_dim());
    d_v_ = static_cast<double>(model_.v_head_dim());
  }
  kv_elem_bytes_ = core::bytes_per_element(plan_.plan.kv_dtype);
  // The lightning indexer's query heads on this chip times their width (0 without sparse attention).
  if (model_.dsa.enabled())
    indexer_width_ = static_cast<double>(std::max(1LL, (model_.dsa.index_heads + tp - 1) / tp)) *
                     static_cast<double>(model_.dsa.index_head_dim);
  const auto& cal = profile_.calibration;
  attn_rate_ = sys_.chip.peak_for(chip_->best_dtype(Dtype::Bf16)).base() * cal.attention_efficiency *
               cal.power_cap_factor;
  hbm_rate_ = chip_->achievable_hbm().base();
  head_rate_ = chip_->achievable_flops(prec_.gemm).base();
  for (auto& k : kinds_) {
    k.attends = model_.layer_has_attention(k.layer);
    const double kv_heads = kv_heads_on_chip(k.layer);
    const double kvh = profile_.gqa_kv_sharing ? kv_heads : std::max(kv_heads, heads_);
    k.kv_elems_per_token = model_.attention == workload::AttnKind::Mla ? d_qk_ : kvh * (d_qk_ + d_v_);
  }
}

// Weights and workspace per chip from mapping's memory model (the one training uses); the KV
// cache gets kv_memory_fraction of the rest (the remainder holds the transient activations of
// a step and allocator slack).
void StepCostModel::size_memory(const mapping::MemoryParams& memory) {
  const mapping::ServeMemory fixed = mapping::serve_memory_per_chip(model_, plan_.plan, 0, 0, 0, memory);
  mem_.hbm = sys_.chip.hbm_capacity.value;
  mem_.weights = fixed.weights;
  mem_.workspace = fixed.workspace;
  mem_.kv_per_token = mapping::kv_bytes_per_token_per_chip(model_, plan_.plan);
  mem_.state_per_sequence = mapping::state_bytes_per_sequence_per_chip(model_, plan_.plan);
  size_cache();
}

void StepCostModel::hold_draft_weights(core::Bytes per_chip) {
  mem_.draft_weights = per_chip;
  size_cache();
}

void StepCostModel::size_cache() {
  const core::Bytes left = mem_.hbm - mem_.weights - mem_.draft_weights - mem_.workspace;
  mem_.kv_capacity = left.base() > 0 ? left * profile_.kv_memory_fraction : core::bytes(0);
  // The cache unit: a token's KV bytes; without attention, one sequence's state.
  const bool kv = mem_.kv_per_token.base() > 0;
  const core::Bytes unit = kv ? mem_.kv_per_token : mem_.state_per_sequence;
  mem_.token_units = kv ? 1 : 0;
  mem_.kv_tokens = left.base() > 0 && unit.base() > 0 ? static_cast<long long>(mem_.kv_capacity.base() / unit.base()) : 0;
  if (mem_.state_per_sequence.base() > 0)
    mem_.state_tokens = static_cast<long long>(std::ceil(mem_.state_per_sequence.base() / unit.base()));
}

// LM head per sampled token (only the last stage; logits over vocab/tp).
void StepCostModel::cost_lm_head() {
  double flops = 0, bytes = 0;
  for (const auto& op : workload::head_ops(model_, shard(1))) {
    const auto t = chip_->time(op, prec_, compute::Pass::Forward);
    if (op.is_weight_gemm()) { head_bytes_ = t.hbm_bytes.base(); continue; }
    flops += t.flops.base();
    bytes += t.hbm_bytes.base();
  }
  head_flops_per_token_ = 2.0 * static_cast<double>(model_.hidden * model_.vocab) / attention_tp() + flops;
  head_time_per_token_ = bytes / hbm_rate_;
}

StepCostModel::~StepCostModel() = default;
StepCostModel::StepCostModel(StepCostModel&&) noexcept = default;

core::ByteRate StepCostModel::hbm_rate() const { return core::bytes_per_second(hbm_rate_); }

StepCostModel::Linear StepCostModel::linear_uncached(long long tokens, bool prompt_rate) const {
  const workload::LayerShard s = shard(tokens, prompt_rate);
  const compute::ChipModel& chip = prompt_rate ? *chip_prompt_ : *chip_;
  Linear out;
  out.known = true;
  for (const auto& k : kinds_) {
    for (const auto& op : workload::layer_ops(model_, k.layer, s)) {
      // Attention and the recurrent scan are timed from the step's prompts and contexts.
      if (op.kind == workload::OpKind::Attention || op.kind == workload::OpKind::Scan) continue;
      // Expert GEMMs of a prompt on the blockwise path run at their own (lower) rate.
      const bool experts = prompt_rate && s.expert_rows == workload::LayerShard::ExpertRows::Blockwise &&
                           op.kind == workload::OpKind::Gemm && op.is_expert();
      const auto t = (experts ? *chip_prompt_experts_ : chip).time(op, prec_, compute::Pass::Forward);
      // Skinny decode GEMMs: compute::ChipModel's 16-row MMA granularity and split-K (it
      // validates as well as the private roofline this layer used before; docs/serving.md).
      out.time_s += t.time.base() * k.count;
      out.flops += t.flops.base() * k.count;
      out.bytes += t.hbm_bytes.base() * k.count;
    }
  }
  for (const auto& op : workload::embedding_ops(model_, s)) {
    auto t = chip.time(op, prec_, compute::Pass::Forward);
    out.time_s += t.time.base();
  }
  // An MTP draft's norms and eh_proj (2h → h, column-parallel) before its layer.
  if (model_.is_mtp_module) {
    for (const auto& op : workload::mtp_ops(model_, s)) {
      const auto t = chip.time(op, prec_, compute::Pass::Forward);
      out.time_s += t.time.base();
      out.flops += t.flops.base();
      out.bytes += t.hbm_bytes.base();
    }
  }
  // Token routing of each MoE layer: the permute and unpermute kernels stream every routed
  // element through HBM (serving.moe.route_bytes_per_element each) at the chip's achievable rate.
  // With tensor-parallel attention every rank holds all the step's tokens and routes the rows
  // bound for its own ep-th of the experts; with DP attention a rank routes its own tokens' rows.
  const double ep_share = plan_.attention_dp ? 1.0 : static_cast<double>(std::max(1, plan_.plan.ep));
  const double routed =
      static_cast<double>(tokens) * model_.moe.experts_per_token * static_cast<double>(model_.hidden) / ep_share;
  const double route_s = profile_.moe_route_bytes_per_element.base() * routed / hbm_rate_;
  for (const auto& k : kinds_)
    if (k.moe) out.time_s += route_s * k.count;
  const Comm comm = communication(tokens);
  out.comm_s = comm.seconds;
  out.scale_up_bytes = comm.scale_up_bytes;
  out.scale_out_bytes = comm.scale_out_bytes;
  return out;
}

StepCostModel::Linear StepCostModel::linear(long long tokens, bool prompt_rate) const {
  if (tokens <= 0) return Linear{};
  prompt_rate = prompt_rate && !cache_prompt_.empty();
  if (tokens <= kCacheTokens) {
    auto& table = prompt_rate ? cache_prompt_ : cache_;
    if (static_cast<size_t>(tokens) >= table.size())
      table.resize(std::min(static_cast<size_t>(kCacheTokens + 1),
                            std::max(2 * table.size(), static_cast<size_t>(tokens) + 1)),
                   Linear{});
    Linear& c = table[static_cast<size_t>(tokens)];
    if (!c.known) c = linear_uncached(tokens, prompt_rate);
    return c;
  }
  return linear_uncached(tokens, prompt_rate);
}

void StepCostModel::Comm::add(const net::CollectiveCost& c, double times) {
  seconds += c.time.base() * times;
  scale_up_bytes += c.scale_up_bytes.base() * times;
  scale_out_bytes += c.scale_out_bytes.base() * times;
}

StepCostModel::Comm StepCostModel::communication(long long tokens) const {
  Comm out;
  if (!topo_) return out;
  const auto& p = plan_.plan;
  const double act = static_cast<double>(tokens) * static_cast<double>(model_.hidden) * 2.0;  // bf16
  if (!plan_.attention_dp && p.tp > 1) {
    // Megatron TP: one all-reduce after attention and one after the MLP (one for parallel
    // attention+MLP blocks, and for each block of a hybrid), per layer on this chip.
    out.add(net::collective_cost(*topo_, net::CollectiveKind::AllReduce, core::bytes(act), net::Group{p.tp, 1}),
            tp_reductions_per_chip_);
  }
  if (p.ep > 1 && model_.is_moe()) {
    // Expert parallel: dispatch and combine all-to-all of each token's top-k hidden vectors.
    int moe_layers = 0;
    for (const auto& k : kinds_) if (k.moe) moe_layers += k.count;
    // Dispatch in the math dtype when it is 8-bit or less (DeepEP fp8 dispatch), combine in bf16.
    // The busiest rank receives moe_load_imbalance × the mean; the exchange ends when it has.
    const double tok_bytes =
        act * model_.moe.experts_per_token / (plan_.attention_dp ? 1.0 : p.tp) * p.moe_load_imbalance;
    const double disp = tok_bytes * std::min(1.0, core::bytes_per_element(p.math_dtype) / 2.0);
    const auto dispatch = net::collective_cost(*topo_, net::CollectiveKind::AllToAll, core::bytes(disp),
                                               net::Group{p.ep, 1});
    const auto combine = net::collective_cost(*topo_, net::CollectiveKind::AllToAll, core::bytes(tok_bytes),
                                              net::Group{p.ep, 1});
    // Summed per layer first, then times the layers (the order the step time always used).
    Comm pair;
    pair.add(dispatch, 1.0);
    pair.add(combine, 1.0);
    out.seconds += pair.seconds * moe_layers;
    out.scale_up_bytes += pair.scale_up_bytes * moe_layers;
    out.scale_out_bytes += pair.scale_out_bytes * moe_layers;
  }
  if (p.pp > 1) {
    // Pipeline: the activations cross pp-1 stage boundaries per step.
    out.add(net::collective_cost(*topo_, net::CollectiveKind::SendRecv, core::bytes(act / p.tp),
                                 net::Group{2, p.tp}),
            p.pp - 1);
  }
  return out;
}

// Prefill: causal query-key pairs at the flash-attention rate (× prefill_efficiency), or the
// Q/K/V/O bytes when those dominate, on every layer of the chip.
void StepCostModel::add_prefill_attention(const StepWork& w, Attention& attn) const {
  if (w.prefill_tokens <= 0) return;
  const double kov = profile_.calibration.kernel_overhead.base();
  const bool sparse = model_.dsa.enabled();
  const double pairs = sparse ? w.prefill_attended_pairs : w.prefill_pairs;
  const double f = 2.0 * pairs * (d_qk_ + d_v_) * heads_;
  const double rate = attn_rate_ * std::min(1.0, profile_.prefill_efficiency);
  for (const auto& [kv_heads, count] : kv_head_groups_) {
    const double layers = static_cast<double>(count);
    const double b = static_cast<double>(w.prefill_tokens) * (heads_ * (d_qk_ + d_v_) * 2.0 +
                                                              kv_heads * (d_qk_ + d_v_) * kv_elem_bytes_);
    attn.seconds += layers * (std::max(f / rate, b / hbm_rate_) + kov);
    attn.flops += layers * f;
  }
  if (!sparse) return;
  const double layers = static_cast<double>(attention_layers_per_chip_);
  // Sparse attention's lightning indexer scores every earlier key of every prompt token.
  const double fi = 2.0 * w.prefill_pairs * indexer_width_;
  attn.seconds += layers * (fi / rate + kov);
  attn.flops += layers * fi;
}

// Decode: every sequence's KV cache streamed from HBM (per query head before XQA), sliding
// layers over at most their window.
void StepCostModel::add_decode_attention(const StepWork& w, Attention& attn) const {
  if (w.decode_seqs <= 0) return;
  const double kov = profile_.calibration.kernel_overhead.base();
  const double ctx = w.decode_context;
  double ctx_sl = ctx;
  if (model_.sliding_window > 0)
    ctx_sl = std::min(ctx, static_cast<double>(model_.sliding_window) * w.decode_seqs);
  const double q = static_cast<double>(w.decode_q);
  // Sparse attention: each query attends its top-k keys; the lightning indexer scores, and reads
  // the indexer key of, every token the layer keeps.
  const bool sparse = model_.dsa.enabled();
  const double ctx_attended = sparse ? std::min(ctx, static_cast<double>(model_.dsa.topk) * w.decode_seqs) : ctx;
  for (const auto& k : kinds_) {
    if (!k.attends) continue;
    const double kept = k.sliding ? ctx_sl : ctx;
    const double c = std::min(kept, ctx_attended);
    const double f = 2.0 * c * q * (d_qk_ + d_v_) * heads_;
    const double b = c * kv_elem_bytes_ * k.kv_elems_per_token;
    attn.seconds += k.count * (std::max(f / attn_rate_, b / hbm_rate_) + kov);
    attn.flops += k.count * f;
    attn.kv_bytes += k.count * b;
    if (!sparse) continue;
    const double fi = 2.0 * kept * q * indexer_width_;
    const double bi = kept * kv_elem_bytes_ * static_cast<double>(model_.dsa.index_head_dim);
    attn.seconds += k.count * (std::max(fi / attn_rate_, bi / hbm_rate_) + kov);
    attn.flops += k.count * fi;
    attn.kv_bytes += k.count * bi;
  }
}

void StepCostModel::add_recurrent_scan(const StepWork& w, Attention& attn) const {
  if (!model_.has_recurrent()) return;
  const double kov = profile_.calibration.kernel_overhead.base();
  for (const auto& k : kinds_) {
    if (!k.recurrent) continue;
    const double layers = static_cast<double>(k.count);
    if (w.prefill_tokens > 0) {
      // The prompt tokens' scan: the kind's scan over this step's prompt tokens (chunks no
      // longer than the prompt).
      workload::Op scan = k.scan;
      scan.m = w.prefill_tokens;
      scan.q_len = std::min(scan.q_len, w.prefill_tokens);
      const auto t = chip_->time(scan, prec_, compute::Pass::Forward);
      attn.seconds += layers * t.time.base();
      attn.flops += layers * t.flops.base();
    }
    if (w.decode_seqs > 0) {
      // The recurrent step reads each decoding sequence's state once and writes one state per
      // token it runs: with speculative decoding the verify step keeps the state after every
      // draft token, to roll back to the last accepted one (SGLang's intermediate SSM states).
      const double q = static_cast<double>(w.decode_q);
      const double f = k.step_flops * static_cast<double>(w.decode_seqs) * q;
      const double b = (1.0 + q) * static_cast<double>(w.decode_seqs) * k.state_bytes;
      attn.seconds += layers * (std::max(f / attn_rate_, b / hbm_rate_) + kov);
      attn.flops += layers * f;
      attn.kv_bytes += layers * b;
    }
  }
}

StepCost StepCostModel::cost(const StepWork& w) const {
  StepCost out;
  const long long dec_tokens = w.decode_seqs * w.decode_q;
  const long long tokens = w.prefill_tokens + dec_tokens;
  if (tokens <= 0) return out;
  const int pp = std::max(1, plan_.plan.pp);
  Linear lin = linear(tokens, false);
  const double comm = lin.comm_s;
  double lin_t = lin.time_s;
  // Prompt tokens of compiled-graph frameworks run below the GEMM rate (prefill_efficiency):
  // each operator is the roofline max(FLOPs / (rate × efficiency), bytes / bandwidth), and a
  // mixed step takes the prompt share of the difference.
  if (w.prefill_tokens > 0 && !cache_prompt_.empty()) {
    const double share = static_cast<double>(w.prefill_tokens) / static_cast<double>(tokens);
    lin_t += share * (linear(tokens, true).time_s - lin.time_s);
  }
  // LM head: weights read once, FLOPs per sampled sequence.
  const double logits = static_cast<double>(w.sampled_prefills + dec_tokens);
  const double head_f = head_flops_per_token_ * logits;
  const double head_t = std::max(head_f / head_rate_,
                                 head_bytes_ / hbm_rate_) +
                        head_time_per_token_ * logits + profile_.calibration.kernel_overhead.base();
  // Attention per layer: prefill pairs at the flash rate; decode streams the KV cache.
  Attention attn;
  add_prefill_attention(w, attn);
  add_decode_attention(w, attn);
  add_recurrent_scan(w, attn);
  const double ovh = profile_.step_overhead.base() +
                     profile_.layer_overhead.base() * static_cast<double>(model_.layers) +
                     (w.prefill_tokens > 0 ? profile_.prefill_step_overhead.base() : 0.0);
  // With pp stages the step's latency walks every stage; each chip holds 1/pp of the layers.
  double stage = lin_t + attn.seconds + comm + head_t / pp;
  if (profile_.overlap_ep_comm) stage = std::max(lin_t + attn.seconds, comm) + head_t / pp;
  // The host's per-sequence work runs beside the device (overlap scheduler): only what the
  // device time does not cover is exposed.
  const double device = stage * pp + head_t * (1.0 - 1.0 / pp);
  // A step with prompt tokens runs outside the decode CUDA graphs: the host dispatches each of
  // its operators (eager_operator_host_time each) while the device runs them.
  const double eager = w.prefill_tokens > 0 ? profile_.eager_operator_host_time.base() * operators_per_forward_ : 0.0;
  const double host = profile_.host_time_per_sequence.base() *
                      static_cast<double>(w.decode_seqs + w.prefill_seqs) + eager;
  const double host_exposed = std::max(0.0, host - device);
  out.linear = core::seconds(lin_t * pp + head_t);
  out.attention = core::seconds(attn.seconds * pp);
  out.comm = core::seconds(comm * pp);
  out.overhead = core::seconds(ovh + host_exposed);
  out.total = core::seconds(device + host_exposed + ovh);
  out.hbm_bytes = core::bytes(lin.bytes + attn.kv_bytes + head_bytes_);
  out.flops = core::flops(lin.flops + attn.flops + head_f);
  out.scale_up_bytes = core::bytes(lin.scale_up_bytes);
  out.scale_out_bytes = core::bytes(lin.scale_out_bytes);
  return out;
}

core::Seconds StepCostModel::time(const StepWork& w) const { return cost(w).total; }

}  // namespace xpusim::serve
