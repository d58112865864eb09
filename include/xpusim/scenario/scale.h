#pragma once
// Training at scale on top of one simulated step (docs/scale.md): failures, checkpoints and
// goodput (engine/goodput.h) with the user's storage tier and spares, the site's power with its
// PUE, a seeded Monte Carlo of the whole run, and the efficiency curve over chip counts
// (`train --scaling FROM..TO`) with the largest useful chip count.

#include <string>
#include <vector>

#include "xpusim/scenario/train_inputs.h"

namespace xpusim::scenario {

/// --checkpoint-tier, --spares, --checkpoint-interval, --runs, --seed, --pue, --scaling: each
/// bad value is a diagnostic naming its flag.
void check_scale_inputs(const TrainInputs& in, core::Diagnostics& d);

/// Fills run.goodput, the time to train with failures, the Monte Carlo and the site power of a
/// simulated step (run.built and run.result set).
void add_scale_results(TrainRun& run, const TrainInputs& in, const calib::Params& params);

struct ScalingRange {
  long long from = 0, to = 0;
};
/// "FROM..TO" with 1 ≤ FROM < TO (InputError naming --scaling).
ScalingRange parse_scaling(const std::string& text);

/// Chip counts from FROM to TO, roughly doubling: below the scale-up domain FROM, 2·FROM, …;
/// from there whole domains (UltraServers, racks); the last is the most whole domains within TO.
std::vector<long long> scaling_counts(const ScalingRange& r, const hw::SystemSpec& sys);

/// The largest count at which one more doubling still adds at least half again as much
/// throughput (a step from c to c' must multiply it by 1.5^log2(c'/c)); the first count when no
/// step does. `flattened` is false when the last step still did (the answer may lie beyond TO).
long long largest_useful_count(const std::vector<long long>& chips, const std::vector<double>& throughput,
                               bool& flattened);

struct ScalingPoint {
  long long chips = 0;
  bool found = false;   ///< some plan of the search fits
  std::string note;     ///< why not
  TrainRun run;
  double gain = 0;      ///< effective throughput over the previous point's (0 for the first)
};

struct ScalingCurve {
  std::string system, model;
  std::vector<ScalingPoint> points;
  long long largest_useful_chips = 0;  ///< 0 when no count of the range fits
  bool flattened = false;
  bool any_found() const {
    for (const auto& p : points)
      if (p.found) return true;
    return false;
  }
};

/// The user's inputs at `chips` for one point of the curve or one count of the solver: the
/// analytical executor unless one is given, no Monte Carlo (points compare closed forms), no
/// --scaling, --deadline or --budget.
TrainInputs inputs_at_count(const TrainInputs& in, long long chips);

/// One plan search per count (the analytical executor unless --executor is given) at the fixed
/// global batch (--global-batch, else the critical-batch rule), with goodput.
ScalingCurve run_scaling(const TrainInputs& in, const hw::Catalog& cat, const std::string& models_dir,
                         const calib::Params& params);

}  // namespace xpusim::scenario
