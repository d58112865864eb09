#include "xpusim/numerics/element.h"

#include <cmath>
#include <limits>

#include "kernels.h"
#include "xpusim/core/check.h"

namespace xpusim::numerics {

const ElementInfo& element_info(ElementType t) {
  static const ElementInfo kInfo[] = {
      {"fp8_e4m3", 8, 4, 3, 7, 8, -6, 448.0, 0x7E, false, true},
      {"fp8_e5m2", 8, 5, 2, 15, 15, -14, 57344.0, 0x7B, true, true},
      {"fp6_e3m2", 6, 3, 2, 3, 4, -2, 28.0, 0x1F, false, false},
      {"fp6_e2m3", 6, 2, 3, 1, 2, 0, 7.5, 0x1F, false, false},
      {"fp4_e2m1", 4, 2, 1, 1, 2, 0, 6.0, 0x7, false, false},
      {"int8", 8, 0, 6, 0, 0, 0, 127.0 / 64.0, 0x7F, false, false},
  };
  return kInfo[static_cast<int>(t)];
}

float decode_element(ElementType t, uint8_t code) {
  const ElementInfo& in = element_info(t);
  const uint32_t c = code & ((1u << in.bits) - 1u);
  if (t == ElementType::Int8) return static_cast<float>(static_cast<int8_t>(c)) / 64.0f;
  const bool neg = (c >> (in.bits - 1)) & 1u;
  const uint32_t mag = c & ((1u << (in.bits - 1)) - 1u);
  const uint32_t ef = mag >> in.mbits;
  const uint32_t mf = mag & ((1u << in.mbits) - 1u);
  const uint32_t emask = (1u << in.ebits) - 1u;
  float v;
  if (t == ElementType::Fp8E4m3 && ef == emask && mf == (1u << in.mbits) - 1u) {
    v = std::numeric_limits<float>::quiet_NaN();
  } else if (t == ElementType::Fp8E5m2 && ef == emask) {
    v = mf == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  } else if (ef == 0) {
    v = std::ldexp(static_cast<float>(mf), 1 - in.bias - in.mbits);
  } else {
    v = std::ldexp(static_cast<float>(mf + (1u << in.mbits)),
                   static_cast<int>(ef) - in.bias - in.mbits);
  }
  return neg ? -v : v;
}

namespace {

template <ElementType T>
uint8_t encode_r(float x, int s, Rounding r) {
  switch (r) {
    case Rounding::Even: return detail::encode_scaled<T, Rounding::Even>(x, s);
    case Rounding::Nearest: return detail::encode_scaled<T, Rounding::Nearest>(x, s);
    case Rounding::Floor: return detail::encode_scaled<T, Rounding::Floor>(x, s);
  }
  return 0;
}

}  // namespace

uint8_t encode_element_scaled(ElementType t, float x, int s, Rounding rounding) {
  XS_CHECK(s >= -127 && s <= 127, "scale exponent out of range");
  const ElementInfo& in = element_info(t);
  if (!std::isfinite(x)) {
    if (in.has_nan && std::isnan(x)) return 0x7F;
    if (in.has_inf) return std::signbit(x) ? 0xFC : 0x7C;
    if (in.has_nan) return 0x7F;
    const uint8_t mx = in.max_code;
    if (!std::signbit(x)) return mx;
    return t == ElementType::Int8 ? static_cast<uint8_t>(256 - mx)
                                  : static_cast<uint8_t>(mx | (1u << (in.bits - 1)));
  }
  switch (t) {
    case ElementType::Fp8E4m3: return encode_r<ElementType::Fp8E4m3>(x, s, rounding);
    case ElementType::Fp8E5m2: return encode_r<ElementType::Fp8E5m2>(x, s, rounding);
    case ElementType::Fp6E3m2: return encode_r<ElementType::Fp6E3m2>(x, s, rounding);
    case ElementType::Fp6E2m3: return encode_r<ElementType::Fp6E2m3>(x, s, rounding);
    case ElementType::Fp4E2m1: return encode_r<ElementType::Fp4E2m1>(x, s, rounding);
    case ElementType::Int8: return encode_r<ElementType::Int8>(x, s, rounding);
  }
  return 0;
}

uint8_t encode_element(ElementType t, float q, Rounding rounding) {
  return encode_element_scaled(t, q, 0, rounding);
}

std::string rounding_name(Rounding r) {
  switch (r) {
    case Rounding::Even: return "even";
    case Rounding::Nearest: return "nearest";
    case Rounding::Floor: return "floor";
  }
  return "?";
}

}  // namespace xpusim::numerics
