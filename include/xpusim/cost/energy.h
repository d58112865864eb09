#pragma once
// Energy and cost from activity counts: energy = Σ actions × energy per action + static power
// × time; dollars = chip-hours × price. Per-action energies are estimated from the chip's TDP
// (docs/energy.md): at full math rate the chip draws its TDP.

#include <string>

#include "xpusim/cost/activity.h"
#include "xpusim/hw/spec.h"

namespace xpusim::cost {

struct EnergyTable {
  core::Watts static_power;          ///< idle/leakage share of TDP per chip
  core::JoulesPerFlop per_flop_bf16; ///< dynamic energy per bf16 FLOP (lower formats scale)
  core::JoulesPerByte per_hbm_byte;
  core::JoulesPerByte per_scale_up_byte;
  core::JoulesPerByte per_scale_out_byte;
  core::Watts overhead_power;        ///< host, NICs, switches, cooling share per chip
  bool estimated = true;
};

/// The table for a system's chips (from TDP; see docs/energy.md for the split).
EnergyTable energy_table(const hw::SystemSpec& sys);

struct EnergyCost {
  core::Joules chip_energy;   ///< per chip
  core::Joules total_energy;  ///< per chip incl. overhead power
  core::Watts average_power;  ///< per chip incl. overhead
  core::Dollars dollars;      ///< per chip for the duration
  bool price_estimated = true;
};

/// Energy and cost of `activity` over `duration` on one chip of `sys`.
EnergyCost energy_cost(const hw::SystemSpec& sys, const Activity& activity, core::Seconds duration);

}  // namespace xpusim::cost
