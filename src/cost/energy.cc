// Energy per action estimated from TDP:
// - idle power: kIdlePowerFraction (20%) of TDP;
// - dynamic: the remaining 80% of TDP is drawn when math runs at the bf16 peak with HBM at 30%
//   of its peak: 60% of TDP for math, 20% for HBM at that rate. Lower-precision FLOPs cost the
//   same energy per FLOP-slot, so energy per FLOP scales with bf16_peak / dtype_peak.
// - links: 5 pJ/bit scale-up (NVLink-class SerDes), 15 pJ/bit scale-out (NIC + optics + switch).
// All of these are estimates, marked so in reports.

#include "xpusim/cost/energy.h"

#include <algorithm>

namespace xpusim::cost {

EnergyTable energy_table(const hw::SystemSpec& sys) {
  const auto& chip = sys.chip;
  EnergyTable t;
  // A power cap below the nominal TDP bounds the draw.
  const core::Watts tdp = chip.power_cap ? core::min(chip.tdp.value, chip.power_cap->value) : chip.tdp.value;
  t.static_power = tdp * kIdlePowerFraction;
  const core::FlopRate bf16 = chip.supports(core::Dtype::Bf16) ? chip.peak_for(core::Dtype::Bf16)
                                                               : core::flops_per_second(1e15);
  t.per_flop_bf16 = (tdp * 0.60) / bf16;
  t.per_hbm_byte = (tdp * 0.20) / (chip.hbm_bandwidth.value * 0.30);
  t.per_scale_up_byte = core::JoulesPerByte::from_base(5e-12 * 8);
  t.per_scale_out_byte = core::JoulesPerByte::from_base(15e-12 * 8);
  t.overhead_power = sys.overhead_power_per_chip.value;
  t.estimated = true;
  return t;
}

EnergyCost energy_cost(const hw::SystemSpec& sys, const Activity& a, core::Seconds duration) {
  const EnergyTable t = energy_table(sys);
  const auto& chip = sys.chip;
  core::Joules dyn;
  for (const auto& [d, f] : a.flops) {
    double scale = 1.0;
    if (chip.supports(d) && chip.supports(core::Dtype::Bf16))
      scale = chip.peak_for(core::Dtype::Bf16) / chip.peak_for(d);
    dyn += t.per_flop_bf16 * f * scale;
  }
  dyn += t.per_hbm_byte * a.hbm_bytes + t.per_scale_up_byte * a.scale_up_bytes +
         t.per_scale_out_byte * a.scale_out_bytes;
  // A chip cannot draw more than its TDP on average.
  const core::Watts limit = chip.power_cap ? core::min(chip.tdp.value, chip.power_cap->value) : chip.tdp.value;
  const core::Joules cap = limit * duration;
  EnergyCost e;
  e.chip_energy = core::min(cap, t.static_power * duration + dyn);
  e.total_energy = e.chip_energy + t.overhead_power * duration;
  e.average_power = e.total_energy / duration;
  e.dollars = sys.price_per_chip_hour.value * duration;
  e.price_estimated = sys.price_per_chip_hour.confidence != hw::Confidence::Published;
  return e;
}

EnergyCost busy_energy_cost(const hw::SystemSpec& sys, core::Seconds duration, double busy_fraction) {
  const auto& chip = sys.chip;
  const core::Watts limit = chip.power_cap ? core::min(chip.tdp.value, chip.power_cap->value) : chip.tdp.value;
  const double u = std::clamp(busy_fraction, 0.0, 1.0);
  EnergyCost e;
  e.chip_energy = limit * (kIdlePowerFraction + (1.0 - kIdlePowerFraction) * u) * duration;
  e.total_energy = e.chip_energy + sys.overhead_power_per_chip.value * duration;
  e.average_power = e.total_energy / duration;
  e.dollars = sys.price_per_chip_hour.value * duration;
  e.price_estimated = sys.price_per_chip_hour.confidence != hw::Confidence::Published;
  return e;
}

}  // namespace xpusim::cost
