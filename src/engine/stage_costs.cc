#include "stage_costs.h"

#include <algorithm>
#include <map>
#include <tuple>

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
  Seconds fwd, bwd, recompute, attn_fwd;
  Seconds tp_fwd, tp_bwd, cp_fwd, cp_bwd, ep_fwd, ep_bwd, fsdp_fwd, fsdp_bwd;
  double dense_params = 0, expert_params = 0;
  cost::Activity act;
};

double weight_params(const std::vector<workload::Op>& ops, bool experts) {
  double p = 0;
  for (const auto& o : ops) {
    if (o.kind != workload::OpKind::Gemm || !o.weights) continue;
    const bool is_expert = o.name.rfind("expert_", 0) == 0;
    if (is_expert != experts) continue;
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

}  // namespace

StepCosts step_costs(const TrainScenario& s, const net::Topology& topo,
                     const compute::ChipModel& chip) {
  const auto& plan = s.plan;
  const auto& md = s.model;
  const auto& fw = s.framework;
  const compute::Precision prec = precision_of(plan);
  const double act_bytes = 2.0;  // bf16 activations on the wire

  workload::LayerShard shard;
  shard.batch = plan.micro_batch;
  shard.seq = plan.seq_len;
  shard.tp = plan.tp;
  shard.cp = plan.cp;
  shard.ep = plan.ep;
  shard.etp = plan.etp();
  shard.sequence_parallel = plan.sequence_parallel && plan.tp > 1;

  const long long tokens_chip = plan.micro_batch * plan.seq_len / plan.cp;  // per micro-batch
  const double block_bytes = static_cast<double>(tokens_chip) * static_cast<double>(md.hidden) * act_bytes;

  const net::Group tp_group{plan.tp, 1};
  const net::Group ep_group{plan.ep, plan.tp};
  const net::Group dp_group{static_cast<long long>(plan.dp) * plan.cp, plan.tp};
  const long long edp = std::max<long long>(1, static_cast<long long>(plan.dp) * plan.cp / plan.ep);
  const net::Group edp_group{edp, static_cast<long long>(plan.tp) * plan.ep};
  const net::Group pp_pair{2, static_cast<long long>(plan.tp) * plan.cp * plan.dp};

  auto coll = [&](CollectiveKind k, double bytes, net::Group g, cost::Activity& act, double times) {
    if (g.size <= 1 || bytes <= 0) return Seconds{};
    auto c = net::collective_cost(topo, k, core::bytes(bytes), g);
    act.scale_up_bytes += c.scale_up_bytes * times;
    act.scale_out_bytes += c.scale_out_bytes * times;
    return c.time * times;
  };

  const bool fsdp = plan.zero == mapping::Zero::Zero3 || plan.zero == mapping::Zero::Fsdp;

  // Cost of one layer, memoised per layer class (MoE or dense, sliding or full attention).
  std::map<std::tuple<bool, bool>, LayerCost> memo;
  auto layer_cost = [&](int layer) -> const LayerCost& {
    const bool moe = md.layer_is_moe(layer);
    const bool sliding = layer < static_cast<int>(md.layer_is_sliding.size()) &&
                         md.layer_is_sliding[static_cast<size_t>(layer)];
    auto key = std::make_tuple(moe, sliding);
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
    LayerCost lc;
    const auto ops = workload::layer_ops(md, layer, shard);
    for (const auto& op : ops) {
      const auto [f, b] = time_both(chip, op, prec, lc.act);
      lc.fwd += f.time;
      lc.bwd += b.time;
      if (op.kind == workload::OpKind::Attention) lc.attn_fwd += f.time;
      if (plan.recompute == mapping::Recompute::Full ||
          (plan.recompute == mapping::Recompute::Selective && op.kind == workload::OpKind::Attention)) {
        lc.recompute += f.time;
        lc.act.add_flops(f.dtype, f.flops);
        lc.act.hbm_bytes += f.hbm_bytes;
        lc.act.busy += f.time;
      }
    }
    lc.dense_params = weight_params(ops, false);
    lc.expert_params = weight_params(ops, true);
    // TP/SP: two collectives per block (attention, MLP) in each pass; full recompute repeats
    // the forward ones inside the backward.
    if (plan.tp > 1) {
      cost::Activity tmp;
      Seconds one;
      if (shard.sequence_parallel) {
        one = coll(CollectiveKind::AllGather, block_bytes, tp_group, tmp, 1.0) +
              coll(CollectiveKind::ReduceScatter, block_bytes, tp_group, tmp, 1.0);
      } else {
        one = coll(CollectiveKind::AllReduce, block_bytes, tp_group, tmp, 1.0);
      }
      const double fwd_n = 2.0, bwd_n = plan.recompute == mapping::Recompute::Full ? 4.0 : 2.0;
      lc.tp_fwd = one * fwd_n * fw.tp_comm_exposed;
      lc.tp_bwd = one * bwd_n * fw.tp_comm_exposed;
      lc.act.scale_up_bytes += tmp.scale_up_bytes * (fwd_n + bwd_n);
      lc.act.scale_out_bytes += tmp.scale_out_bytes * (fwd_n + bwd_n);
    }
    // CP: ring attention passes the K/V chunk around the cp ranks, overlapped with the
    // attention of the chunk in hand; backward also passes dK/dV (twice the bytes).
    if (plan.cp > 1) {
      const double kv_chunk = static_cast<double>(tokens_chip) * 2.0 *
                              static_cast<double>(std::max(1, md.kv_heads / plan.tp)) *
                              static_cast<double>(md.head_dim) * act_bytes;
      cost::Activity tmp;
      const Seconds step = coll(CollectiveKind::SendRecv, kv_chunk, net::Group{2, plan.tp}, tmp, 1.0);
      const Seconds ring = step * static_cast<double>(plan.cp - 1);
      lc.cp_fwd = core::max(Seconds{}, ring - lc.attn_fwd);
      lc.cp_bwd = core::max(Seconds{}, ring * 2.0 - lc.attn_fwd * fw.cp_attention_backward_ratio);
      lc.act.scale_up_bytes += tmp.scale_up_bytes * (3.0 * (plan.cp - 1));
      lc.act.scale_out_bytes += tmp.scale_out_bytes * (3.0 * (plan.cp - 1));
    }
    // Token routing of a dropless MoE layer (framework overhead, each pass).
    if (moe) {
      const double routed = static_cast<double>(tokens_chip) * md.moe.experts_per_token *
                            static_cast<double>(md.hidden);
      lc.fwd += fw.moe_route_cost_per_element * routed;
      lc.bwd += fw.moe_route_cost_per_element * routed;
    }
    // EP: dispatch and combine all-to-all in each pass of a MoE layer.
    if (moe && plan.ep > 1) {
      // Each token goes to top-k experts; with group-limited routing (DeepSeek) it is sent once
      // per destination group and fanned out inside it, so at most group_limit copies travel.
      int fanout = md.moe.experts_per_token;
      if (md.moe.group_limit > 0) fanout = std::min(fanout, md.moe.group_limit);
      const double a2a = static_cast<double>(tokens_chip) * fanout *
                         static_cast<double>(md.hidden) * act_bytes;
      cost::Activity tmp;
      const Seconds one = coll(CollectiveKind::AllToAll, a2a, ep_group, tmp, 1.0);
      lc.ep_fwd = one * 2.0 * fw.ep_comm_exposed;
      lc.ep_bwd = one * 2.0 * fw.ep_comm_exposed;
      lc.act.scale_up_bytes += tmp.scale_up_bytes * 4.0;
      lc.act.scale_out_bytes += tmp.scale_out_bytes * 4.0;
    }
    // FSDP / ZeRO-3: gather the layer's parameters before forward and backward, reduce-scatter
    // its gradients after backward; prefetch hides most of it behind the layer's compute.
    if (fsdp) {
      cost::Activity tmp;
      const double pbytes = lc.dense_params * 2.0;
      const double ebytes = lc.expert_params * 2.0;
      const Seconds ag = coll(CollectiveKind::AllGather, pbytes, dp_group, tmp, 1.0) +
                         coll(CollectiveKind::AllGather, ebytes, edp_group, tmp, 1.0);
      const Seconds rs = coll(CollectiveKind::ReduceScatter, pbytes, dp_group, tmp, 1.0) +
                         coll(CollectiveKind::ReduceScatter, ebytes, edp_group, tmp, 1.0);
      lc.fsdp_fwd = core::max(Seconds{}, ag - lc.fwd * fw.fsdp_overlap);
      lc.fsdp_bwd = core::max(Seconds{}, ag + rs - (lc.bwd + lc.recompute) * fw.fsdp_overlap);
      lc.act.scale_up_bytes += tmp.scale_up_bytes;
      lc.act.scale_out_bytes += tmp.scale_out_bytes;
    }
    return memo.emplace(key, lc).first->second;
  };

  StepCosts out;
  out.micro_batches = std::max<long long>(1, plan.micro_batches());
  // Layers per stage: as even as possible, the remainder on the middle stages (the first and
  // last stages also carry the embedding and the LM head).
  const int pp = plan.pp;
  std::vector<int> per(static_cast<size_t>(pp), md.layers / pp);
  int rem = md.layers % pp;
  for (int i = 0; rem > 0; i = (i + 1) % pp) {
    const int idx = pp <= 2 ? i : 1 + (i % (pp - 2));
    if (per[static_cast<size_t>(idx)] < md.layers) {
      ++per[static_cast<size_t>(idx)];
      --rem;
    }
  }
  int first = 0;
  for (int st = 0; st < pp; ++st) {
    StageCost sc;
    sc.first_layer = first;
    sc.layers = per[static_cast<size_t>(st)];
    sc.has_embedding = st == 0;
    sc.has_head = st == pp - 1;
    Seconds tp_f, tp_b, cp_f, cp_b, ep_f, ep_b, fs_f, fs_b;
    for (int l = first; l < first + sc.layers; ++l) {
      const LayerCost& lc = layer_cost(l);
      sc.fwd_compute += lc.fwd;
      sc.bwd_compute += lc.bwd;
      sc.recompute += lc.recompute;
      tp_f += lc.tp_fwd; tp_b += lc.tp_bwd;
      cp_f += lc.cp_fwd; cp_b += lc.cp_bwd;
      ep_f += lc.ep_fwd; ep_b += lc.ep_bwd;
      fs_f += lc.fsdp_fwd; fs_b += lc.fsdp_bwd;
      sc.dense_params += lc.dense_params;
      sc.expert_params += lc.expert_params;
      sc.activity += lc.act;
    }
    auto add_ops = [&](const std::vector<workload::Op>& ops, bool weights_on_chip) {
      for (const auto& op : ops) {
        const auto [f, b] = time_both(chip, op, prec, sc.activity);
        sc.fwd_compute += f.time;
        sc.bwd_compute += b.time;
        if (weights_on_chip && op.kind == workload::OpKind::Gemm)
          sc.dense_params += static_cast<double>(op.k) * static_cast<double>(op.n);
      }
    };
    if (sc.has_embedding) {
      add_ops(workload::embedding_ops(md, shard), false);
      sc.dense_params += static_cast<double>(md.vocab) * static_cast<double>(md.hidden) / plan.tp;
    }
    if (sc.has_head) add_ops(workload::head_ops(md, shard), !md.tied_embeddings || pp > 1);
    sc.tp_exposed = tp_f + tp_b;
    sc.cp_exposed = cp_f + cp_b;
    sc.ep_exposed = ep_f + ep_b;
    sc.fsdp_exposed = fs_f + fs_b;
    sc.fwd_comm = tp_f + cp_f + ep_f + fs_f;
    sc.bwd_comm = tp_b + cp_b + ep_b + fs_b;
    sc.params = sc.dense_params + sc.expert_params;
    out.stages.push_back(sc);
    first += sc.layers;
  }

  // Pipeline P2P: one activation tensor per micro-batch per boundary (sharded over tp with SP).
  if (pp > 1) {
    cost::Activity tmp;
    const double bytes = block_bytes / (shard.sequence_parallel ? plan.tp : 1);
    out.p2p = coll(CollectiveKind::SendRecv, bytes, pp_pair, tmp, 1.0);
    out.step_activity.scale_up_bytes += tmp.scale_up_bytes * (2.0 * static_cast<double>(out.micro_batches));
    out.step_activity.scale_out_bytes += tmp.scale_out_bytes * (2.0 * static_cast<double>(out.micro_batches));
  }

  // Data parallel: gradients (bf16) reduce-scattered (ZeRO ≥ 1) or all-reduced (none) over
  // dp × cp for dense weights and over dp × cp / ep for experts; ZeRO-1/2 then all-gathers the
  // updated bf16 parameters. FSDP/ZeRO-3 did its reductions per layer above.
  const StageCost* worst = &out.stages[0];
  for (const auto& sc : out.stages)
    if (sc.params > worst->params) worst = &sc;
  {
    cost::Activity tmp;
    if (!fsdp) {
      const CollectiveKind red =
          plan.zero == mapping::Zero::None ? CollectiveKind::AllReduce : CollectiveKind::ReduceScatter;
      out.dp_grad_reduce = coll(red, worst->dense_params * 2.0, dp_group, tmp, 1.0) +
                           coll(red, worst->expert_params * 2.0, edp_group, tmp, 1.0);
      if (plan.zero != mapping::Zero::None) {
        out.dp_param_gather = coll(CollectiveKind::AllGather, worst->dense_params * 2.0, dp_group, tmp, 1.0) +
                              coll(CollectiveKind::AllGather, worst->expert_params * 2.0, edp_group, tmp, 1.0);
      }
    }
    out.step_activity.scale_up_bytes += tmp.scale_up_bytes;
    out.step_activity.scale_out_bytes += tmp.scale_out_bytes;
    // Contention: while a gradient bucket is reduced, the backward's TP collectives use the
    // same scale-up links for the share of the backward they occupy.
    if (!fsdp && plan.tp > 1 && dp_group.size > 1 && worst->dense_params > 0 && fw.dp_overlap) {
      const double bucket = worst->dense_params * 2.0 / std::max(1, worst->layers);
      const CollectiveKind red =
          plan.zero == mapping::Zero::None ? CollectiveKind::AllReduce : CollectiveKind::ReduceScatter;
      const CollectiveKind tpk =
          shard.sequence_parallel ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce;
      std::vector<net::CollectiveRequest> reqs = {{red, core::bytes(bucket), dp_group, {}},
                                                  {tpk, core::bytes(block_bytes), tp_group, {}}};
      const auto shared = net::concurrent_costs(topo, reqs);
      const auto alone = net::collective_cost(topo, red, core::bytes(bucket), dp_group);
      if (alone.time > Seconds{} && worst->bwd_compute > Seconds{}) {
        const double tp_share = std::min(1.0, core::to_seconds(worst->bwd_comm) /
                                                   std::max(1e-12, fw.tp_comm_exposed) /
                                                   core::to_seconds(worst->bwd_compute));
        out.dp_contention = 1.0 + (shared[0].time / alone.time - 1.0) * tp_share;
      }
    }
  }
  // Optimizer: mixed-precision Adam streams fp32 master weights, both moments and the fp32
  // gradient, and writes master, moments and the bf16 copy: 4·4 + 3·4 + 2 = 30 bytes/param.
  {
    double shard_params = worst->dense_params;
    double expert_shard = worst->expert_params;
    if (plan.zero != mapping::Zero::None) {
      shard_params /= static_cast<double>(plan.dp) * plan.cp;
      expert_shard /= static_cast<double>(edp);
    }
    const Bytes b = core::bytes((shard_params + expert_shard) * 30.0);
    out.optimizer = chip.memory_time(b) + chip.calibration().kernel_overhead * fw.optimizer_kernels;
    out.step_activity.hbm_bytes += b;
  }

  const long long tokens_step = plan.global_batch * plan.seq_len;
  const auto none = workload::train_flops_per_token(md, plan.seq_len, workload::RecomputeKind::None);
  const auto rk = plan.recompute == mapping::Recompute::Full
                      ? workload::RecomputeKind::Full
                      : plan.recompute == mapping::Recompute::Selective ? workload::RecomputeKind::Selective
                                                                         : workload::RecomputeKind::None;
  const auto withrc = workload::train_flops_per_token(md, plan.seq_len, rk);
  out.model_flops_per_step = none.model * static_cast<double>(tokens_step);
  out.hw_flops_per_step = withrc.hardware * static_cast<double>(tokens_step);
  return out;
}

}  // namespace xpusim::engine::detail
