// Tier-A plan search: enumerate plans that divide the chips, time each with the analytical
// executor, keep the fastest that fits in memory. Deterministic: ties keep the first plan in
// enumeration order.

#include <algorithm>

#include "xpusim/engine/train.h"

namespace xpusim::engine {

SearchResult search_plan(const TrainScenario& base, long long chips, const SearchSpace& space) {
  SearchResult best;
  const auto& sys = *base.system;
  const auto& md = base.model;
  for (int tp : space.tp) {
    // TP stays inside the scale-up domain and tiles it.
    if (tp > sys.chips_per_domain || sys.chips_per_domain % tp != 0 || chips % tp != 0) continue;
    if (md.heads % tp != 0) continue;
    for (int pp : space.pp) {
      if (pp > md.layers || chips % (static_cast<long long>(tp) * pp) != 0) continue;
      for (int cp : space.cp) {
        const long long rest = chips / (static_cast<long long>(tp) * pp);
        if (rest % cp != 0) continue;
        const long long dp = rest / cp;
        if (dp < 1 || dp > 1'000'000'000) continue;
        for (auto rc : space.recompute) {
          for (auto z : space.zero) {
            TrainScenario s = base;
            s.plan.tp = tp;
            s.plan.pp = pp;
            s.plan.cp = cp;
            s.plan.dp = static_cast<int>(dp);
            s.plan.recompute = rc;
            s.plan.zero = z;
            if (md.is_moe()) {
              // Experts spread over the data-parallel ranks, up to the expert count.
              int ep = 1;
              while (ep * 2 <= md.moe.num_experts && (dp * cp) % (ep * 2) == 0 &&
                     md.moe.num_experts % (ep * 2) == 0 && ep * 2 <= 64)
                ep *= 2;
              s.plan.ep = ep;
            }
            s.plan.vpp = 1;
            if (space.batch_tokens > 0) {
              const long long unit = dp * s.plan.micro_batch;
              const long long want = std::max(unit, space.batch_tokens / std::max<long long>(1, s.plan.seq_len));
              s.plan.global_batch = (want + unit - 1) / unit * unit;
            }
            if (s.plan.global_batch % (dp * s.plan.micro_batch) != 0) continue;
            TrainResult r = simulate_analytical(s);
            ++best.evaluated;
            if (!r.feasible || !r.fits) continue;
            if (!best.found || r.step_time < best.result.step_time) {
              best.found = true;
              best.best = s;
              best.result = r;
            }
          }
        }
      }
    }
  }
  return best;
}

}  // namespace xpusim::engine
