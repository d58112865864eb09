#pragma once
// Error statistics of a quantised tensor against its fp32 original.

#include <cstdint>
#include <vector>

#include "xpusim/numerics/mx.h"

namespace xpusim::numerics {

/// Errors of `approx` against `ref` over the elements where `ref` is finite.
struct ErrorStats {
  int64_t elements = 0;         ///< finite reference elements compared
  double rmse = 0;              ///< sqrt(mean((ref - approx)^2))
  double snr_db = 0;            ///< 10 log10(sum ref^2 / sum err^2); +inf when exact, NaN when no element was compared
  double max_abs_error = 0;     ///< max |ref - approx|
  double max_rel_error = 0;     ///< max |ref - approx| / |ref| over ref != 0
};

ErrorStats error_stats(const float* ref, const float* approx, int64_t n);

/// Quantisation quality of one format on one tensor.
struct QuantStats {
  Format format = Format::Mxfp8E4m3;
  ErrorStats error;
  double saturated_fraction = 0;  ///< share of elements clamped: code at ±max_normal, |x| above it
  double flushed_fraction = 0;    ///< share of non-zero elements that became zero
  double bits_per_element = 0;    ///< element bits + scale bits per element
};

/// Quantises x (shape, options with options.format) and measures the result.
QuantStats quant_stats(const float* x, const std::vector<int64_t>& shape,
                       const QuantOptions& options);

}  // namespace xpusim::numerics
