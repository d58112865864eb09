#include <gtest/gtest.h>

#include "xpusim/core/version.h"

using namespace xpusim::core;

namespace {

Version v(const std::string& text) {
  auto parsed = parse_version(text);
  EXPECT_TRUE(parsed.has_value()) << text << ": " << (parsed ? "" : parsed.error());
  return parsed ? *parsed : Version{};
}

VersionRange range(const std::string& text) {
  auto parsed = parse_version_range(text);
  EXPECT_TRUE(parsed.has_value()) << text << ": " << (parsed ? "" : parsed.error());
  return parsed ? *parsed : VersionRange{};
}

}  // namespace

// PEP 440's own examples of the order (the specification's "Summary of permitted suffixes and
// relative ordering"), each strictly before the next.
TEST(Version, OrdersAsPep440) {
  const std::vector<std::string> ordered = {"1.0.dev456", "1.0a1", "1.0a2.dev456", "1.0a12.dev456", "1.0a12",
                                            "1.0b1.dev456", "1.0b2", "1.0b2.post345.dev456", "1.0b2.post345",
                                            "1.0rc1.dev456", "1.0rc1", "1.0", "1.0.post456.dev34", "1.0.post456",
                                            "1.1.dev1"};
  for (size_t i = 0; i + 1 < ordered.size(); ++i) {
    EXPECT_LT(compare(v(ordered[i]), v(ordered[i + 1])), 0) << ordered[i] << " < " << ordered[i + 1];
    EXPECT_GT(compare(v(ordered[i + 1]), v(ordered[i])), 0) << ordered[i + 1] << " > " << ordered[i];
  }
}

TEST(Version, TheIssuesExampleAndTheStacksSpellings) {
  EXPECT_LT(v("1.1.0rc5"), v("1.1.0"));
  EXPECT_LT(v("1.1.0"), v("1.1.0.post1"));
  EXPECT_LT(v("1.2.0rc2.post2"), v("1.2.0rc6.post3"));  // TensorRT-LLM release candidates
  EXPECT_LT(v("0.5.1.post1"), v("0.5.6"));              // SGLang
  EXPECT_LT(v("0.9.2"), v("0.12.0"));                   // numeric, not lexical
  EXPECT_TRUE(v("1.1") == v("1.1.0"));                  // trailing zeros
  EXPECT_TRUE(v("v0.6.1") == v("0.6.1"));               // a leading v
  EXPECT_TRUE(v("1.0RC1") == v("1.0rc1"));              // case and spellings
  EXPECT_TRUE(v("1.0-rc.1") == v("1.0rc1"));
  EXPECT_TRUE(v("1.0-1") == v("1.0.post1"));
  EXPECT_TRUE(v("2.0+cu130") == v("2.0"));              // a local label is ignored
  EXPECT_EQ(v("v0.6.1").text, "0.6.1");
}

TEST(Version, RejectsWhatIsNotAVersionNamingTheForm) {
  for (const char* bad : {"", "gpt-oss-dev", "latest", "1.0rc1x", "1..0", "rc1"}) {
    auto parsed = parse_version(bad);
    ASSERT_FALSE(parsed.has_value()) << bad;
    EXPECT_NE(parsed.error().find("PEP 440"), std::string::npos) << parsed.error();
  }
}

TEST(VersionRange, ClausesAllHoldAndRangesTileTheLine) {
  const VersionRange before = range(">=1.0,<1.1"), after = range(">=1.1,<2");
  EXPECT_TRUE(before.contains(v("1.0.0rc3")) == false);  // 1.0.0rc3 orders before 1.0
  EXPECT_TRUE(before.contains(v("1.0")));
  EXPECT_TRUE(before.contains(v("1.1.0rc2.post2")));     // before 1.1: no gap between the two ranges
  EXPECT_FALSE(after.contains(v("1.1.0rc2.post2")));
  EXPECT_TRUE(after.contains(v("1.1.0")));
  EXPECT_FALSE(after.contains(v("2.0")));
  EXPECT_TRUE(range("*").contains(v("0.0.1")));
  EXPECT_TRUE(range("==0.5.1").contains(v("0.5.1.0")));
  EXPECT_FALSE(range("!=0.5.1").contains(v("0.5.1")));
  EXPECT_TRUE(range("> 0.4 , <= 0.6").contains(v("0.6")));
  // Every version lies in exactly one of a tiling of the line.
  const std::vector<VersionRange> tiling = {range("<0.7"), range(">=0.7,<1.0rc0"), range(">=1.0rc0")};
  for (const char* s : {"0.5.0", "0.6.1", "0.7", "0.21.0", "1.0.0rc3", "1.0", "1.2.0rc6.post3"}) {
    int holding = 0;
    for (const auto& r : tiling) holding += r.contains(v(s)) ? 1 : 0;
    EXPECT_EQ(holding, 1) << s;
  }
}

TEST(VersionRange, RejectsMalformedClausesNamingThem) {
  for (const char* bad : {"1.0", ">=", ">=1.0,", "~=1.0", ">=1.0;<2", "=>1.0"}) {
    auto parsed = parse_version_range(bad);
    ASSERT_FALSE(parsed.has_value()) << bad;
    EXPECT_NE(parsed.error().find(bad), std::string::npos) << parsed.error();
  }
}
