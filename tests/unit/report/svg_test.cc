// The SVG chart toolkit of the HTML reports (report/svg.h): ticks, scales, escaping, and the
// structure of each chart kind.

#include "xpusim/report/svg.h"

#include <gtest/gtest.h>

#include <cmath>

#include "xpusim/report/html.h"

namespace xpusim::report::svg {
namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(SvgEscape, EveryMarkupCharacter) {
  EXPECT_EQ(escape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
  EXPECT_EQ(escape("plain text 1.5 µs"), "plain text 1.5 µs");
  EXPECT_EQ(escape(""), "");
}

TEST(SvgEscape, UserTextNeverBecomesMarkup) {
  const std::string evil = "</title><script>alert(1)</script>\" onload=\"x";
  Chart c(evil, evil, {evil, 1, 10, false}, {evil, 1, 10, true});
  c.line({{1, 1}, {10, 10}}, 0, evil);
  c.scatter({{2, 3, 1, 5, evil}}, 1, evil);
  const std::string out = c.render();
  EXPECT_EQ(out.find("<script"), std::string::npos);
  EXPECT_EQ(out.find("onload=\"x"), std::string::npos);
  const std::string page = html::page(evil, evil, evil, report::Provenance{evil, evil, {}}, html::table(evil, {evil}, {{evil}}));
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("onload=\"x"), std::string::npos);
}

TEST(SvgNum, TwoDecimalsNoTrailingZerosNoNegativeZero) {
  EXPECT_EQ(num(1.0), "1");
  EXPECT_EQ(num(2.5), "2.5");
  EXPECT_EQ(num(3.14159), "3.14");
  EXPECT_EQ(num(-0.001), "0");
  EXPECT_EQ(num(100.0), "100");
  EXPECT_EQ(num(std::nan("")), "0");
}

TEST(SvgTickLabel, SignificantDigitsAndSuffixes) {
  EXPECT_EQ(tick_label(0), "0");
  EXPECT_EQ(tick_label(0.25), "0.25");
  EXPECT_EQ(tick_label(1500), "1500");
  EXPECT_EQ(tick_label(25000), "25k");
  EXPECT_EQ(tick_label(3e6), "3M");
  EXPECT_EQ(tick_label(1.2e12), "1.2T");
}

struct LinearCase {
  double lo, hi;
  std::vector<double> ticks;
};

TEST(SvgTicks, LinearNiceSteps) {
  // Step = 1, 2 or 5 × 10^k nearest above (hi − lo) / 5; first ≤ lo, last ≥ hi.
  const std::vector<LinearCase> cases = {
      {0, 1, {0, 0.2, 0.4, 0.6, 0.8, 1}},
      {0, 10, {0, 2, 4, 6, 8, 10}},
      {3, 97, {0, 20, 40, 60, 80, 100}},
      {0, 7, {0, 2, 4, 6, 8}},
      {-5, 5, {-6, -4, -2, 0, 2, 4, 6}},
      {0.012, 0.018, {0.012, 0.014, 0.016, 0.018}},
  };
  for (const auto& c : cases) {
    const auto t = linear_ticks(c.lo, c.hi);
    ASSERT_EQ(t.size(), c.ticks.size()) << c.lo << ".." << c.hi;
    for (size_t i = 0; i < t.size(); ++i) EXPECT_NEAR(t[i], c.ticks[i], 1e-12) << c.lo << ".." << c.hi;
  }
}

TEST(SvgTicks, LinearDegenerateRangeStillHasTicks) {
  const auto t = linear_ticks(5, 5);
  ASSERT_GE(t.size(), 2u);
  EXPECT_LE(t.front(), 5);
  EXPECT_GE(t.back(), 5);
  EXPECT_GE(linear_ticks(0, 0).size(), 2u);
}

TEST(SvgTicks, LogPowersOfTenOrOneTwoFive) {
  EXPECT_EQ(log_ticks(3, 4000), (std::vector<double>{1, 10, 100, 1000, 10000}));
  EXPECT_EQ(log_ticks(0.05, 0.5), (std::vector<double>{0.01, 0.1, 1}));
  // Within a single decade: 1-2-5 steps, from the last at or below lo to the first at or above hi.
  EXPECT_EQ(log_ticks(25, 45), (std::vector<double>{20, 50}));
  EXPECT_EQ(log_ticks(11, 90), (std::vector<double>{10, 20, 50, 100}));
}

TEST(SvgScale, LinearAndLogMapping) {
  const Scale lin{0, 10, 100, 200, false};
  EXPECT_DOUBLE_EQ(lin(0), 100);
  EXPECT_DOUBLE_EQ(lin(5), 150);
  EXPECT_DOUBLE_EQ(lin(10), 200);
  const Scale lg{1, 1000, 0, 300, true};
  EXPECT_NEAR(lg(1), 0, 1e-9);
  EXPECT_NEAR(lg(10), 100, 1e-9);
  EXPECT_NEAR(lg(100), 200, 1e-9);
  // An inverted pixel range (y grows downward).
  const Scale y{0, 1, 300, 20, false};
  EXPECT_DOUBLE_EQ(y(1), 20);
}

TEST(SvgChart, HasIdAxesSeriesAndLegend) {
  Chart c("latency-cdf", "Latency", {"ms", 0, 10, false}, {"fraction", 0, 1, false});
  c.line({{0, 0}, {5, 0.5}, {10, 1}}, 0, "TTFT");
  c.scatter({{5, 0.5, 0.4, 0.6, "p50"}}, 1, "points");
  const std::string s = c.render();
  EXPECT_NE(s.find("<svg class=\"chart\" data-chart=\"latency-cdf\""), std::string::npos);
  EXPECT_EQ(count(s, "<path class=\"series\""), 1);
  EXPECT_EQ(count(s, "<circle"), 1);
  EXPECT_EQ(count(s, "class=\"errorbar\""), 1);
  EXPECT_EQ(count(s, "class=\"legend\""), 2);
  EXPECT_EQ(s.substr(s.size() - 7), "</svg>\n");
  // Deterministic: the same chart twice gives the same bytes.
  Chart d("latency-cdf", "Latency", {"ms", 0, 10, false}, {"fraction", 0, 1, false});
  d.line({{0, 0}, {5, 0.5}, {10, 1}}, 0, "TTFT");
  d.scatter({{5, 0.5, 0.4, 0.6, "p50"}}, 1, "points");
  EXPECT_EQ(s, d.render());
}

TEST(SvgStackedBars, OneRectPerPositiveSegmentAndTheLimit) {
  StackedBars b{"memory", "Memory", "GiB", {"chip"}, {{"weights", {10}}, {"grads", {0}}, {"acts", {20}}}, 144, "HBM"};
  const std::string s = render(b);
  EXPECT_EQ(count(s, "<rect"), 2);
  EXPECT_EQ(count(s, "class=\"limit\""), 1);
  EXPECT_NE(s.find("data-chart=\"memory\""), std::string::npos);
}

TEST(SvgTimeline, LanesAndSpans) {
  Timeline t{"step-timeline", "Step", "ms", {"stage 0", "stage 1"}, {{0, 0, 1, 0, "F"}, {1, 1, 2, 1, "B"}}, {}};
  const std::string s = render(t);
  EXPECT_EQ(count(s, "<rect"), 2);
  EXPECT_NE(s.find(">stage 1<"), std::string::npos);
}

TEST(SvgRangeChart, RangeAndDotsPerRow) {
  RangeChart r{"claims", "Claims", "ratio", false, {{"a", 2, 4, {{3, 0}, {4.4, 1}}, "tip"}}, {}, 1};
  const std::string s = render(r);
  EXPECT_EQ(count(s, "class=\"range\""), 1);
  EXPECT_EQ(count(s, "<circle"), 2);
}

}  // namespace
}  // namespace xpusim::report::svg
