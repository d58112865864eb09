#pragma once
// Deterministic number formatting for reports (fixed locale, fixed precision).

#include <string>

namespace xpusim::core {

/// printf-style formatting into a std::string.
std::string strformat(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/// A number with `sig` significant digits, without trailing zeros ("4.9", "2517", "0.0012").
std::string fmt_num(double v, int sig = 4);

/// Thousands-separated integer ("1,048,576").
std::string fmt_int(long long v);

}  // namespace xpusim::core
