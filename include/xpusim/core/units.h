#pragma once
// Physical quantities as types. A Quantity carries the exponents of five base dimensions
// (time, bytes, FLOPs, dollars, joules) and stores its value in base units (s, B, FLOP, $, J).
// Adding Seconds to Bytes does not compile; multiplying or dividing composes dimensions.

#include <cmath>
#include <compare>

namespace xpusim::core {

template <int T, int B, int F, int D, int E>
class Quantity {
 public:
  constexpr Quantity() = default;
  /// Construct from a value in base units (seconds, bytes, FLOPs, dollars, joules).
  static constexpr Quantity from_base(double v) { return Quantity(v); }
  /// The value in base units.
  constexpr double base() const { return v_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(v_ + o.v_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(v_ - o.v_); }
  constexpr Quantity operator-() const { return Quantity(-v_); }
  constexpr Quantity& operator+=(Quantity o) { v_ += o.v_; return *this; }
  constexpr Quantity& operator-=(Quantity o) { v_ -= o.v_; return *this; }
  constexpr Quantity operator*(double k) const { return Quantity(v_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(v_ / k); }
  constexpr Quantity& operator*=(double k) { v_ *= k; return *this; }
  constexpr Quantity& operator/=(double k) { v_ /= k; return *this; }
  friend constexpr Quantity operator*(double k, Quantity q) { return Quantity(k * q.v_); }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  constexpr explicit Quantity(double v) : v_(v) {}
  double v_ = 0.0;
};

/// Dimensionless quantities collapse to double.
template <int T, int B, int F, int D, int E>
struct QuantityOf { using type = Quantity<T, B, F, D, E>; };
template <>
struct QuantityOf<0, 0, 0, 0, 0> { using type = double; };

namespace detail {
template <int T, int B, int F, int D, int E>
constexpr auto make(double v) {
  if constexpr (T == 0 && B == 0 && F == 0 && D == 0 && E == 0) return v;
  else return Quantity<T, B, F, D, E>::from_base(v);
}
}  // namespace detail

template <int T1, int B1, int F1, int D1, int E1, int T2, int B2, int F2, int D2, int E2>
constexpr auto operator*(Quantity<T1, B1, F1, D1, E1> a, Quantity<T2, B2, F2, D2, E2> b) {
  return detail::make<T1 + T2, B1 + B2, F1 + F2, D1 + D2, E1 + E2>(a.base() * b.base());
}
template <int T1, int B1, int F1, int D1, int E1, int T2, int B2, int F2, int D2, int E2>
constexpr auto operator/(Quantity<T1, B1, F1, D1, E1> a, Quantity<T2, B2, F2, D2, E2> b) {
  return detail::make<T1 - T2, B1 - B2, F1 - F2, D1 - D2, E1 - E2>(a.base() / b.base());
}
template <int T, int B, int F, int D, int E>
constexpr auto operator/(double k, Quantity<T, B, F, D, E> q) {
  return detail::make<-T, -B, -F, -D, -E>(k / q.base());
}

using Seconds = Quantity<1, 0, 0, 0, 0>;

inline constexpr double kSecondsPerHour = 3600.0;   ///< SI: 1 h
inline constexpr double kSecondsPerDay = 86400.0;   ///< SI: 1 d
using Bytes = Quantity<0, 1, 0, 0, 0>;
using Flops = Quantity<0, 0, 1, 0, 0>;
using Dollars = Quantity<0, 0, 0, 1, 0>;
using Joules = Quantity<0, 0, 0, 0, 1>;
using Hertz = Quantity<-1, 0, 0, 0, 0>;
using FlopRate = Quantity<-1, 0, 1, 0, 0>;    ///< FLOP/s
using ByteRate = Quantity<-1, 1, 0, 0, 0>;    ///< B/s
using Watts = Quantity<-1, 0, 0, 0, 1>;       ///< J/s
using DollarRate = Quantity<-1, 0, 0, 1, 0>;  ///< $/s
using JoulesPerFlop = Quantity<0, 0, -1, 0, 1>;
using JoulesPerByte = Quantity<0, -1, 0, 0, 1>;

// Factories (abseil Duration style). Prefixes are exact: SI is 10^3k, binary is 2^10k.
constexpr Seconds seconds(double v) { return Seconds::from_base(v); }
constexpr Seconds milliseconds(double v) { return Seconds::from_base(v * 1e-3); }
constexpr Seconds microseconds(double v) { return Seconds::from_base(v * 1e-6); }
constexpr Seconds nanoseconds(double v) { return Seconds::from_base(v * 1e-9); }
constexpr Seconds hours(double v) { return Seconds::from_base(v * 3600.0); }
constexpr Bytes bytes(double v) { return Bytes::from_base(v); }
constexpr Bytes kib(double v) { return Bytes::from_base(v * 1024.0); }
constexpr Bytes mib(double v) { return Bytes::from_base(v * 1048576.0); }
constexpr Bytes gib(double v) { return Bytes::from_base(v * 1073741824.0); }
constexpr Bytes gigabytes(double v) { return Bytes::from_base(v * 1e9); }
constexpr Flops flops(double v) { return Flops::from_base(v); }
constexpr FlopRate flops_per_second(double v) { return FlopRate::from_base(v); }
constexpr FlopRate teraflops_per_second(double v) { return FlopRate::from_base(v * 1e12); }
constexpr ByteRate bytes_per_second(double v) { return ByteRate::from_base(v); }
constexpr ByteRate gigabytes_per_second(double v) { return ByteRate::from_base(v * 1e9); }
constexpr ByteRate terabytes_per_second(double v) { return ByteRate::from_base(v * 1e12); }
constexpr ByteRate gigabits_per_second(double v) { return ByteRate::from_base(v * 1e9 / 8.0); }
constexpr Hertz hertz(double v) { return Hertz::from_base(v); }
constexpr Hertz gigahertz(double v) { return Hertz::from_base(v * 1e9); }
constexpr Watts watts(double v) { return Watts::from_base(v); }
constexpr Joules joules(double v) { return Joules::from_base(v); }
constexpr Dollars dollars(double v) { return Dollars::from_base(v); }
constexpr DollarRate dollars_per_hour(double v) { return DollarRate::from_base(v / 3600.0); }

// Named read-outs, so that a number leaves a quantity only with its unit spelled out.
constexpr double to_seconds(Seconds s) { return s.base(); }
constexpr double to_ms(Seconds s) { return s.base() * 1e3; }
constexpr double to_us(Seconds s) { return s.base() * 1e6; }
constexpr double to_bytes(Bytes b) { return b.base(); }
constexpr double to_gib(Bytes b) { return b.base() / 1073741824.0; }
constexpr double to_gb(Bytes b) { return b.base() / 1e9; }
constexpr double to_flops(Flops f) { return f.base(); }
constexpr double to_tflops(FlopRate r) { return r.base() / 1e12; }
constexpr double to_gbps(ByteRate r) { return r.base() / 1e9; }        ///< GB/s
constexpr double to_tbps(ByteRate r) { return r.base() / 1e12; }       ///< TB/s
constexpr double to_gbit_per_s(ByteRate r) { return r.base() * 8.0 / 1e9; }
constexpr double to_ghz(Hertz h) { return h.base() / 1e9; }
constexpr double to_watts(Watts w) { return w.base(); }
constexpr double to_joules(Joules j) { return j.base(); }
constexpr double to_dollars(Dollars d) { return d.base(); }
constexpr double to_dollars_per_hour(DollarRate r) { return r.base() * 3600.0; }

template <int T, int B, int F, int D, int E>
constexpr Quantity<T, B, F, D, E> max(Quantity<T, B, F, D, E> a, Quantity<T, B, F, D, E> b) {
  return a < b ? b : a;
}
template <int T, int B, int F, int D, int E>
constexpr Quantity<T, B, F, D, E> min(Quantity<T, B, F, D, E> a, Quantity<T, B, F, D, E> b) {
  return a < b ? a : b;
}

}  // namespace xpusim::core
