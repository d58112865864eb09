#pragma once
// The global, documented efficiency parameters of the compute model, one set per hardware
// family (docs/calibration.md). They were fitted on ../shared/validation/public.csv only, by
// hand, family by family, never per row or per model; see docs/validation.md.

#include <string>

#include "xpusim/core/units.h"
#include "xpusim/hw/spec.h"

namespace xpusim::compute {

struct Calibration {
  std::string family;            ///< "nvidia-ampere", "nvidia-hopper", "nvidia-blackwell", "trainium"
  double gemm_efficiency = 0.8;  ///< achievable fraction of dense bf16/fp16 peak on large GEMMs
  double low_precision_efficiency = 0.8;  ///< extra factor for fp8/fp4/MX GEMMs (scaling, casts)
  double fp4_efficiency = 1.0;  ///< further factor for 4-bit formats (block-scale handling, Hadamard transforms)
  double attention_efficiency = 0.55;     ///< flash attention forward, fraction of bf16 peak
  double attention_bwd_ratio = 0.75;      ///< backward attention throughput ÷ forward (FlashAttention-2/3 papers)
  double hbm_efficiency = 0.85;  ///< achievable fraction of HBM peak bandwidth
  core::Seconds kernel_overhead; ///< per operator: launch, sync, instruction issue
  double power_cap_factor = 1.0; ///< sustained clock under a power cap (1 = none)
};

/// The family a chip belongs to, derived from its vendor and architecture.
std::string family_of(const hw::ChipSpec& chip);
/// The calibration of a chip's family.
Calibration calibration_for(const hw::ChipSpec& chip);

}  // namespace xpusim::compute
