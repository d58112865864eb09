#include "xpusim/core/unit_parse.h"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include "xpusim/core/format.h"

namespace xpusim::core {
namespace {

struct UnitDef {
  const char* name;
  double factor;  // to base units
  int t, b, f, d, e;
};

// Base-unit atoms. Prefixed forms are generated below. Case matters: b = bit, B = byte.
constexpr std::array<UnitDef, 21> kAtoms = {{
    {"s", 1.0, 1, 0, 0, 0, 0},
    {"sec", 1.0, 1, 0, 0, 0, 0},
    {"min", 60.0, 1, 0, 0, 0, 0},
    {"h", 3600.0, 1, 0, 0, 0, 0},
    {"hr", 3600.0, 1, 0, 0, 0, 0},
    {"day", 86400.0, 1, 0, 0, 0, 0},
    {"d", 86400.0, 1, 0, 0, 0, 0},
    {"B", 1.0, 0, 1, 0, 0, 0},
    {"b", 0.125, 0, 1, 0, 0, 0},
    {"bit", 0.125, 0, 1, 0, 0, 0},
    {"FLOP", 1.0, 0, 0, 1, 0, 0},
    {"FLOPs", 1.0, 0, 0, 1, 0, 0},
    {"OP", 1.0, 0, 0, 1, 0, 0},
    {"FLOPS", 1.0, -1, 0, 1, 0, 0},  // FLOPS = FLOP per second (TFLOPS)
    {"OPS", 1.0, -1, 0, 1, 0, 0},
    {"Hz", 1.0, -1, 0, 0, 0, 0},
    {"W", 1.0, -1, 0, 0, 0, 1},
    {"J", 1.0, 0, 0, 0, 0, 1},
    {"Wh", 3600.0, 0, 0, 0, 0, 1},
    {"USD", 1.0, 0, 0, 0, 1, 0},
    {"$", 1.0, 0, 0, 0, 1, 0},
}};

struct Prefix {
  const char* p;
  double k;
};
constexpr std::array<Prefix, 14> kPrefixes = {{
    {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
    {"Pi", 1125899906842624.0}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
    {"P", 1e15}, {"E", 1e18}, {"m", 1e-3}, {"u", 1e-6},
}};

bool lookup_atom(const std::string& u, ParsedQuantity& out) {
  for (const auto& a : kAtoms) {
    if (u == a.name) {
      out = {a.factor, a.t, a.b, a.f, a.d, a.e};
      return true;
    }
  }
  // "ns", "ps", "µs" and the prefix forms.
  if (u == "ns") { out = {1e-9, 1, 0, 0, 0, 0}; return true; }
  if (u == "ps") { out = {1e-12, 1, 0, 0, 0, 0}; return true; }
  if (u == "\xC2\xB5s" || u == "\xCE\xBCs") { out = {1e-6, 1, 0, 0, 0, 0}; return true; }
  // Shorthand rates: Gbps = Gb/s, GBps = GB/s.
  for (const auto& p : kPrefixes) {
    const std::string ps = p.p;
    if (u.size() > ps.size() && u.compare(0, ps.size(), ps) == 0) {
      std::string rest = u.substr(ps.size());
      if (rest == "bps") { out = {p.k * 0.125, -1, 1, 0, 0, 0}; return true; }
      if (rest == "Bps") { out = {p.k, -1, 1, 0, 0, 0}; return true; }
      for (const auto& a : kAtoms) {
        if (rest == a.name && std::string(a.name) != "$" && std::string(a.name) != "USD" &&
            std::string(a.name) != "min" && std::string(a.name) != "h" &&
            std::string(a.name) != "hr" && std::string(a.name) != "day" && std::string(a.name) != "d" &&
            std::string(a.name) != "sec") {
          // Binary prefixes only make sense on bytes and bits.
          if (ps.size() == 2 && a.b == 0) continue;
          out = {a.factor * p.k, a.t, a.b, a.f, a.d, a.e};
          return true;
        }
      }
    }
  }
  if (u == "bps") { out = {0.125, -1, 1, 0, 0, 0}; return true; }
  return false;
}

Result<ParsedQuantity> parse_unit_expr(const std::string& unit) {
  // numerator[/denominator], each a single atom.
  ParsedQuantity num{1.0, 0, 0, 0, 0, 0};
  auto slash = unit.find('/');
  std::string n = trim(unit.substr(0, slash));
  if (!n.empty() && !lookup_atom(n, num)) return Error{"unknown unit '" + n + "'"};
  if (slash != std::string::npos) {
    std::string dn = trim(unit.substr(slash + 1));
    ParsedQuantity den;
    if (!lookup_atom(dn, den)) return Error{"unknown unit '" + dn + "'"};
    num.value /= den.value;
    num.t -= den.t; num.b -= den.b; num.f -= den.f; num.d -= den.d; num.e -= den.e;
  }
  return num;
}

}  // namespace

Result<ParsedQuantity> parse_quantity_any(std::string_view text) {
  std::string s = trim(text);
  if (s.empty()) return Error{"empty value"};
  bool dollar = false;
  if (s[0] == '$') {
    dollar = true;
    s = trim(s.substr(1));
  }
  const char* begin = s.c_str();
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  if (end == begin) return Error{"'" + std::string(text) + "' does not start with a number"};
  if (!std::isfinite(v)) return Error{"'" + std::string(text) + "' is not a finite number"};
  std::string unit = trim(std::string(end));
  if (dollar) unit = "$" + unit;  // "$21.50/h" -> "$/h"
  if (unit.empty()) {
    return Error{"'" + std::string(text) + "' is a number without a unit"};
  }
  auto u = parse_unit_expr(unit);
  if (!u) return Error{"'" + std::string(text) + "': " + u.error()};
  ParsedQuantity q = *u;
  q.value *= v;
  return q;
}

std::string dimension_name(int t, int b, int f, int d, int e) {
  struct Named { int t, b, f, d, e; const char* name; };
  static const Named kNames[] = {
      {1, 0, 0, 0, 0, "a time"},        {0, 1, 0, 0, 0, "a size in bytes"},
      {0, 0, 1, 0, 0, "a FLOP count"},  {0, 0, 0, 1, 0, "an amount of dollars"},
      {0, 0, 0, 0, 1, "an energy"},     {-1, 0, 0, 0, 0, "a frequency"},
      {-1, 0, 1, 0, 0, "a FLOP rate"},  {-1, 1, 0, 0, 0, "a bandwidth"},
      {-1, 0, 0, 0, 1, "a power"},      {-1, 0, 0, 1, 0, "a price per time"},
      {0, -1, 0, 0, 1, "an energy per byte"}, {0, 0, -1, 0, 1, "an energy per FLOP"},
      {0, 0, 0, 0, 0, "a plain number"},
  };
  for (const auto& n : kNames)
    if (n.t == t && n.b == b && n.f == f && n.d == d && n.e == e) return n.name;
  return "a quantity of unusual dimensions";
}

std::string unit_example(int t, int b, int f, int d, int e) {
  if (t == 1 && b == 0 && f == 0 && d == 0 && e == 0) return "a time such as '1.2 us'";
  if (t == 0 && b == 1) return "a size such as '144 GiB'";
  if (t == -1 && b == 1) return "a bandwidth such as '4.9 TB/s' or '200 Gb/s'";
  if (t == -1 && f == 1) return "a FLOP rate such as '2517 TFLOP/s'";
  if (t == -1 && e == 1) return "a power such as '1000 W'";
  if (t == -1 && d == 1) return "a price such as '$21.50/h'";
  if (t == -1 && b == 0 && f == 0 && d == 0 && e == 0) return "a frequency such as '2.4 GHz'";
  return dimension_name(t, b, f, d, e);
}

}  // namespace xpusim::core
