#pragma once
// Energy and cost. Two models over the same power split (all estimates, see energy.cc):
// - from activity counts (training): energy = Σ actions × energy per action + idle power × time;
// - from busy time (serving): power = TDP × (idle + (1 − idle) × busy fraction).
// Both add the system's overhead power per chip (host, NICs, switches, cooling). Dollars are
// chip-hours × the catalog price.

#include <string>

#include "xpusim/cost/activity.h"
#include "xpusim/hw/spec.h"

namespace xpusim::cost {

using hw::kIdlePowerFraction;

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

/// Energy and cost per chip of a run of `duration` in which the chips were busy `busy_fraction`
/// of the time (0..1), when only busy time is known (serving).
EnergyCost busy_energy_cost(const hw::SystemSpec& sys, core::Seconds duration, double busy_fraction);

}  // namespace xpusim::cost
