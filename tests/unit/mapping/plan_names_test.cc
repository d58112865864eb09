// The one name table of the ZeRO stages and recompute modes: the CLI's spelling, the validation
// CSV's spelling, and their inverses.
#include <gtest/gtest.h>

#include "xpusim/mapping/plan.h"

namespace xpusim::mapping {
namespace {

TEST(PlanNames, EveryZeroStageRoundTripsInBothSpellings) {
  const std::vector<std::string> cli = {"none", "1", "2", "3", "fsdp"};
  const std::vector<std::string> csv = {"none", "zero1", "zero2", "zero3", "fsdp"};
  EXPECT_EQ(zero_names(), cli);
  EXPECT_EQ(zero_csv_names(), csv);
  for (Zero z : {Zero::None, Zero::Zero1, Zero::Zero2, Zero::Zero3, Zero::Fsdp}) {
    EXPECT_EQ(zero_from_name(zero_name(z)), z) << zero_name(z);
    EXPECT_EQ(zero_from_csv_name(zero_csv_name(z)), z) << zero_csv_name(z);
  }
}

TEST(PlanNames, EachSpellingRejectsTheOther) {
  EXPECT_FALSE(zero_from_name("zero1"));  // the CSV's spelling is not a --zero value
  EXPECT_FALSE(zero_from_csv_name("1"));  // nor the reverse
  EXPECT_FALSE(zero_from_name(""));
  EXPECT_FALSE(recompute_from_name("ful"));
  EXPECT_EQ(recompute_from_name("full"), Recompute::Full);
}

}  // namespace
}  // namespace xpusim::mapping
