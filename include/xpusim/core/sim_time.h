#pragma once
// The simulation clock shared by the event-driven training executor (engine/event.cc) and the
// serving simulator (serve/simulator.cc): integer picoseconds, so that event times compare
// exactly and the same inputs give the same event order on every machine.

#include <cmath>
#include <cstdint>

#include "xpusim/core/diagnostics.h"
#include "xpusim/core/units.h"

namespace xpusim::core {

/// Integer simulation time: picoseconds (2^63 ps is about 106 days).
using SimTime = std::int64_t;

/// Picoseconds per second, and its inverse (multiplied, never divided, so that every
/// conversion rounds the same way).
inline constexpr double kPicosecondsPerSecond = 1e12;
inline constexpr double kSecondsPerPicosecond = 1e-12;

/// The largest time the clock represents exactly as a double: 2^62 ps, about 53 days. Times
/// beyond it (or NaN) are refused rather than wrapped.
inline constexpr double kMaxSimTimePs = 4.611686018427387904e18;

/// `s` rounded to the nearest picosecond; a time outside +/- kMaxSimTimePs is a diagnostic.
inline SimTime to_sim_time(Seconds s) {
  const double ps = s.base() * kPicosecondsPerSecond;
  if (!(std::fabs(ps) <= kMaxSimTimePs))
    fail("simulated time", "beyond the simulation clock's range", std::to_string(s.base()) + " s",
         "at most 2^62 ps (about 53 days) per event time or span");
  return static_cast<SimTime>(std::llround(ps));
}

/// A simulation time (or a span of it) in seconds.
inline Seconds from_sim_time(SimTime t) { return seconds(static_cast<double>(t) * kSecondsPerPicosecond); }

/// A simulation time (or a span of it) as a plain number of seconds, for accumulators and
/// per-request statistics.
inline double sim_seconds(SimTime t) { return static_cast<double>(t) * kSecondsPerPicosecond; }

}  // namespace xpusim::core
