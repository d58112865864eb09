#include "xpusim/compute/calibration.h"

#include <algorithm>
#include <cmath>

#include "xpusim/core/suggest.h"

namespace xpusim::compute {

std::string family_of(const hw::ChipSpec& chip) {
  if (chip.family == hw::ChipFamily::Trainium) return "trainium";
  return "nvidia-" + chip.architecture;  // nvidia-ampere, nvidia-hopper, nvidia-blackwell
}

std::vector<std::string> calibrated_families(const calib::Params& params) { return params.sections("compute"); }

namespace {

/// Sustained clock under a power cap below the nominal TDP. With the idle share of TDP static
/// and the dynamic part scaling as f³ (voltage tracks frequency),
/// f/f0 = ((cap − idle·TDP)/((1 − idle)·TDP))^⅓.
double power_cap_factor(const hw::ChipSpec& chip, const calib::Params& params) {
  if (!chip.power_cap || !(chip.power_cap->value < chip.tdp.value)) return 1.0;
  const double tdp = core::to_watts(chip.tdp.value);
  const double cap = core::to_watts(chip.power_cap->value);
  const double idle = params.number("cost.idle_power_fraction");
  const double floor = params.number("compute.power_cap.min_dynamic_share");
  return std::cbrt(std::max(floor, (cap - idle * tdp) / ((1.0 - idle) * tdp)));
}

}  // namespace

void read_kernel_efficiencies(const calib::Params& params, const std::string& prefix, Calibration& c) {
  c.gemm_efficiency = params.number(prefix + "gemm_efficiency");
  c.low_precision_efficiency = params.number(prefix + "low_precision_efficiency");
  c.fp4_efficiency = params.number(prefix + "fp4_efficiency");
  c.attention_efficiency = params.number(prefix + "attention_efficiency");
  c.hbm_efficiency = params.number(prefix + "hbm_efficiency");
  c.kernel_overhead = params.seconds(prefix + "kernel_overhead");
}

Calibration calibration_for(const hw::ChipSpec& chip, const calib::Params& params) {
  Calibration c;
  c.family = family_of(chip);
  const auto families = calibrated_families(params);
  if (std::find(families.begin(), families.end(), c.family) == families.end()) {
    core::fail("compute." + c.family, "no calibration for the chip's hardware family", c.family,
               "a section of data/calibration/compute.yaml: " + core::join(families));
  }
  const std::string key = "compute." + c.family + ".";
  read_kernel_efficiencies(params, key, c);
  c.attention_bwd_ratio = params.number(key + "attention_bwd_ratio");
  c.gpu_tile_prologue_k = params.number("compute.gpu_tiles.prologue_k");
  c.reference_gemm_k = params.number("compute.gpu_tiles.reference_gemm_k");
  c.attention_prologue_keys = params.number("compute.gpu_tiles.attention_prologue_keys");
  c.attention_prologue_rate = params.flop_rate("compute.gpu_tiles.attention_prologue_rate");
  c.attention_prologue_sms = params.number("compute.gpu_tiles.attention_prologue_sms");
  c.reference_attention_keys = params.number("compute.gpu_tiles.reference_attention_keys");
  c.power_cap_factor = power_cap_factor(chip, params);
  return c;
}

}  // namespace xpusim::compute
