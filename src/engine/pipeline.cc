#include "pipeline.h"

#include <algorithm>
#include <cmath>

#include "common.h"

namespace xpusim::engine::detail {

namespace {

/// One micro-batch through `share` of stage `sc`. A pairing schedule hides the whole expert
/// all-to-all itself, so its chunks carry the all-to-all in full instead of the framework's
/// exposed share.
mapping::ChunkTimes chunk_times(const StageCost& sc, double share, bool pairing) {
  mapping::ChunkTimes t;
  t.forward = (pairing ? sc.fwd() - sc.ep_fwd + sc.a2a_fwd : sc.fwd()) * share;
  t.backward = (pairing ? sc.bwd() - sc.ep_bwd + sc.a2a_bwd : sc.bwd()) * share;
  t.weight_grad = sc.weight_grad * share;
  if (pairing) {
    t.forward_a2a = sc.a2a_fwd * share;
    t.backward_a2a = sc.a2a_bwd * share;
  }
  return t;
}

std::vector<int> micro_batches_per_route(const mapping::Schedule& sch, const mapping::PipelineShape& shape,
                                         size_t routes) {
  std::vector<int> n(routes, 0);
  for (int mb = 0; mb < shape.micro_batches; ++mb) ++n[static_cast<size_t>(sch.route_of(shape, mb))];
  return n;
}

/// Adds chunk `c` (share of stage `sc`, `mbs` micro-batches per step) to the rank's totals.
void add_chunk(RankCost& rc, const StageCost& sc, double share, int mbs, const mapping::ChunkTimes& t) {
  rc.chunks.push_back(t);
  rc.micro_batches.push_back(mbs);
  const int chunks_of_stage = static_cast<int>(std::lround(1.0 / share));
  rc.buckets.push_back(std::max(1, dp_buckets(sc) / chunks_of_stage));
  rc.params += sc.params * share;
  rc.forward += t.forward;
  rc.backward += t.backward;
  const double k = share * mbs;
  rc.per_step.compute += (sc.fwd_compute + sc.bwd_compute + sc.recompute) * k;
  rc.per_step.tp_comm += sc.tp_exposed * k;
  rc.per_step.cp_comm += sc.cp_exposed * k;
  rc.per_step.ep_comm += sc.ep_exposed * k;
  rc.fsdp += sc.fsdp_exposed * k;
}

}  // namespace

PipelineCosts pipeline_costs(const TrainScenario& s, const StepCosts& c) {
  PipelineCosts p;
  p.schedule = &mapping::schedule_of(s.plan);
  p.shape = mapping::pipeline_shape(s.plan);
  p.chunks = p.schedule->chunks_per_rank(p.shape);
  const bool pairing = p.schedule->pairs_chunks();
  for (const auto& sc : c.stages) p.largest_stage_params = std::max(p.largest_stage_params, sc.params);
  const auto routes = p.schedule->routes(p.shape);
  const std::vector<int> per_route = micro_batches_per_route(*p.schedule, p.shape, routes.size());
  std::vector<int> through(static_cast<size_t>(p.shape.pp * p.chunks), 0);
  for (size_t i = 0; i < routes.size(); ++i)
    for (const auto& hop : routes[i]) through[static_cast<size_t>(hop.rank * p.chunks + hop.chunk)] += per_route[i];
  p.times.p2p = c.p2p;
  core::Seconds most;
  for (int r = 0; r < p.shape.pp; ++r) {
    RankCost rc;
    std::vector<int> stages;
    for (int ch = 0; ch < p.chunks; ++ch) {
      const auto place = p.schedule->placement(p.shape, r, ch);
      const StageCost& sc = c.stages[static_cast<size_t>(place.stage)];
      add_chunk(rc, sc, place.share, through[static_cast<size_t>(r * p.chunks + ch)],
                chunk_times(sc, place.share, pairing));
      if (std::find(stages.begin(), stages.end(), place.stage) == stages.end()) {
        stages.push_back(place.stage);
        rc.layers += sc.layers;
      }
    }
    for (size_t ch = 0; ch < rc.chunks.size(); ++ch) {
      const auto place = p.schedule->placement(p.shape, r, static_cast<int>(ch));
      const double stage_params = c.stages[static_cast<size_t>(place.stage)].params;
      rc.grad_share.push_back(p.largest_stage_params > 0 ? stage_params * place.share / p.largest_stage_params : 0.0);
    }
    mapping::ChunkTimes mean;
    const double n = static_cast<double>(rc.chunks.size());
    for (const auto& t : rc.chunks) {
      mean.forward += t.forward / n;
      mean.backward += t.backward / n;
      mean.weight_grad += t.weight_grad / n;
      mean.forward_a2a += t.forward_a2a / n;
      mean.backward_a2a += t.backward_a2a / n;
    }
    p.times.rank.push_back(mean);
    const core::Seconds work = (rc.forward + rc.backward) / n * static_cast<double>(p.shape.micro_batches);
    if (work > most) {
      most = work;
      p.busiest = r;
    }
    p.ranks.push_back(std::move(rc));
  }
  return p;
}

core::Seconds exposed_param_gather(const StepCosts& c, const PipelineCosts& p, int rank) {
  const RankCost& rc = p.ranks[static_cast<size_t>(rank)];
  const double share = p.largest_stage_params > 0 ? rc.params / p.largest_stage_params : 0.0;
  return exposed_bucketed(c.dp_param_gather * share, rc.forward, std::max(1, rc.layers));
}

}  // namespace xpusim::engine::detail
