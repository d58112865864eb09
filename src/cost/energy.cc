// Energy per action estimated from TDP with the assumed shares of data/calibration/cost.yaml:
// - idle power: idle_power_fraction of TDP;
// - dynamic: math at the bf16 peak draws math_share_of_tdp of TDP and HBM at hbm_load_at_tdp of
//   its peak draws hbm_share_of_tdp. Lower-precision FLOPs cost the same energy per FLOP-slot,
//   so energy per FLOP scales with bf16_peak / dtype_peak.
// - links: an energy per bit per link class (scale-up SerDes, scale-out NIC + optics + switch).
// All of these are estimates, marked so in reports (docs/energy.md).

#include "xpusim/cost/energy.h"

#include <algorithm>

namespace xpusim::cost {

namespace {

/// The most a chip draws on average: its TDP, or a lower power cap.
core::Watts power_limit(const hw::ChipSpec& chip) {
  return chip.power_cap ? core::min(chip.tdp.value, chip.power_cap->value) : chip.tdp.value;
}

}  // namespace

EnergyParams energy_params(const calib::Params& params) {
  EnergyParams p;
  p.idle_power_fraction = params.number("cost.idle_power_fraction");
  p.math_share_of_tdp = params.number("cost.math_share_of_tdp");
  p.hbm_share_of_tdp = params.number("cost.hbm_share_of_tdp");
  p.hbm_load_at_tdp = params.number("cost.hbm_load_at_tdp");
  p.scale_up_link_energy = params.joules_per_byte("cost.scale_up_link_energy");
  p.scale_out_link_energy = params.joules_per_byte("cost.scale_out_link_energy");
  return p;
}

EnergyTable energy_table(const hw::SystemSpec& sys, const calib::Params& params) {
  const EnergyParams p = energy_params(params);
  const auto& chip = sys.chip;
  EnergyTable t;
  const core::Watts tdp = power_limit(chip);
  t.static_power = tdp * p.idle_power_fraction;
  const core::FlopRate bf16 = chip.supports(core::Dtype::Bf16) ? chip.peak_for(core::Dtype::Bf16)
                                                               : core::flops_per_second(1e15);
  t.per_flop_bf16 = (tdp * p.math_share_of_tdp) / bf16;
  t.per_hbm_byte = (tdp * p.hbm_share_of_tdp) / (chip.hbm_bandwidth.value * p.hbm_load_at_tdp);
  t.per_scale_up_byte = p.scale_up_link_energy;
  t.per_scale_out_byte = p.scale_out_link_energy;
  t.overhead_power = sys.overhead_power_per_chip.value;
  t.estimated = true;
  return t;
}

EnergyCost energy_cost(const hw::SystemSpec& sys, const calib::Params& params, const Activity& a,
                       core::Seconds duration) {
  const EnergyTable t = energy_table(sys, params);
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
  const core::Joules cap = power_limit(chip) * duration;
  EnergyCost e;
  e.chip_energy = core::min(cap, t.static_power * duration + dyn);
  e.total_energy = e.chip_energy + t.overhead_power * duration;
  e.average_power = e.total_energy / duration;
  e.dollars = sys.price_per_chip_hour.value * duration;
  e.price_estimated = sys.price_per_chip_hour.confidence != hw::Confidence::Published;
  return e;
}

}  // namespace xpusim::cost
