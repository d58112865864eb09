#pragma once
// Element types of the OCP MX v1.0 formats (and NVFP4's E2M1 elements / E4M3 scales):
// bit layouts, exhaustive decode, and exact conversion from fp32 with a chosen rounding mode.
// Facts: ../shared/reference/formats.md §1.2–1.5.

#include <cstdint>
#include <string>

namespace xpusim::numerics {

/// Element data types. Codes are right-aligned in a byte (FP4 uses the low 4 bits, FP6 the
/// low 6), sign in the top bit of the code.
enum class ElementType { Fp8E4m3, Fp8E5m2, Fp6E3m2, Fp6E2m3, Fp4E2m1, Int8 };

/// Rounding of an element to its grid. Even: to nearest, ties to even (IEEE RNE). Nearest: to
/// nearest, ties away from zero (the microxcaling reference default). Floor: toward zero
/// (sign * floor(|x|)).
enum class Rounding { Even, Nearest, Floor };

/// Static facts of an element type (formats.md §1.2).
struct ElementInfo {
  const char* name;    ///< "fp8_e4m3", "fp8_e5m2", "fp6_e3m2", "fp6_e2m3", "fp4_e2m1", "int8"
  int bits;            ///< code width d
  int ebits;           ///< exponent bits (0 for INT8)
  int mbits;           ///< trailing mantissa bits (6 fraction bits for INT8)
  int bias;            ///< exponent bias (0 for INT8)
  int emax;            ///< unbiased exponent of the largest normal (0 for INT8)
  int emin;            ///< unbiased exponent of the smallest normal, 1 - bias (0 for INT8)
  double max_normal;   ///< 448, 57344, 28, 7.5, 6, 127/64
  uint8_t max_code;    ///< code of +max_normal
  bool has_inf;        ///< E5M2 only
  bool has_nan;        ///< E4M3 (S.1111.111) and E5M2 (S.11111.{01,10,11})
};

const ElementInfo& element_info(ElementType t);

/// Number of codes (2^bits).
inline int code_count(ElementType t) { return 1 << element_info(t).bits; }

/// Exact value of `code` (only the low `bits` bits are used). INT8 0x80 decodes to -2.
/// E4M3 S.1111.111 and E5M2 S.11111.{01,10,11} decode to NaN, E5M2 S.11111.00 to ±Inf.
float decode_element(ElementType t, uint8_t code);

/// Encodes q (already divided by the block scale) with `rounding`, saturating finite values to
/// ±max_normal and keeping the sign of zero (no -0 for INT8; 0x80 is never produced). The
/// exponent is taken from the bit pattern of q (exact, formats.md §1.5). NaN/Inf map to the
/// type's NaN code where it has one, else to max_normal with the sign of q (callers handle
/// special blocks before encoding).
uint8_t encode_element(ElementType t, float q, Rounding rounding);

/// Same as encode_element(t, x / 2^s, rounding) computed exactly for any scale exponent s in
/// [-127, 127] (no intermediate fp32 rounding or underflow).
uint8_t encode_element_scaled(ElementType t, float x, int s, Rounding rounding);

/// "even", "nearest", "floor".
std::string rounding_name(Rounding r);

}  // namespace xpusim::numerics
