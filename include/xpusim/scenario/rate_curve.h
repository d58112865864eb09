#pragma once
// Throughput and latency against the offered request rate, for `serve --html` (docs/html.md):
// the same resolved scenario (plan, framework, lengths, seed) simulated under Poisson arrivals at
// a few rates around the requested one. Kept cheap: five rates, at most 200 requests each.

#include <vector>

#include "xpusim/serve/scenario.h"

namespace xpusim::scenario {

struct RatePoint {
  double offered_rate_per_s = 0;
  double requests_per_s = 0;        ///< achieved (serve::SimResult::requests_per_s)
  double output_tokens_per_s = 0;
  double ttft_p90_ms = 0, tpot_p90_ms = 0;
};

struct RateCurve {
  double base_rate_per_s = 0;  ///< the requested Poisson rate, else the run's achieved requests/s
  bool base_is_requested = false;
  long long requests = 0;      ///< requests simulated per rate
  std::vector<RatePoint> points;  ///< by offered rate
};

/// Rates of 0.25, 0.5, 1, 1.5 and 2 × the base rate; requests min(the run's, 200). A run that
/// completes nothing (or no longer fits) is left out.
RateCurve rate_curve(const serve::ServeReport& rep, const serve::ServeEnv& env);

}  // namespace xpusim::scenario
