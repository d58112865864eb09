#include "xpusim/serve/energy.h"

#include <algorithm>

namespace xpusim::serve {

EnergyEstimate serve_energy(const hw::SystemSpec& sys, long long chips, core::Seconds wall,
                            double busy_fraction) {
  EnergyEstimate e;
  const double u = std::clamp(busy_fraction, 0.0, 1.0);
  const core::Watts chip = sys.chip.tdp.value * (kIdlePowerFraction + (1.0 - kIdlePowerFraction) * u);
  e.power_per_chip = chip + sys.overhead_power_per_chip.value;
  e.energy = e.power_per_chip * wall * static_cast<double>(chips);
  e.estimated = true;
  return e;
}

core::Dollars serve_dollars(const hw::SystemSpec& sys, long long chips, core::Seconds wall) {
  return sys.price_per_chip_hour.value * wall * static_cast<double>(chips);
}

}  // namespace xpusim::serve
