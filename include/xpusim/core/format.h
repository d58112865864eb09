#pragma once
// Deterministic number formatting for reports (fixed locale, fixed precision), and the string
// trimming and glob matching the readers share.

#include <string>
#include <string_view>

namespace xpusim::core {

/// printf-style formatting into a std::string.
std::string strformat(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/// A number with `sig` significant digits, without trailing zeros ("4.9", "2517", "0.0012").
std::string fmt_num(double v, int sig = 4);

/// Thousands-separated integer ("1,048,576").
std::string fmt_int(long long v);

/// `s` without leading and trailing white space (std::isspace).
std::string trim(std::string_view s);

/// Shell-style match of the whole of `text`: '*' any run of characters (none included), '?' one
/// character, anything else itself. Time O(|pattern| x |text|) at worst, whatever the stars.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace xpusim::core
