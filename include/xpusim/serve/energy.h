#pragma once
// Energy of a serving run, until the cost/ layer's activity-based model takes over:
// power per chip = TDP × (idle fraction + (1 − idle fraction) × busy fraction) + the system's
// overhead power per chip; energy = power × wall time × chips. Always marked estimated.

#include "xpusim/core/units.h"
#include "xpusim/hw/spec.h"

namespace xpusim::serve {

/// Fraction of TDP an accelerator draws when idle with a model loaded (estimated: H100/H200
/// idle ≈ 70-120 W of 700 W; Trainium similar).
inline constexpr double kIdlePowerFraction = 0.15;

struct EnergyEstimate {
  core::Joules energy;            ///< all chips, whole run
  core::Watts power_per_chip;     ///< mean, incl. the system overhead share
  bool estimated = true;
};

/// `busy_fraction` is the share of wall time the chips spent in engine steps (0..1).
EnergyEstimate serve_energy(const hw::SystemSpec& sys, long long chips, core::Seconds wall,
                            double busy_fraction);

/// Dollars for `chips` chips over `wall` at the catalog price per chip-hour.
core::Dollars serve_dollars(const hw::SystemSpec& sys, long long chips, core::Seconds wall);

}  // namespace xpusim::serve
