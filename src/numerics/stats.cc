#include "xpusim/numerics/stats.h"

#include <cmath>
#include <limits>

namespace xpusim::numerics {

ErrorStats error_stats(const float* ref, const float* approx, int64_t n) {
  ErrorStats s;
  double se = 0, sx = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = ref[i];
    if (!std::isfinite(x)) continue;
    const double e = std::fabs(x - static_cast<double>(approx[i]));
    ++s.elements;
    se += e * e;
    sx += x * x;
    if (!(e <= s.max_abs_error)) s.max_abs_error = e;  // NaN propagates
    if (x != 0) {
      const double r = e / std::fabs(x);
      if (!(r <= s.max_rel_error)) s.max_rel_error = r;
    }
  }
  s.rmse = s.elements ? std::sqrt(se / static_cast<double>(s.elements)) : 0.0;
  // No finite reference element: nothing was compared, which is not an exact result.
  if (s.elements == 0) s.snr_db = std::numeric_limits<double>::quiet_NaN();
  else s.snr_db = se == 0 ? std::numeric_limits<double>::infinity() : 10.0 * std::log10(sx / se);
  return s;
}

QuantStats quant_stats(const float* x, const std::vector<int64_t>& shape,
                       const QuantOptions& options) {
  QuantStats st;
  st.format = options.format;
  const QuantizedTensor q = quantize(x, shape, options);
  const std::vector<float> y = dequantize(q);
  const int64_t n = static_cast<int64_t>(y.size());
  st.error = error_stats(x, y.data(), n);
  const ElementInfo& ei = element_info(format_info(options.format).element);
  const uint8_t sign_bit = static_cast<uint8_t>(1u << (ei.bits - 1));
  int64_t sat = 0, flushed = 0, finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) continue;
    ++finite;
    const uint8_t c = q.codes[i];
    const bool at_max = ei.has_nan || ei.has_inf || ei.ebits > 0
                            ? (c & static_cast<uint8_t>(~sign_bit)) == ei.max_code
                            : (c == 0x7F || c == 0x81);
    if (at_max && std::fabs(x[i]) > std::fabs(y[i])) ++sat;
    if (x[i] != 0 && y[i] == 0) ++flushed;
  }
  st.saturated_fraction = finite ? static_cast<double>(sat) / static_cast<double>(finite) : 0.0;
  st.flushed_fraction = finite ? static_cast<double>(flushed) / static_cast<double>(finite) : 0.0;
  st.bits_per_element = bits_per_element(options.format, n);
  return st;
}

}  // namespace xpusim::numerics
