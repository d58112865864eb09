#include "xpusim/core/version.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <tuple>

namespace xpusim::core {

namespace {

constexpr const char* kExpected =
    "a PEP 440 version: release numbers N(.N)*, then optionally aN/bN/rcN, .postN, .devN, +local "
    "(e.g. 1.1.0rc5, 0.5.1.post1, 2.31)";

/// A cursor over the lower-cased text.
struct Cursor {
  std::string s;
  size_t at = 0;
  bool done() const { return at >= s.size(); }
  bool digit() const { return !done() && std::isdigit(static_cast<unsigned char>(s[at])); }
  void skip_separator() {
    if (!done() && (s[at] == '.' || s[at] == '-' || s[at] == '_')) ++at;
  }
  /// Consumes `word` if the text continues with it (after an optional separator).
  bool word(const std::string& w) {
    size_t from = at;
    if (from < s.size() && (s[from] == '.' || s[from] == '-' || s[from] == '_')) ++from;
    if (s.compare(from, w.size(), w) != 0) return false;
    at = from + w.size();
    return true;
  }
  /// An optional number after an optional separator; 0 when absent (PEP 440: "1.0rc" is 1.0rc0).
  long long number() {
    const size_t keep = at;
    skip_separator();
    if (!digit()) {
      at = keep;
      return 0;
    }
    long long n = 0;
    while (digit() && n < std::numeric_limits<long long>::max() / 10) n = n * 10 + (s[at++] - '0');
    return n;
  }
};

std::string trim_lower(const std::string& text) {
  std::string s = text;
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool read_pre(Cursor& c, Version& v) {
  // Longest spellings first: "preview" before "pre", "rc" before "c".
  const std::pair<const char*, int> kinds[] = {{"alpha", 0}, {"beta", 1}, {"preview", 2}, {"pre", 2},
                                              {"rc", 2},    {"a", 0},    {"b", 1},       {"c", 2}};
  for (const auto& [w, kind] : kinds) {
    if (!c.word(w)) continue;
    v.pre_kind = kind;
    v.pre_number = c.number();
    return true;
  }
  return false;
}

void read_post(Cursor& c, Version& v) {
  for (const char* w : {"post", "rev", "r"}) {
    if (!c.word(w)) continue;
    v.post = c.number();
    return;
  }
  if (!c.done() && c.s[c.at] == '-' && c.at + 1 < c.s.size() &&
      std::isdigit(static_cast<unsigned char>(c.s[c.at + 1])))
    v.post = c.number();  // "1.0-1" is 1.0.post1
}

/// PEP 440's sort key (as the packaging library builds it), release compared separately.
std::tuple<double, double, double, double> key(const Version& v) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  double pre_kind = v.pre_kind, pre_number = static_cast<double>(v.pre_number);
  if (v.pre_kind == 3 && v.post < 0 && v.dev >= 0) pre_kind = pre_number = -inf;  // 1.0.dev1 < 1.0a1
  else if (v.pre_kind == 3) pre_kind = pre_number = inf;
  const double post = v.post < 0 ? -inf : static_cast<double>(v.post);
  const double dev = v.dev < 0 ? inf : static_cast<double>(v.dev);
  return {pre_kind, pre_number, post, dev};
}

}  // namespace

Result<Version> parse_version(const std::string& text) {
  Cursor c{trim_lower(text)};
  if (!c.done() && c.s[0] == 'v') ++c.at;
  Version v;
  while (c.digit()) {
    v.release.push_back(c.number());
    if (c.at + 1 < c.s.size() && c.s[c.at] == '.' && std::isdigit(static_cast<unsigned char>(c.s[c.at + 1]))) ++c.at;
    else break;
  }
  if (v.release.empty()) return make_error("'" + text + "' is not " + kExpected);
  read_pre(c, v);
  read_post(c, v);
  if (c.word("dev")) v.dev = c.number();
  if (!c.done() && c.s[c.at] == '+' && c.at + 1 < c.s.size()) c.at = c.s.size();  // local label
  if (!c.done()) return make_error("'" + text + "' is not " + kExpected);
  v.text = c.s.substr(c.s[0] == 'v' ? 1 : 0);
  return v;
}

int compare(const Version& a, const Version& b) {
  const size_t n = std::max(a.release.size(), b.release.size());
  for (size_t i = 0; i < n; ++i) {
    const long long x = i < a.release.size() ? a.release[i] : 0;
    const long long y = i < b.release.size() ? b.release[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  const auto ka = key(a), kb = key(b);
  return ka < kb ? -1 : (kb < ka ? 1 : 0);
}

bool VersionRange::contains(const Version& v) const {
  for (const auto& c : clauses) {
    const int r = compare(v, c.version);
    bool ok = false;
    switch (c.op) {
      case Op::Less: ok = r < 0; break;
      case Op::LessEqual: ok = r <= 0; break;
      case Op::Greater: ok = r > 0; break;
      case Op::GreaterEqual: ok = r >= 0; break;
      case Op::Equal: ok = r == 0; break;
      case Op::NotEqual: ok = r != 0; break;
    }
    if (!ok) return false;
  }
  return true;
}

Result<VersionRange> parse_version_range(const std::string& text) {
  VersionRange range;
  range.text = text;
  const std::string s = trim_lower(text);
  if (s == "*") return range;
  const std::pair<const char*, VersionRange::Op> ops[] = {
      {">=", VersionRange::Op::GreaterEqual}, {"<=", VersionRange::Op::LessEqual}, {"==", VersionRange::Op::Equal},
      {"!=", VersionRange::Op::NotEqual},     {">", VersionRange::Op::Greater},    {"<", VersionRange::Op::Less}};
  size_t from = 0;
  while (from <= s.size()) {
    const size_t comma = std::min(s.find(',', from), s.size());
    const std::string clause = trim_lower(s.substr(from, comma - from));
    bool read = false;
    for (const auto& [sym, op] : ops) {
      if (clause.compare(0, std::char_traits<char>::length(sym), sym) != 0) continue;
      auto v = parse_version(clause.substr(std::char_traits<char>::length(sym)));
      if (!v) return make_error("range '" + text + "': clause '" + clause + "': " + v.error());
      range.clauses.push_back({op, *v});
      read = true;
      break;
    }
    if (!read)
      return make_error("range '" + text + "': clause '" + clause +
                        "' is not an operator (>=, >, <=, <, ==, !=) and a version; ranges read like '>=1.0,<2'");
    from = comma + 1;
  }
  return range;
}

}  // namespace xpusim::core
