#include "xpusim/scenario/rate_curve.h"

#include <algorithm>

namespace xpusim::scenario {

namespace {

constexpr double kRateFactors[] = {0.25, 0.5, 1.0, 1.5, 2.0};
constexpr long long kMaxRequests = 200;

}  // namespace

RateCurve rate_curve(const serve::ServeReport& rep, const serve::ServeEnv& env) {
  RateCurve c;
  const serve::LoadSpec& load = rep.scenario.load;
  c.base_is_requested = load.arrival == serve::ArrivalKind::Poisson;
  c.base_rate_per_s = c.base_is_requested ? load.rate_per_s : rep.sim.requests_per_s;
  c.requests = std::min(load.requests, kMaxRequests);
  if (!(c.base_rate_per_s > 0)) return c;
  for (double f : kRateFactors) {
    serve::ServeScenario sc = rep.scenario;
    sc.trace = false;
    sc.load.arrival = serve::ArrivalKind::Poisson;
    sc.load.rate_per_s = c.base_rate_per_s * f;
    sc.load.requests = c.requests;
    sc.load.trace = serve::RequestTrace{};
    const auto r = serve::run_scenario(sc, env);
    if (!r || r->sim.requests == 0) continue;
    c.points.push_back({sc.load.rate_per_s, r->sim.requests_per_s, r->sim.output_tokens_per_s,
                        r->sim.ttft_ms.p90, r->sim.tpot_ms.p90});
  }
  return c;
}

}  // namespace xpusim::scenario
