#include "xpusim/compute/calibration.h"

#include <algorithm>
#include <cmath>

#include "xpusim/core/check.h"

namespace xpusim::compute {

std::string family_of(const hw::ChipSpec& chip) {
  if (chip.family == hw::ChipFamily::Trainium) return "trainium";
  return "nvidia-" + chip.architecture;  // nvidia-ampere, nvidia-hopper, nvidia-blackwell
}

namespace {

// One row per hardware family; values and how they were fitted: docs/calibration.md.
struct FamilyRow {
  const char* family;
  double gemm, low_precision, fp4, attention, hbm;
  double kernel_overhead_us;
};
constexpr FamilyRow kFamilies[] = {
    //  family              gemm  low-p  fp4   attn  hbm   overhead
    {"nvidia-ampere",       0.67, 1.00,  1.00, 0.55, 0.85, 4.0},
    {"nvidia-hopper",       0.75, 0.75,  1.00, 0.65, 0.85, 4.0},
    {"nvidia-blackwell",    0.75, 0.80,  0.60, 0.65, 0.85, 4.0},
    {"trainium",            0.42, 0.85,  1.00, 0.45, 0.80, 2.0},
};

}  // namespace

Calibration calibration_for(const hw::ChipSpec& chip) {
  Calibration c;
  c.family = family_of(chip);
  const FamilyRow* row = nullptr;
  for (const auto& r : kFamilies)
    if (c.family == r.family) row = &r;
  XS_CHECK(row != nullptr, "no calibration for the chip's family (the catalog validates architectures)");
  c.gemm_efficiency = row->gemm;
  c.low_precision_efficiency = row->low_precision;
  c.fp4_efficiency = row->fp4;
  c.attention_efficiency = row->attention;
  c.hbm_efficiency = row->hbm;
  c.kernel_overhead = core::microseconds(row->kernel_overhead_us);
  // A power cap below the nominal TDP lowers sustained clocks. With the idle share of TDP static
  // and the dynamic part scaling as f³ (voltage tracks frequency),
  // f/f0 = ((cap − idle·TDP)/((1 − idle)·TDP))^⅓.
  if (chip.power_cap && chip.power_cap->value < chip.tdp.value) {
    const double tdp = core::to_watts(chip.tdp.value);
    const double cap = core::to_watts(chip.power_cap->value);
    const double idle = hw::kIdlePowerFraction;
    c.power_cap_factor = std::cbrt(std::max(0.05, (cap - idle * tdp) / ((1.0 - idle) * tdp)));
  }
  return c;
}

}  // namespace xpusim::compute
