#pragma once
// Software versions as PEP 440 orders them, and version ranges (">=1.0,<2"), for the versioned
// software stacks of data/calibration/stacks/ (docs/serving.md, "Software stacks and versions").
//
// The subset read: an optional "v", release segments N(.N)*, an optional pre-release
// (a|b|rc, also alpha, beta, c, pre, preview, with an optional separator and number), an
// optional post-release (.postN, -N), an optional dev-release (.devN) and an optional local
// label (+anything, ignored in comparisons). Ordering per PEP 440: 1.1.0.dev1 < 1.1.0a1 <
// 1.1.0rc5 < 1.1.0 < 1.1.0.post1, and 1.1 == 1.1.0.

#include <string>
#include <vector>

#include "xpusim/core/result.h"

namespace xpusim::core {

struct Version {
  std::vector<long long> release;  ///< 1.2.0 → {1, 2, 0}
  int pre_kind = 3;                ///< 0 a, 1 b, 2 rc; 3 none (a final or post release)
  long long pre_number = 0;
  long long post = -1;             ///< -1: no post-release
  long long dev = -1;              ///< -1: no dev-release
  std::string text;                ///< as written (without a leading "v")
};

/// Parses a version; the error names what was expected.
Result<Version> parse_version(const std::string& text);

/// <0, 0, >0 as a orders before, with, after b (PEP 440; trailing zero segments ignored).
int compare(const Version& a, const Version& b);
inline bool operator<(const Version& a, const Version& b) { return compare(a, b) < 0; }
inline bool operator==(const Version& a, const Version& b) { return compare(a, b) == 0; }

/// Comma-separated clauses, all of which must hold: ">=1.0,<2", "==0.5.1", ">0.4,<=0.6", "!=1.1".
/// Ranges compare in PEP 440's total order, without its special rule that "<B" excludes B's
/// pre-releases: ">=1.0,<1.1" and ">=1.1rc0,<2" tile the line, and "<1.1" holds 1.1rc5 (which
/// orders before 1.1). A range of no clauses ("*") holds every version.
struct VersionRange {
  enum class Op { Less, LessEqual, Greater, GreaterEqual, Equal, NotEqual };
  struct Clause {
    Op op;
    Version version;
  };
  std::vector<Clause> clauses;
  std::string text;  ///< as written
  bool contains(const Version& v) const;
};

Result<VersionRange> parse_version_range(const std::string& text);

}  // namespace xpusim::core
