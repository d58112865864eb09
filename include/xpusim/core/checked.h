#pragma once
// Checked arithmetic on sizes derived from user input (shapes, layer counts, byte counts).
// A result that does not fit is bad input, not a wrapped number: each helper throws
// core::InputError naming the quantity, the operands and the largest value accepted.

#include <cstdint>
#include <cstddef>
#include <string>

namespace xpusim::core {

/// a · b; throws InputError "QUANTITY overflows" when it does not fit in int64 (or an operand < 0).
int64_t checked_mul(int64_t a, int64_t b, const std::string& quantity);
/// a + b; throws InputError "QUANTITY overflows" when it does not fit in int64.
int64_t checked_add(int64_t a, int64_t b, const std::string& quantity);
/// The product of all `factors` (1 for none), checked like checked_mul.
int64_t checked_product(const int64_t* factors, std::size_t count, const std::string& quantity);
/// `value` as int; throws InputError naming `quantity` when it is outside [lo, hi].
int checked_int(int64_t value, const std::string& quantity, int lo = 0, int hi = INT32_MAX);
/// A finite double within [lo, hi] as int64; throws InputError naming `quantity` otherwise
/// (NaN, ±inf and out-of-range values never reach a narrowing cast).
int64_t checked_int64(double value, const std::string& quantity, int64_t lo, int64_t hi);

}  // namespace xpusim::core
