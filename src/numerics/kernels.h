#pragma once
// Hot, exact per-element kernels shared by element.cc and mx.cc (private to the layer).
// All arithmetic is on the fp32 bit pattern: exponents come from the exponent field (fp32
// subnormals are normalised with a leading-zero count), rounding is an integer shift.

#include <bit>
#include <cstdint>
#include <cstring>

#include "xpusim/numerics/element.h"

namespace xpusim::numerics::detail {

struct Traits {
  int ebits, mbits, bias, emin, emax;
  uint32_t max_mag;  // magnitude code of max normal
  bool is_int;
};

constexpr Traits traits(ElementType t) {
  switch (t) {
    case ElementType::Fp8E4m3: return {4, 3, 7, -6, 8, 0x7E, false};
    case ElementType::Fp8E5m2: return {5, 2, 15, -14, 15, 0x7B, false};
    case ElementType::Fp6E3m2: return {3, 2, 3, -2, 4, 0x1F, false};
    case ElementType::Fp6E2m3: return {2, 3, 1, 0, 2, 0x1F, false};
    case ElementType::Fp4E2m1: return {2, 1, 1, 0, 2, 0x7, false};
    case ElementType::Int8: return {0, 6, 0, 0, 0, 127, true};
  }
  return {0, 0, 0, 0, 0, 0, false};
}

inline uint32_t f2u(float f) { return std::bit_cast<uint32_t>(f); }
inline float u2f(uint32_t u) { return std::bit_cast<float>(u); }

/// round(m / 2^sh) for 1 <= sh <= 31 and m < 2^31 (no overflow: m + 2^(sh-1) < 2^32).
template <Rounding R>
inline uint32_t round_shift(uint32_t m, int sh) {
  if constexpr (R == Rounding::Floor) {
    return m >> sh;
  } else if constexpr (R == Rounding::Nearest) {
    return (m + (1u << (sh - 1))) >> sh;
  } else {
    return (m + (1u << (sh - 1)) - 1u + ((m >> sh) & 1u)) >> sh;
  }
}

/// Encodes the finite fp32 `x` divided by 2^s (s in [-127, 127]) into element type T.
template <ElementType T, Rounding R>
inline uint8_t encode_scaled(float x, int s) {
  constexpr Traits tr = traits(T);
  const uint32_t b = f2u(x);
  const uint32_t sign = b >> 31;
  const uint32_t a = b & 0x7FFFFFFFu;
  int e = static_cast<int>(a >> 23);
  if constexpr (!tr.is_int) {
    // Hot path: q = x / 2^s is an fp32 normal in the element's normal range, so rounding to
    // mbits is a constant shift of q's bit pattern (a carry into the exponent is automatic).
    const int pq0 = e - 127 - s;
    if (__builtin_expect(e != 0 && pq0 >= tr.emin, 1)) {
      constexpr int kSh = 23 - tr.mbits;
      const uint32_t qa = static_cast<uint32_t>(static_cast<int64_t>(a) - (static_cast<int64_t>(s) << 23));
      const uint32_t t = round_shift<R>(qa, kSh);
      int64_t mag = static_cast<int64_t>(t) - (static_cast<int64_t>(127 - tr.bias) << tr.mbits);
      if (mag > tr.max_mag) mag = tr.max_mag;
      return static_cast<uint8_t>((sign << (tr.ebits + tr.mbits)) | static_cast<uint32_t>(mag));
    }
  }
  uint32_t m;
  int ex;  // floor(log2 |x|)
  if (__builtin_expect(e != 0, 1)) {
    m = (a & 0x7FFFFFu) | 0x800000u;
    ex = e - 127;
  } else {
    // fp32 subnormal or zero: normalise so the leading bit sits at bit 23.
    const int lz = std::countl_zero(a | 1u) - 8;
    m = a << lz;
    ex = -126 - lz;
  }
  const int pq = ex - s;  // floor(log2 |q|)
  if constexpr (tr.is_int) {
    // value = round(q * 64) / 64, q*64 = m * 2^(pq - 23 + 6)
    if (pq >= 1) return static_cast<uint8_t>(sign ? (256 - tr.max_mag) : tr.max_mag);
    int sh = 17 - pq;
    if (sh > 31) sh = 31;
    uint32_t r = round_shift<R>(m, sh);
    if (r > tr.max_mag) r = tr.max_mag;
    return static_cast<uint8_t>(sign ? ((256u - r) & 0xFFu) : r);
  } else {
    const int p = pq > tr.emin ? pq : tr.emin;
    int sh = 23 - tr.mbits + (p - pq);
    if (sh > 31) sh = 31;
    const uint32_t r = round_shift<R>(m, sh);
    // Subnormal and normal codes share one formula: ((p + bias - 1) << mbits) + r.
    int64_t mag = (static_cast<int64_t>(p + tr.bias - 1) << tr.mbits) + r;
    if (mag > tr.max_mag) mag = tr.max_mag;
    return static_cast<uint8_t>((sign << (tr.ebits + tr.mbits)) | static_cast<uint32_t>(mag));
  }
}

/// fp32 value of 2^s for s in [-127, 127] (2^-127 is the fp32 subnormal 0x00400000).
inline float pow2f(int s) {
  return s >= -126 ? u2f(static_cast<uint32_t>(s + 127) << 23) : u2f(0x00400000u);
}

/// floor(log2 a) from the bit pattern of a positive finite magnitude `a` (fp32 abs bits).
inline int floor_log2_bits(uint32_t a) {
  const int e = static_cast<int>(a >> 23);
  if (e != 0) return e - 127;
  return -149 + (31 - std::countl_zero(a));
}

}  // namespace xpusim::numerics::detail
