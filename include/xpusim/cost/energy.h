#pragma once
// Energy and cost from activity counts, for training and serving alike:
// energy = Σ actions × energy per action + idle power × time, capped at TDP × time, plus the
// system's overhead power per chip (host, NICs, switches, cooling). Dollars are chip-hours ×
// the catalog price. The per-action energies come from the chip's TDP and the assumed shares
// of data/calibration/cost.yaml (docs/energy.md); all are estimates, marked so in reports.

#include <string>

#include "xpusim/calib/params.h"
#include "xpusim/cost/activity.h"
#include "xpusim/hw/spec.h"

namespace xpusim::cost {

/// The assumed shares and link energies of data/calibration/cost.yaml.
struct EnergyParams {
  double idle_power_fraction = 0;  ///< static power / TDP
  double math_share_of_tdp = 0;    ///< math at the bf16 peak / TDP
  double hbm_share_of_tdp = 0;     ///< HBM at the reference load / TDP
  double hbm_load_at_tdp = 0;      ///< the reference load: fraction of the HBM peak
  core::JoulesPerByte scale_up_link_energy;
  core::JoulesPerByte scale_out_link_energy;
};

/// Reads the cost.* parameters of a calibration.
EnergyParams energy_params(const calib::Params& params);

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
EnergyTable energy_table(const hw::SystemSpec& sys, const calib::Params& params);

struct EnergyCost {
  core::Joules chip_energy;   ///< per chip
  core::Joules total_energy;  ///< per chip incl. overhead power
  core::Watts average_power;  ///< per chip incl. overhead
  core::Dollars dollars;      ///< per chip for the duration
  bool price_estimated = true;
};

/// Energy and cost of `activity` (per chip) over `duration` on one chip of `sys`.
EnergyCost energy_cost(const hw::SystemSpec& sys, const calib::Params& params, const Activity& activity,
                       core::Seconds duration);

}  // namespace xpusim::cost
