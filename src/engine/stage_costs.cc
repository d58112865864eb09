#include "stage_costs.h"

#include "common.h"
#include "xpusim/engine/op_profile.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "xpusim/mapping/schedule.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/ops.h"

namespace xpusim::engine::detail {

using core::Bytes;
using core::Seconds;
using net::CollectiveKind;

core::Seconds StageCost::fwd() const { return fwd_compute + fwd_comm; }
core::Seconds StageCost::bwd() const { return bwd_compute + recompute + bwd_comm; }

namespace {

struct LayerCost {
  Seconds fwd, bwd, recompute, attn_fwd, weight_grad;
  Seconds dense_gemm_fwd, dense_gemm_bwd;  ///< the TP-sharded (non-expert) weight GEMMs
  Seconds tp_fwd, tp_bwd, cp_fwd, cp_bwd, ep_fwd, ep_bwd, a2a_fwd, a2a_bwd, fsdp_fwd, fsdp_bwd;
  Seconds tp_bwd_busy;  ///< the backward's TP collectives whole, exposed or hidden
  double dense_params = 0, expert_params = 0;
  double trained_dense = 0, trained_expert = 0;  ///< of those, the weights that train (LoRA: adapters)
  cost::Activity act;
};

/// Weights of `ops` (routed experts' or the rest), all of them or (`trained_only`) those that train.
double weight_params(const std::vector<workload::Op>& ops, bool experts, bool trained_only = false) {
  double p = 0;
  for (const auto& o : ops) {
    if (!o.is_weight_gemm() || o.is_expert() != experts || (trained_only && o.frozen)) continue;
    p += static_cast<double>(o.k) * static_cast<double>(o.n) * static_cast<double>(o.count);
  }
  return p;
}

/// Times `op` forward and backward and adds both passes to `act`.
std::pair<compute::OpTime, compute::OpTime> time_both(const compute::ChipModel& chip, const workload::Op& op,
                                                      const compute::Precision& prec, cost::Activity& act) {
  auto f = chip.time(op, prec, compute::Pass::Forward);
  auto b = chip.time(op, prec, compute::Pass::Backward);
  act.add_flops(f.dtype, f.flops + b.flops);
  act.hbm_bytes += f.hbm_bytes + b.hbm_bytes;
  act.busy += f.time + b.time;
  return {f, b};
}

compute::Precision precision_of(const mapping::TrainPlan& plan) {
  compute::Precision p;
  p.gemm = plan.precision;
  // Training keeps bf16 weights (the low-precision copy is cast per step and read once more).
  p.weights = core::Dtype::Bf16;
  p.activations = core::Dtype::Bf16;
  p.kv = core::Dtype::Bf16;
  return p;
}


/// What one step's costing needs about the plan: shards, groups and the collective cost model.
struct Context {
  const TrainScenario& s;
  const net::Topology& topo;
  const compute::ChipModel& chip;
  compute::Precision prec;
  workload::LayerShard shard;
  long long tokens_chip = 0;   ///< tokens per micro-batch per chip
  double block_bytes = 0;      ///< one bf16 activation tensor of a micro-batch on a chip
  net::Group tp_group, ep_group, dp_group, edp_group, pp_pair;
  long long edp = 1;
  bool fsdp = false;

  Context(const TrainScenario& sc, const net::Topology& t, const compute::ChipModel& c);
  /// Time of `times` collectives of `bytes` over `g`; adds their link bytes to `act`.
  Seconds coll(CollectiveKind k, double bytes, net::Group g, cost::Activity& act, double times) const {
    if (g.size <= 1 || bytes <= 0) return Seconds{};
    auto c = net::collective_cost(topo, k, core::bytes(bytes), g);
    act.scale_up_bytes += c.scale_up_bytes * times;
    act.scale_out_bytes += c.scale_out_bytes * times;
    return c.time * times;
  }
  CollectiveKind grad_reduction() const {
    return s.plan.zero == mapping::Zero::None ? CollectiveKind::AllReduce : CollectiveKind::ReduceScatter;
  }
};

constexpr double kActBytes = 2.0;  // bf16 activations on the wire

/// How one layer's work of a micro-batch is split on a chip of the plan.
workload::LayerShard shard_of(const mapping::TrainPlan& plan) {
  workload::LayerShard shard;
  shard.batch = plan.micro_batch;
  shard.seq = plan.seq_len;
  shard.tp = plan.tp;
  shard.cp = plan.cp;
  shard.ep = plan.ep;
  shard.etp = plan.etp();
  shard.sequence_parallel = plan.sequence_parallel && plan.tp > 1;
  shard.lora_rank = plan.lora_rank;
  shard.lora_targets = plan.lora_targets;
  shard.expert_load = plan.moe_expert_load();
  return shard;
}

Context::Context(const TrainScenario& sc, const net::Topology& t, const compute::ChipModel& c)
    : s(sc), topo(t), chip(c), prec(precision_of(sc.plan)) {
  const auto& plan = s.plan;
  shard = shard_of(plan);
  tokens_chip = plan.micro_batch * plan.seq_len / plan.cp;
  block_bytes = static_cast<double>(tokens_chip) * static_cast<double>(s.model.hidden) * kActBytes;
  tp_group = net::Group{plan.tp, 1};
  // The experts' own grid (Megatron-Core): etp innermost, then ep, then the expert data-parallel
  // ranks; with etp = tp (the default) ep runs over the data-parallel ranks, with a smaller etp
  // (MoE parallel folding) the expert-parallel group takes tensor-parallel ranks too.
  ep_group = net::Group{plan.ep, plan.etp()};
  dp_group = net::Group{static_cast<long long>(plan.dp) * plan.cp, plan.tp};
  edp = std::max<long long>(1, plan.expert_dp());
  edp_group = net::Group{edp, static_cast<long long>(plan.etp()) * plan.ep};
  pp_pair = net::Group{2, static_cast<long long>(plan.tp) * plan.cp * plan.dp};
  fsdp = plan.zero == mapping::Zero::Zero3 || plan.zero == mapping::Zero::Fsdp;
}

/// The GEMMs whose outputs a projections-only remat policy saves: query/key/value and the MLP's
/// up (and gate) projections, dense, routed and shared (workload::GemmRole).
bool is_saved_projection(const workload::Op& op) {
  return op.role == workload::GemmRole::QkvProjection || op.role == workload::GemmRole::UpProjection;
}

/// Whether the backward reruns the forward of `op`, by the plan's recomputation
/// (mapping::recompute_kind, which also sets its FLOP accounting).
bool recomputed(workload::RecomputeKind kind, const workload::Op& op) {
  switch (kind) {
    case workload::RecomputeKind::None: return false;
    case workload::RecomputeKind::Selective: return op.kind == workload::OpKind::Attention;
    case workload::RecomputeKind::SelectiveAllButProjections: return !is_saved_projection(op);
    case workload::RecomputeKind::Full: return true;
  }
  return false;
}

/// Compute of one layer's operators, forward and backward, with its recomputation (`kind`) and
/// weight gradients.
void add_layer_compute(const Context& x, const std::vector<workload::Op>& ops, workload::RecomputeKind kind,
                       LayerCost& lc) {
  for (const auto& op : ops) {
    const auto [f, b] = time_both(x.chip, op, x.prec, lc.act);
    lc.fwd += f.time;
    lc.bwd += b.time;
    if (op.is_trained_weight_gemm()) lc.weight_grad += f.time;  // dW = Xᵀ·dY: the forward's shape and time
    if (op.kind == workload::OpKind::Attention) lc.attn_fwd += f.time;
    if (op.is_weight_gemm() && !op.is_expert()) {
      lc.dense_gemm_fwd += f.time;
      lc.dense_gemm_bwd += b.time;
    }
    if (recomputed(kind, op)) {
      lc.recompute += f.time;
      lc.act.add_flops(f.dtype, f.flops);
      lc.act.hbm_bytes += f.hbm_bytes;
      lc.act.busy += f.time;
    }
  }
  lc.dense_params = weight_params(ops, false);
  lc.expert_params = weight_params(ops, true);
  lc.trained_dense = weight_params(ops, false, true);
  lc.trained_expert = weight_params(ops, true, true);
}

/// Async TP: the block's collectives (`one`) split into tp chunks, each pipelined with its slice
/// of the block's GEMMs (`gemm`): the first chunk is exposed, and the rest where the GEMMs are
/// shorter than the traffic.
Seconds async_tp_exposed(Seconds one, Seconds gemm, int tp) {
  const Seconds first = one / static_cast<double>(tp);
  return first + core::max(Seconds{}, one - first - gemm);
}

/// TP/SP: two collectives per block (attention, MLP) in each pass; a recomputed layer repeats the
/// forward ones inside the backward. The framework's share of them is exposed, or with async TP
/// what the GEMMs of the block do not cover (async_tp_exposed).
/// `blocks`: the layer's row-parallel outputs, each closing a TP region (attention and MLP: 2; a
/// hybrid's Mamba, attention or MLP block: 1).
void add_tp_comm(const Context& x, LayerCost& lc, double blocks, bool recomputes) {
  const auto& plan = x.s.plan;
  if (plan.tp <= 1) return;
  cost::Activity tmp;
  Seconds one;
  if (x.shard.sequence_parallel) {
    one = x.coll(CollectiveKind::AllGather, x.block_bytes, x.tp_group, tmp, 1.0) +
          x.coll(CollectiveKind::ReduceScatter, x.block_bytes, x.tp_group, tmp, 1.0);
  } else {
    one = x.coll(CollectiveKind::AllReduce, x.block_bytes, x.tp_group, tmp, 1.0);
  }
  const double fwd_n = blocks, bwd_n = recomputes ? 2.0 * blocks : blocks;
  lc.tp_bwd_busy = one * bwd_n;
  if (plan.async_tp) {
    const Seconds fwd = async_tp_exposed(one, lc.dense_gemm_fwd / blocks, plan.tp);
    lc.tp_fwd = fwd * blocks;
    lc.tp_bwd = async_tp_exposed(one, lc.dense_gemm_bwd / blocks, plan.tp) * blocks + (recomputes ? fwd * blocks : Seconds{});
  } else {
    lc.tp_fwd = one * fwd_n * x.s.framework.tp_comm_exposed;
    lc.tp_bwd = one * bwd_n * x.s.framework.tp_comm_exposed;
  }
  lc.act.scale_up_bytes += tmp.scale_up_bytes * (fwd_n + bwd_n);
  lc.act.scale_out_bytes += tmp.scale_out_bytes * (fwd_n + bwd_n);
}

/// CP: ring attention passes the K/V chunk around the cp ranks, overlapped with the attention of
/// the chunk in hand; backward also passes dK/dV (twice the bytes).
void add_cp_comm(const Context& x, LayerCost& lc, int layer) {
  const auto& plan = x.s.plan;
  const auto& md = x.s.model;
  if (plan.cp <= 1) return;
  const double kv_chunk = static_cast<double>(x.tokens_chip) * 2.0 *
                          static_cast<double>(std::max(1, md.layer_kv_heads(layer) / plan.tp)) *
                          static_cast<double>(md.head_dim) * kActBytes;
  cost::Activity tmp;
  const Seconds step = x.coll(CollectiveKind::SendRecv, kv_chunk, net::Group{2, plan.tp}, tmp, 1.0);
  const Seconds ring = step * static_cast<double>(plan.cp - 1);
  lc.cp_fwd = core::max(Seconds{}, ring - lc.attn_fwd);
  lc.cp_bwd = core::max(Seconds{}, ring * 2.0 - lc.attn_fwd * x.s.framework.cp_attention_backward_ratio);
  lc.act.scale_up_bytes += tmp.scale_up_bytes * (3.0 * (plan.cp - 1));
  lc.act.scale_out_bytes += tmp.scale_out_bytes * (3.0 * (plan.cp - 1));
}

/// CP on a recurrent layer (Megatron's MambaContextParallel; the same exchange for DeltaNet): the
/// scan needs whole sequences, so an all-to-all over the cp ranks turns the sequence shards of the
/// conv inputs (Mamba: x, B, C; DeltaNet: q, k, v) and the per-head gates (dt; beta, alpha) into
/// head shards, and another turns the output back; the backward repeats both. Not overlapped.
void add_recurrent_cp_comm(const Context& x, LayerCost& lc, int layer) {
  const auto& plan = x.s.plan;
  if (plan.cp <= 1) return;
  const auto& md = x.s.model;
  const double width = md.layer_is_mamba(layer)
                           ? static_cast<double>(md.mamba.conv_channels() + md.mamba.heads + md.mamba.inner())
                           : static_cast<double>(md.linear.conv_channels() + 2 * md.linear.value_heads +
                                                 md.linear.value_width());
  const double per_token = width / plan.tp;
  cost::Activity tmp;
  const Seconds both = x.coll(CollectiveKind::AllToAll, static_cast<double>(x.tokens_chip) * per_token * kActBytes,
                              net::Group{plan.cp, plan.tp}, tmp, 1.0);
  lc.cp_fwd = both;
  lc.cp_bwd = both;
  lc.act.scale_up_bytes += tmp.scale_up_bytes * 2.0;
  lc.act.scale_out_bytes += tmp.scale_out_bytes * 2.0;
}

/// MoE: token routing cost each pass (framework overhead), and the dispatch and combine
/// all-to-all of each pass over the expert-parallel group. Megatron needs sequence parallelism for
/// MoE with tp > 1: each tensor-parallel rank dispatches only its sequence shard, and the expert
/// tensor-parallel group (etp, by default tp) all-gathers what arrives before the experts and
/// reduce-scatters it after them.
void add_moe_comm(const Context& x, LayerCost& lc) {
  const auto& md = x.s.model;
  const auto& fw = x.s.framework;
  const double routed = static_cast<double>(x.tokens_chip) * md.moe.experts_per_token * static_cast<double>(md.hidden);
  lc.fwd += fw.moe_route_cost_per_element * routed;
  lc.bwd += fw.moe_route_cost_per_element * routed;
  if (x.s.plan.ep <= 1) return;
  // Each token goes to top-k experts; with group-limited routing (DeepSeek) it is sent once per
  // destination group and fanned out inside it, so at most group_limit copies travel.
  int fanout = md.moe.experts_per_token;
  if (md.moe.group_limit > 0) fanout = std::min(fanout, md.moe.group_limit);
  const bool sp = x.shard.sequence_parallel;
  const long long gather = sp ? x.s.plan.etp() : 1;  // without SP every tp rank holds every token
  const double shard_tokens = static_cast<double>(x.tokens_chip) / static_cast<double>(sp ? x.s.plan.tp : 1);
  // The busiest rank receives moe_expert_load() × the mean (the imbalance, capped or padded by the
  // capacity: dropped tokens are not sent); the exchange ends when it has.
  const double a2a = shard_tokens * fanout * static_cast<double>(md.hidden) * kActBytes * x.s.plan.moe_expert_load();
  cost::Activity tmp;
  const Seconds one = x.coll(CollectiveKind::AllToAll, a2a, x.ep_group, tmp, 1.0) +
                      x.coll(CollectiveKind::AllGather, a2a * static_cast<double>(gather), net::Group{gather, 1}, tmp, 1.0);
  lc.a2a_fwd = one * 2.0;
  lc.a2a_bwd = one * 2.0;
  lc.ep_fwd = lc.a2a_fwd * fw.ep_comm_exposed;
  lc.ep_bwd = lc.a2a_bwd * fw.ep_comm_exposed;
  lc.act.scale_up_bytes += tmp.scale_up_bytes * 4.0;
  lc.act.scale_out_bytes += tmp.scale_out_bytes * 4.0;
}

/// FSDP / ZeRO-3: gather the layer's parameters before forward and backward, reduce-scatter its
/// gradients after backward; prefetch hides most of it behind the layer's compute.
void add_fsdp_comm(const Context& x, LayerCost& lc) {
  if (!x.fsdp) return;
  cost::Activity tmp;
  const double pbytes = lc.dense_params * 2.0, ebytes = lc.expert_params * 2.0;
  const Seconds ag = x.coll(CollectiveKind::AllGather, pbytes, x.dp_group, tmp, 1.0) +
                     x.coll(CollectiveKind::AllGather, ebytes, x.edp_group, tmp, 1.0);
  // Gradients exist for the weights that train only (LoRA: the adapters).
  const Seconds rs = x.coll(CollectiveKind::ReduceScatter, lc.trained_dense * 2.0, x.dp_group, tmp, 1.0) +
                     x.coll(CollectiveKind::ReduceScatter, lc.trained_expert * 2.0, x.edp_group, tmp, 1.0);
  const double overlap = x.s.framework.fsdp_overlap;
  lc.fsdp_fwd = core::max(Seconds{}, ag - lc.fwd * overlap);
  lc.fsdp_bwd = core::max(Seconds{}, ag + rs - (lc.bwd + lc.recompute) * overlap);
  lc.act.scale_up_bytes += tmp.scale_up_bytes;
  lc.act.scale_out_bytes += tmp.scale_out_bytes;
}

LayerCost layer_cost(const Context& x, int layer) {
  LayerCost lc;
  const auto& md = x.s.model;
  add_layer_compute(x, workload::layer_ops(md, layer, x.shard), mapping::recompute_kind(x.s.plan, md.layers, layer), lc);
  // A mixer then an MLP closes two TP regions (Megatron's training layers: attention and MLP are
  // sequential even where inference runs them in parallel); a hybrid's single-part block one.
  // Nemotron-NAS linear replacements count as the part they replace.
  add_tp_comm(x, lc, md.layer_has_mixer_part(layer) && md.layer_has_mlp_part(layer) ? 2.0 : 1.0,
              mapping::recomputes_layer(x.s.plan, md.layers, layer));
  if (md.layer_has_attention(layer)) add_cp_comm(x, lc, layer);
  if (md.layer_is_recurrent(layer)) add_recurrent_cp_comm(x, lc, layer);
  if (md.layer_is_moe(layer)) add_moe_comm(x, lc);
  add_fsdp_comm(x, lc);
  return lc;
}

/// Layer costs memoised per layer class (MoE or dense, sliding or full attention, the block of a
/// hybrid, a heterogeneous model's layer sizes, recomputed or not).
class LayerCosts {
 public:
  explicit LayerCosts(const Context& x) : x_(x) {}
  const LayerCost& operator()(int layer) {
    const auto& md = x_.s.model;
    const bool sliding = layer < static_cast<int>(md.layer_is_sliding.size()) &&
                         md.layer_is_sliding[static_cast<size_t>(layer)];
    const auto key = std::make_tuple(md.layer_is_moe(layer), sliding, static_cast<int>(md.layer_block(layer)),
                                     md.layer_shape(layer), mapping::recomputes_layer(x_.s.plan, md.layers, layer));
    auto it = memo_.find(key);
    if (it == memo_.end()) it = memo_.emplace(key, layer_cost(x_, layer)).first;
    return it->second;
  }

 private:
  const Context& x_;
  std::map<std::tuple<bool, bool, int, workload::LayerShape, bool>, LayerCost> memo_;
};

void add_layer(StageCost& sc, const LayerCost& lc) {
  sc.fwd_compute += lc.fwd;
  sc.bwd_compute += lc.bwd;
  sc.recompute += lc.recompute;
  sc.weight_grad += lc.weight_grad;
  sc.tp_exposed += lc.tp_fwd + lc.tp_bwd;
  sc.tp_bwd_busy += lc.tp_bwd_busy;
  sc.cp_exposed += lc.cp_fwd + lc.cp_bwd;
  sc.ep_fwd += lc.ep_fwd;
  sc.ep_bwd += lc.ep_bwd;
  sc.a2a_fwd += lc.a2a_fwd;
  sc.a2a_bwd += lc.a2a_bwd;
  sc.fsdp_exposed += lc.fsdp_fwd + lc.fsdp_bwd;
  sc.fwd_comm += lc.tp_fwd + lc.cp_fwd + lc.ep_fwd + lc.fsdp_fwd;
  sc.bwd_comm += lc.tp_bwd + lc.cp_bwd + lc.ep_bwd + lc.fsdp_bwd;
  sc.dense_params += lc.dense_params;
  sc.expert_params += lc.expert_params;
  sc.trained_dense += lc.trained_dense;
  sc.trained_expert += lc.trained_expert;
  sc.activity += lc.act;
}

/// The embedding (first stage) and the LM head (last stage) operators.
void add_ends(const Context& x, StageCost& sc) {
  const auto& md = x.s.model;
  auto add_ops = [&](const std::vector<workload::Op>& ops, bool weights_on_chip) {
    for (const auto& op : ops) {
      const auto [f, b] = time_both(x.chip, op, x.prec, sc.activity);
      sc.fwd_compute += f.time;
      sc.bwd_compute += b.time;
      if (op.is_trained_weight_gemm()) sc.weight_grad += f.time;
      if (weights_on_chip && op.kind == workload::OpKind::Gemm) {
        const double p = static_cast<double>(op.k) * static_cast<double>(op.n);
        sc.dense_params += p;
        if (!op.frozen) sc.trained_dense += p;
      }
    }
  };
  if (sc.has_embedding) {
    add_ops(workload::embedding_ops(md, x.shard), false);
    const double table = static_cast<double>(md.vocab) * static_cast<double>(md.hidden) / x.s.plan.tp;
    sc.dense_params += table;
    if (x.s.plan.lora_rank <= 0) sc.trained_dense += table;
  }
  if (sc.has_head) add_ops(workload::head_ops(md, x.shard), !md.tied_embeddings || x.s.plan.pp > 1);
  // Multi-token prediction on the last stage: per module its norms and eh_proj (trained weights),
  // the next token's embedding and a second pass through the shared LM head and loss (its block
  // is added with the stage's layers).
  if (!sc.has_head) return;
  for (int d = 0; d < x.s.plan.mtp_layers; ++d) {
    add_ops(workload::mtp_ops(md, x.shard), true);
    add_ops(workload::embedding_ops(md, x.shard), false);
    add_ops(workload::head_ops(md, x.shard), false);
  }
}

/// Stages with the layer split of mapping::layers_per_stage.
void add_stages(const Context& x, StepCosts& out) {
  const int pp = x.s.plan.pp;
  const std::vector<int> per = mapping::layers_per_stage(x.s.model.layers, pp);
  LayerCosts layers(x);
  int first = 0;
  for (int st = 0; st < pp; ++st) {
    StageCost sc;
    sc.first_layer = first;
    sc.layers = per[static_cast<size_t>(st)];
    sc.has_embedding = st == 0;
    sc.has_head = st == pp - 1;
    for (int l = first; l < first + sc.layers; ++l) add_layer(sc, layers(l));
    // Each MTP module's transformer block: a copy of the last layer.
    if (sc.has_head)
      for (int d = 0; d < x.s.plan.mtp_layers; ++d) add_layer(sc, layers(x.s.model.layers - 1));
    add_ends(x, sc);
    sc.ep_exposed = sc.ep_fwd + sc.ep_bwd;
    sc.params = sc.dense_params + sc.expert_params;
    out.stages.push_back(sc);
    first += sc.layers;
  }
}

/// Pipeline P2P: one activation tensor per micro-batch per boundary (sharded over tp with SP).
void add_p2p(const Context& x, StepCosts& out) {
  if (x.s.plan.pp <= 1) return;
  cost::Activity tmp;
  const double bytes = x.block_bytes / (x.shard.sequence_parallel ? x.s.plan.tp : 1);
  out.p2p = x.coll(CollectiveKind::SendRecv, bytes, x.pp_pair, tmp, 1.0);
  const double sends = 2.0 * static_cast<double>(out.micro_batches);
  out.step_activity.scale_up_bytes += tmp.scale_up_bytes * sends;
  out.step_activity.scale_out_bytes += tmp.scale_out_bytes * sends;
}

const StageCost& largest_stage(const StepCosts& out) {
  const StageCost* worst = &out.stages[0];
  for (const auto& sc : out.stages)
    if (sc.params > worst->params) worst = &sc;
  return *worst;
}

/// Data parallel: gradients (bf16) reduce-scattered (ZeRO ≥ 1) or all-reduced (none) over dp × cp
/// for dense weights and over dp × cp / ep for experts; ZeRO-1/2 then all-gathers the updated bf16
/// parameters. FSDP/ZeRO-3 did its reductions per layer.
void add_dp_comm(const Context& x, StepCosts& out) {
  if (x.fsdp) return;
  const StageCost& worst = largest_stage(out);
  cost::Activity tmp;
  const CollectiveKind red = x.grad_reduction();
  out.dp_grad_reduce = x.coll(red, worst.trained_dense * 2.0, x.dp_group, tmp, 1.0) +
                       x.coll(red, worst.trained_expert * 2.0, x.edp_group, tmp, 1.0);
  if (x.s.plan.zero != mapping::Zero::None) {
    out.dp_param_gather = x.coll(CollectiveKind::AllGather, worst.trained_dense * 2.0, x.dp_group, tmp, 1.0) +
                          x.coll(CollectiveKind::AllGather, worst.trained_expert * 2.0, x.edp_group, tmp, 1.0);
  }
  out.step_activity.scale_up_bytes += tmp.scale_up_bytes;
  out.step_activity.scale_out_bytes += tmp.scale_out_bytes;
}

/// Contention: while a gradient bucket is reduced, the backward's TP collectives use the same
/// scale-up links for the share of the backward they occupy.
void add_dp_contention(const Context& x, StepCosts& out) {
  const auto& plan = x.s.plan;
  const auto& fw = x.s.framework;
  const StageCost& worst = largest_stage(out);
  if (x.fsdp || plan.tp <= 1 || x.dp_group.size <= 1 || worst.trained_dense <= 0 || !fw.dp_overlap) return;
  const double bucket = worst.trained_dense * 2.0 / std::max(1, worst.layers);
  const CollectiveKind tpk = x.shard.sequence_parallel ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce;
  std::vector<net::CollectiveRequest> reqs = {{x.grad_reduction(), core::bytes(bucket), x.dp_group, {}},
                                              {tpk, core::bytes(x.block_bytes), x.tp_group, {}}};
  const auto shared = net::concurrent_costs(x.topo, reqs);
  const auto alone = net::collective_cost(x.topo, x.grad_reduction(), core::bytes(bucket), x.dp_group);
  if (alone.time <= Seconds{} || worst.bwd_compute <= Seconds{}) return;
  const double tp_share = std::min(1.0, core::to_seconds(worst.tp_bwd_busy) / core::to_seconds(worst.bwd_compute));
  out.dp_contention = 1.0 + (shared[0].time / alone.time - 1.0) * tp_share;
}

/// Optimizer: mixed-precision Adam streams fp32 master weights, both moments and the fp32
/// gradient, and writes master, moments and the bf16 copy: 4·4 + 3·4 + 2 = 30 bytes/param.
void add_optimizer(const Context& x, StepCosts& out) {
  const auto& plan = x.s.plan;
  const StageCost& worst = largest_stage(out);
  double shard_params = worst.trained_dense;
  double expert_shard = worst.trained_expert;
  if (plan.zero != mapping::Zero::None) {
    shard_params /= static_cast<double>(plan.dp) * plan.cp;
    expert_shard /= static_cast<double>(x.edp);
  }
  const Bytes b = core::bytes((shard_params + expert_shard) * 30.0);
  out.optimizer = x.chip.memory_time(b) + x.chip.calibration().kernel_overhead * x.s.framework.optimizer_kernels;
  out.step_activity.hbm_bytes += b;
}

void add_flops(const Context& x, StepCosts& out) {
  const auto& plan = x.s.plan;
  const long long tokens_step = plan.global_batch * plan.seq_len;
  const auto none = workload::train_flops_per_token(x.s.model, plan.seq_len, workload::RecomputeKind::None, plan.lora_rank,
                                                     plan.lora_targets);
  const auto withrc = workload::train_flops_per_token(x.s.model, plan.seq_len, mapping::recompute_kind(plan), plan.lora_rank,
                                                       plan.lora_targets);
  // recompute_layers: only that share of the layers reruns its forward.
  const double share = mapping::recomputed_layer_share(plan, x.s.model.layers);
  out.model_flops_per_step = none.model * static_cast<double>(tokens_step);
  out.hw_flops_per_step = (none.hardware + share * (withrc.hardware - none.hardware)) * static_cast<double>(tokens_step);
}

}  // namespace

StepCosts step_costs(const TrainScenario& s, const net::Topology& topo, const compute::ChipModel& chip) {
  const Context x(s, topo, chip);
  StepCosts out;
  out.micro_batches = std::max<long long>(1, s.plan.micro_batches());
  add_stages(x, out);
  add_p2p(x, out);
  add_dp_comm(x, out);
  add_dp_contention(x, out);
  add_optimizer(x, out);
  add_flops(x, out);
  return out;
}

LayerDetail layer_detail(const TrainScenario& s, const net::Topology& topo, const compute::ChipModel& chip,
                         int layer) {
  const Context x(s, topo, chip);
  LayerDetail d;
  cost::Activity scratch;
  for (const auto& op : workload::layer_ops(s.model, layer, x.shard)) {
    const auto [f, b] = time_both(x.chip, op, x.prec, scratch);
    d.ops.push_back({op.name, f.flops, b.flops, f.hbm_bytes, b.hbm_bytes, f.time, b.time});
  }
  const LayerCost lc = layer_cost(x, layer);
  d.tp_fwd = lc.tp_fwd, d.tp_bwd = lc.tp_bwd, d.cp_fwd = lc.cp_fwd, d.cp_bwd = lc.cp_bwd;
  d.ep_fwd = lc.ep_fwd, d.ep_bwd = lc.ep_bwd, d.fsdp_fwd = lc.fsdp_fwd, d.fsdp_bwd = lc.fsdp_bwd;
  return d;
}

}  // namespace xpusim::engine::detail

namespace xpusim::engine {

std::vector<OpProfile> layer_op_profile(const TrainScenario& s) {
  const compute::ChipModel chip(s.system->chip, detail::calibration(s));
  const compute::Precision prec = detail::precision_of(s.plan);
  // The middle layer; a hybrid's first layer of each block kind (Mamba-2, DeltaNet, attention, MLP),
  // a heterogeneous model's first of each block kind and shape.
  std::vector<int> layers = {s.model.layers / 2};
  if (s.model.has_recurrent() || s.model.heterogeneous()) {
    layers.clear();
    std::vector<std::pair<workload::LayerBlock, workload::LayerShape>> seen;
    for (int i = 0; i < s.model.layers; ++i) {
      const auto kind = std::make_pair(s.model.layer_block(i), s.model.layer_shape(i));
      if (std::find(seen.begin(), seen.end(), kind) != seen.end()) continue;
      seen.push_back(kind);
      layers.push_back(i);
    }
  }
  std::vector<OpProfile> out;
  for (int layer : layers)
    for (const auto& op : workload::layer_ops(s.model, layer, detail::shard_of(s.plan))) {
      const compute::OpTime t = chip.time(op, prec, compute::Pass::Forward);
      out.push_back({op.name, t.flops, t.hbm_bytes, t.time, t.compute_bound});
    }
  return out;
}

}  // namespace xpusim::engine
