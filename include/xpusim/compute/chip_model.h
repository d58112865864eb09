#pragma once
// Time of one operator on one chip: a roofline (math at an achievable fraction of the dtype's
// peak vs bytes at an achievable fraction of HBM peak) plus what a roofline misses — tile
// quantisation on 128×128 systolic arrays (Trainium TensorE), wave quantisation over GPU SMs,
// per-kernel / per-instruction overheads — with a few global parameters per hardware family
// (compute/calibration.h).

#include <string>
#include <vector>

#include "xpusim/compute/calibration.h"
#include "xpusim/core/dtype.h"
#include "xpusim/core/units.h"
#include "xpusim/hw/spec.h"
#include "xpusim/workload/ops.h"

namespace xpusim::compute {

/// Backward: input and weight gradients, or the input gradient alone for a frozen weight's GEMM
/// (workload::Op::frozen: dX = dY·Wᵀ, no dW).
enum class Pass { Forward, Backward };

struct OpTime {
  core::Seconds time;
  core::Flops flops;       ///< FLOPs executed
  core::Bytes hbm_bytes;   ///< bytes moved to/from HBM
  bool compute_bound = true;
  bool psum_bound = false;  ///< Trainium: the PSUM read-out, not the array or HBM, set the time
  core::Dtype dtype = core::Dtype::Bf16;  ///< math dtype actually used
};

/// Dtypes an op may run in on a given chip.
struct Precision {
  core::Dtype gemm = core::Dtype::Bf16;     ///< linear layers
  core::Dtype weights = core::Dtype::Bf16;  ///< weight storage (bytes read)
  core::Dtype activations = core::Dtype::Bf16;
  core::Dtype kv = core::Dtype::Bf16;       ///< KV cache storage
};

/// The dtype a chip runs a GEMM requested in `d` in: `d` itself when the chip has a peak for
/// it, else the nearest it has (e.g. nvfp4 → mxfp4 → fp8 → bf16). Used when the user allowed a
/// fallback (`--allow-fallback`) and for internal ops with no dtype of their own.
core::Dtype executed_dtype(const hw::ChipSpec& chip, core::Dtype d);

/// The precisions the chip has a peak for, by name (what an error about a missing one lists).
std::vector<std::string> precision_names(const hw::ChipSpec& chip);

class ChipModel {
 public:
  ChipModel(const hw::ChipSpec& chip, Calibration cal);

  /// Time of `op` in the given pass. Attention runs in bf16 (flash attention); GEMMs in the
  /// fastest dtype the chip supports that is not more precise than requested... see best_dtype.
  OpTime time(const workload::Op& op, const Precision& p, Pass pass) const;

  /// The dtype a request for `d` actually runs in: `d` when the chip supports it, else the
  /// nearest slower format (nvfp4→mxfp4→fp8→bf16; mxfp8→fp8→bf16; int8→fp8→bf16; tf32→fp32).
  core::Dtype best_dtype(core::Dtype d) const;
  /// Achievable math rate for large GEMMs in dtype `d` (after best_dtype).
  core::FlopRate achievable_flops(core::Dtype d) const;
  core::ByteRate achievable_hbm() const;
  /// Streaming `bytes` through HBM (weights of a memory-bound decode, optimizer updates).
  core::Seconds memory_time(core::Bytes bytes) const;
  /// Trainium: the time VectorE and ScalarE of every NeuronCore take to read `elements` fp32
  /// accumulators out of PSUM (each output element of a matmul once, after its K accumulation);
  /// zero on GPUs or when the catalog gives no fp32 lane counts.
  core::Seconds psum_readout_time(double elements) const;
  const hw::ChipSpec& chip() const { return chip_; }
  const Calibration& calibration() const { return cal_; }

 private:
  double gemm_utilisation(const workload::Op& op, core::Dtype d) const;
  double attention_utilisation(const workload::Op& op, core::FlopRate rate) const;
  /// One op kind's time, forward or backward (`bwd`; a frozen GEMM's dgrad is `dgrad_only`).
  OpTime gemm_time(const workload::Op& op, const Precision& p, bool bwd, bool dgrad_only) const;
  OpTime attention_time(const workload::Op& op, const Precision& p, bool bwd) const;
  OpTime elementwise_time(const workload::Op& op, const Precision& p, bool bwd) const;
  /// A recurrent layer's scan (workload::OpKind::Scan), forward or backward.
  OpTime scan_time(const workload::Op& op, bool bwd, double act_b) const;
  const hw::ChipSpec& chip_;
  Calibration cal_;
};

}  // namespace xpusim::compute
