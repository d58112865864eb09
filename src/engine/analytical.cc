// Tier A: closed-form step time from the per-stage costs.
//   pipeline = m · max_s(F_s + B_s) + (pp − 1)/vpp · mean_s(F_s + B_s) + 2 (pp − 1) · p2p
//   (1F1B: the bubble is (pp − 1)/vpp of one micro-batch's stage time; the slowest stage sets
//   the steady state), then the DP gradient reduction that the last backward cannot hide, the
//   ZeRO parameter gather that the next forward cannot hide, the optimizer and fixed overheads.

#include <algorithm>

#include "common.h"
#include "xpusim/net/topology.h"

namespace xpusim::engine {

TrainResult simulate_analytical(const TrainScenario& s) {
  if (auto bad = detail::check(s)) return *bad;
  const net::Topology topo = net::Topology::build(*s.system, s.plan.chips(), detail::topology_options(s));
  const compute::ChipModel chip(s.system->chip, detail::calibration(s));
  const detail::StepCosts c = detail::step_costs(s, topo, chip);
  const auto& plan = s.plan;
  const double m = static_cast<double>(c.micro_batches);
  const double v = static_cast<double>(plan.vpp);

  core::Seconds worst, sum;
  const detail::StageCost* ws = &c.stages[0];
  for (const auto& st : c.stages) {
    const core::Seconds t = st.fwd() + st.bwd();
    sum += t;
    if (t > worst) {
      worst = t;
      ws = &st;
    }
  }
  const core::Seconds mean = sum / static_cast<double>(c.stages.size());
  const core::Seconds bubble = mean * ((plan.pp - 1) / v);
  const core::Seconds p2p = c.p2p * (2.0 * (plan.pp - 1));

  TrainResult r;
  r.executor = "analytical";
  const int nb = detail::dp_buckets(*ws);
  const core::Seconds window = s.framework.dp_overlap ? ws->bwd() : core::Seconds{};
  const core::Seconds dp = detail::exposed_bucketed(c.dp_grad_reduce, window, nb) +
                           detail::exposed_bucketed(c.dp_param_gather, ws->fwd(), nb);
  r.breakdown.compute = (ws->fwd_compute + ws->bwd_compute + ws->recompute) * m;
  r.breakdown.tp_comm = ws->tp_exposed * m;
  r.breakdown.cp_comm = ws->cp_exposed * m;
  r.breakdown.ep_comm = ws->ep_exposed * m;
  r.breakdown.pp_comm = p2p;
  r.breakdown.bubble = bubble;
  r.breakdown.dp_comm = dp + ws->fsdp_exposed * m;
  r.breakdown.optimizer = c.optimizer;
  r.breakdown.other = s.framework.step_overhead;
  r.step_time = worst * m + bubble + p2p + dp + c.optimizer + s.framework.step_overhead;
  detail::finish(s, c, r);
  return r;
}

}  // namespace xpusim::engine
