#include <gtest/gtest.h>

#include "xpusim/core/diagnostics.h"
#include "xpusim/core/format.h"
#include "xpusim/core/registry.h"
#include "xpusim/core/suggest.h"

using namespace xpusim::core;

TEST(Suggest, ClosestMatchForTypos) {
  std::vector<std::string> ids = {"trn2-48xl", "trn3-ultraserver-gen2", "gb300-nvl72"};
  EXPECT_EQ(closest_match("gb300-nv72", ids).value_or(""), "gb300-nvl72");
  EXPECT_EQ(closest_match("trn3-ultraserver-gen", ids).value_or(""), "trn3-ultraserver-gen2");
  EXPECT_FALSE(closest_match("completely-different-thing", ids).has_value());
}

TEST(Registry, UnknownNameListsValidOnesAndClosest) {
  Registry<int> r("topology");
  r.add("ring", "ring", 1);
  r.add("switch", "switch", 2);
  try {
    r.get("swtich", "net.topology");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("net.topology: unknown topology 'swtich'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("one of: ring, switch"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean 'switch'?"), std::string::npos) << msg;
  }
}

TEST(Format, NumbersAreDeterministic) {
  EXPECT_EQ(fmt_num(4.9), "4.9");
  EXPECT_EQ(fmt_num(2517.0), "2517");
  EXPECT_EQ(fmt_num(0.00123456, 3), "0.00123");
  EXPECT_EQ(fmt_int(1048576), "1,048,576");
}

TEST(Format, GlobsMatchTheWholeTextWithStarsAndQuestionMarks) {
  EXPECT_TRUE(glob_match("in-mlpi51-*", "in-mlpi51-dsr1-gb300x72-offline"));
  EXPECT_FALSE(glob_match("in-mlpi51-*", "tr-in-mlpi51-x"));  // anchored at both ends
  EXPECT_TRUE(glob_match("*-ttft", "in-trn1-tnx-llama3-8b-128-8064-ttft"));
  EXPECT_FALSE(glob_match("*-ttft", "in-x-ttft-tput"));
  EXPECT_TRUE(glob_match("tr-?-*b", "tr-a-13b"));
  EXPECT_FALSE(glob_match("tr-?-*b", "tr--13b"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("**a**", "a"));
  EXPECT_FALSE(glob_match("", "a"));
  EXPECT_TRUE(glob_match("a*b*c", "a-b-b-c"));
  EXPECT_FALSE(glob_match("a*b*c", "a-c-b"));
  // Many stars against a long run that almost matches: a back-tracking matcher takes
  // exponential time here; this one a few hundred thousand steps.
  const std::string text(20000, 'a');
  EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", text));
  EXPECT_TRUE(glob_match("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*", text));
}

#include "xpusim/core/check.h"

TEST(Check, ViolatedInvariantThrowsInternalErrorWithLocation) {
  try {
    XS_CHECK(1 + 1 == 3, "arithmetic is broken");
    FAIL() << "expected InternalError";
  } catch (const InternalError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("suggest_test.cc:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("check '1 + 1 == 3' failed: arithmetic is broken"), std::string::npos) << msg;
  }
}
