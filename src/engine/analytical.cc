// Tier A: closed-form step time from the per-stage costs and the pipeline schedule's own closed
// form (mapping::Schedule::estimate, derived independently of the task graph):
//   pipeline = busy (the busiest rank's work) + bubble + P2P latency on the critical path
// e.g. 1F1B: m · max(F + B) + (pp − 1) · mean(F + B) + 2 (pp − 1) · p2p; interleaved divides the
// bubble by vpp; DualPipe pairs chunks (docs/architecture.md). Then the DP gradient reduction that
// the last backward cannot hide, the ZeRO parameter gather that the next forward cannot hide, the
// optimizer and fixed overheads.

#include <algorithm>

#include "common.h"
#include "pipeline.h"
#include "xpusim/net/topology.h"

namespace xpusim::engine {

TrainResult simulate_analytical(const TrainScenario& s) {
  if (auto bad = detail::check(s)) return *bad;
  const net::Topology topo = net::Topology::build(*s.system, s.plan.chips(), detail::topology_options(s));
  const compute::ChipModel chip(s.system->chip, detail::calibration(s));
  const detail::StepCosts c = detail::step_costs(s, topo, chip);
  const detail::PipelineCosts p = detail::pipeline_costs(s, c);
  const mapping::PipelineEstimate e = p.schedule->estimate(p.shape, p.times);
  const detail::RankCost& busiest = p.ranks[static_cast<size_t>(p.busiest)];

  // The DP tail: the gradients of the rank holding the most parameters, bucketed over the
  // busiest rank's backward of one micro-batch.
  double most_params = 0;
  for (const auto& rc : p.ranks) most_params = std::max(most_params, rc.params);
  const double grad_share = p.largest_stage_params > 0 ? most_params / p.largest_stage_params : 0.0;
  const core::Seconds window = s.framework.dp_overlap ? busiest.backward : core::Seconds{};
  const core::Seconds dp = detail::exposed_bucketed(c.dp_grad_reduce * grad_share, window, std::max(1, busiest.layers)) +
                           detail::exposed_param_gather(c, p, p.busiest);

  TrainResult r;
  r.executor = "analytical";
  r.breakdown = busiest.per_step;
  if (p.schedule->pairs_chunks()) r.breakdown.ep_comm = e.ep_comm;
  r.breakdown.pp_comm = e.pp_comm;
  r.breakdown.bubble = e.bubble;
  r.breakdown.dp_comm = dp + busiest.fsdp;
  r.breakdown.optimizer = c.optimizer;
  r.breakdown.other = s.framework.step_overhead;
  r.step_time = e.busy + e.bubble + e.pp_comm + dp + c.optimizer + s.framework.step_overhead;
  detail::finish(s, c, r);
  return r;
}

}  // namespace xpusim::engine
