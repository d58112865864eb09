#pragma once
// The efficiency parameters of the compute model, one set per hardware family, as the compute
// model reads them. The values live in data/calibration/compute.yaml (meaning, basis, kind:
// docs/calibration.md) and are filled in by calibration_for() from a calib::Params.

#include <string>
#include <vector>

#include "xpusim/calib/params.h"

#include "xpusim/core/units.h"
#include "xpusim/hw/spec.h"

namespace xpusim::compute {

struct Calibration {
  std::string family;            ///< "nvidia-ampere", "nvidia-hopper", "nvidia-blackwell", "trainium"
  double gemm_efficiency = 0;  ///< achievable fraction of dense bf16/fp16 peak on large GEMMs
  double low_precision_efficiency = 0;  ///< extra factor for fp8/fp4/MX GEMMs (scaling, casts)
  double fp4_efficiency = 0;  ///< further factor for 4-bit formats (block-scale handling, Hadamard transforms)
  double attention_efficiency = 0;     ///< flash attention forward, fraction of bf16 peak
  double attention_bwd_ratio = 0;      ///< backward attention throughput ÷ forward (FlashAttention-2/3 papers)
  double hbm_efficiency = 0;  ///< achievable fraction of HBM peak bandwidth
  core::Seconds kernel_overhead; ///< per operator: launch, sync, instruction issue
  double gpu_tile_prologue_k = 0; ///< K-loop equivalent of a GPU tile's prologue/epilogue
  double reference_gemm_k = 0;    ///< K at which gemm_efficiency is defined
  double attention_prologue_keys = 0;   ///< flash-attention prologue per call, in keys, at the rate below
  core::FlopRate attention_prologue_rate;  ///< forward rate of the kernel that k0 was measured on
  double attention_prologue_sms = 0;    ///< SMs of the GPU it was measured on
  double reference_attention_keys = 0;  ///< keys per query at which attention_efficiency is defined
  double power_cap_factor = 0; ///< sustained clock under a power cap (1 = none)
};

/// The family a chip belongs to, derived from its vendor and architecture.
std::string family_of(const hw::ChipSpec& chip);
/// The hardware families with a section in compute.yaml.
std::vector<std::string> calibrated_families(const calib::Params& params);
/// The calibration of a chip's family from `params` (compute.<family>.*); InputError naming the
/// Reads the kernel efficiencies every calibration section has (gemm, low-precision, fp4,
/// attention, HBM, per-kernel overhead) from the keys `<prefix><name>` into `c`: the training
/// section compute.<family>. and the serving section serving.kernels.<family>. share them.
void read_kernel_efficiencies(const calib::Params& params, const std::string& prefix, Calibration& c);

/// family when compute.yaml has no section for it.
Calibration calibration_for(const hw::ChipSpec& chip, const calib::Params& params);

}  // namespace xpusim::compute
