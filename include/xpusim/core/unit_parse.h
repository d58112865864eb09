#pragma once
// Parsing of quantities written with units: "4.9 TB/s", "144 GiB", "200 Gb/s", "1.2 us",
// "1000 W", "$21.50/h", "2517 TFLOP/s", "2.4 GHz". Bits vs bytes (b vs B) and SI vs binary
// prefixes (G vs Gi) are exact. A bare number is an error: physical fields carry units.

#include <string>
#include <string_view>

#include "xpusim/core/result.h"
#include "xpusim/core/units.h"

namespace xpusim::core {

/// A parsed value in base units with the dimension exponents of its unit.
struct ParsedQuantity {
  double value = 0.0;
  int t = 0, b = 0, f = 0, d = 0, e = 0;
};

/// Parses "<number> <unit>" (or "$<number>[/<time>]") into base units and dimensions.
Result<ParsedQuantity> parse_quantity_any(std::string_view text);

/// Human name of a dimension vector, e.g. "bytes per second".
std::string dimension_name(int t, int b, int f, int d, int e);

/// Parses `text` as quantity Q; errors name the unit found and the kind expected.
template <typename Q>
Result<Q> parse_quantity(std::string_view text);

template <int T, int B, int F, int D, int E>
Result<Quantity<T, B, F, D, E>> parse_quantity_impl(std::string_view text) {
  auto p = parse_quantity_any(text);
  if (!p) return Error{p.error()};
  const ParsedQuantity& q = *p;
  if (q.t != T || q.b != B || q.f != F || q.d != D || q.e != E) {
    return Error{"'" + std::string(text) + "' is " + dimension_name(q.t, q.b, q.f, q.d, q.e) +
                 ", expected " + dimension_name(T, B, F, D, E)};
  }
  return Quantity<T, B, F, D, E>::from_base(q.value);
}

template <typename Q>
struct QuantityParser;
template <int T, int B, int F, int D, int E>
struct QuantityParser<Quantity<T, B, F, D, E>> {
  static Result<Quantity<T, B, F, D, E>> parse(std::string_view s) {
    return parse_quantity_impl<T, B, F, D, E>(s);
  }
};
template <typename Q>
Result<Q> parse_quantity(std::string_view text) {
  return QuantityParser<Q>::parse(text);
}

/// Example unit strings for a kind, used in "expected" texts ("e.g. '4.9 TB/s'").
std::string unit_example(int t, int b, int f, int d, int e);
template <typename Q>
struct UnitExample;
template <int T, int B, int F, int D, int E>
struct UnitExample<Quantity<T, B, F, D, E>> {
  static std::string get() { return unit_example(T, B, F, D, E); }
};

}  // namespace xpusim::core
