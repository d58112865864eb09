#pragma once
// The accuracy ratchets of the validation files (public_file_test.cc, aic_silicon_test.cc): gates
// on the median and p90 |error| of named groups, and the copy-in-step check against ../shared.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "xpusim/validation/summary.h"

namespace xpusim::test {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Gate {
  const char* group;  ///< a key of the summaries the test builds ("infer", "infer/nvidia-hopper", …)
  double median_pct, p90_pct;
};

/// Every gate's group is present and within its median and p90 (printed, for the next tightening).
template <size_t N>
void expect_within(const std::map<std::string, validation::KindSummary>& groups, const Gate (&gates)[N]) {
  for (const auto& g : gates) {
    SCOPED_TRACE(g.group);
    ASSERT_TRUE(groups.count(g.group));
    const auto& s = groups.at(g.group);
    std::printf("%-24s n=%4d median %5.1f%% p90 %6.1f%%\n", g.group, s.n, s.median_abs_error_pct, s.p90_abs_error_pct);
    EXPECT_LE(s.median_abs_error_pct, g.median_pct);
    EXPECT_LE(s.p90_abs_error_pct, g.p90_pct);
  }
}

/// data/validation/<name> is a copy of ../shared/validation/<name> where that file is present
/// (beside a developer's checkout and in CI); a clone with nothing beside it skips the check.
inline void expect_in_step_with_shared(const std::string& name) {
  const std::string shared = std::string(XS_TESTDATA_DIR) + "/../../shared/validation/" + name;
  if (!std::ifstream(shared)) GTEST_SKIP() << "no ../shared beside the checkout";
  EXPECT_EQ(slurp(shared), slurp(std::string(XS_TESTDATA_DIR) + "/validation/" + name))
      << "data/validation/" << name << " differs from ../shared: copy it again";
}

}  // namespace xpusim::test
