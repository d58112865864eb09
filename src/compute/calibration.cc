#include "xpusim/compute/calibration.h"

#include <algorithm>
#include <cmath>

namespace xpusim::compute {

std::string family_of(const hw::ChipSpec& chip) {
  if (chip.family == hw::ChipFamily::Trainium) return "trainium";
  // NVIDIA generations by architecture: Ampere (A100), Hopper (H100/H200/H800), Blackwell
  // (B200/GB200/B300/GB300). The catalog id starts with the part name.
  const std::string& id = chip.id;
  auto starts = [&](const char* p) { return id.rfind(p, 0) == 0; };
  if (starts("a100")) return "nvidia-ampere";
  if (starts("h100") || starts("h200") || starts("h800")) return "nvidia-hopper";
  return "nvidia-blackwell";
}

Calibration calibration_for(const hw::ChipSpec& chip) {
  Calibration c;
  c.family = family_of(chip);
  if (c.family == "nvidia-ampere") {
    c.gemm_efficiency = 0.67;
    c.low_precision_efficiency = 1.0;
    c.attention_efficiency = 0.55;
    c.hbm_efficiency = 0.85;
    c.kernel_overhead = core::microseconds(4.0);
  } else if (c.family == "nvidia-hopper") {
    c.gemm_efficiency = 0.75;
    c.low_precision_efficiency = 0.75;
    c.attention_efficiency = 0.65;
    c.hbm_efficiency = 0.85;
    c.kernel_overhead = core::microseconds(4.0);
  } else if (c.family == "nvidia-blackwell") {
    c.gemm_efficiency = 0.75;
    c.low_precision_efficiency = 0.80;
    c.fp4_efficiency = 0.60;
    c.attention_efficiency = 0.65;
    c.hbm_efficiency = 0.85;
    c.kernel_overhead = core::microseconds(4.0);
  } else {  // trainium
    c.gemm_efficiency = 0.42;
    c.low_precision_efficiency = 0.85;
    c.attention_efficiency = 0.45;
    c.hbm_efficiency = 0.80;
    c.kernel_overhead = core::microseconds(2.0);
  }
  // A power cap below the nominal TDP lowers sustained clocks. With 30% of TDP static and the
  // dynamic part scaling as f³ (voltage tracks frequency), f/f0 = ((cap − 0.3·TDP)/(0.7·TDP))^⅓.
  if (chip.power_cap && chip.power_cap->value < chip.tdp.value) {
    const double tdp = core::to_watts(chip.tdp.value);
    const double cap = core::to_watts(chip.power_cap->value);
    c.power_cap_factor = std::cbrt(std::max(0.05, (cap - 0.3 * tdp) / (0.7 * tdp)));
  }
  return c;
}

}  // namespace xpusim::compute
