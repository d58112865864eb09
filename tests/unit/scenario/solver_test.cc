// The deadline and budget solvers' logic (scenario/solver.h) on a synthetic run whose answer
// follows in closed form: time to train T(c) = 1e6 / c^0.9 s, cost = c·T(c) USD (rising as
// c^0.1), whole domains of 144 chips, and no plan below 64 chips.

#include "xpusim/scenario/solver.h"

#include <gtest/gtest.h>

#include <cmath>

namespace xpusim::scenario {
namespace {

constexpr long long kDomain = 144;
const std::vector<long long> kCounts = {16, 32, 64, 128, 288, 576, 1152, 2304, 4608, 9216, 18432, 36864};

double time_at(long long c) { return 1e6 / std::pow(static_cast<double>(c), 0.9); }

SolverProbe synthetic(long long chips) {
  SolverProbe p;
  p.found = chips >= 64;
  if (!p.found) {
    p.note = "no plan fits";
    return p;
  }
  p.time_to_train_s = time_at(chips);
  p.cost_usd = static_cast<double>(chips) * p.time_to_train_s;
  return p;
}

TEST(Solver, DeadlineGivesTheFewestWholeDomainsThatMeetIt) {
  // T(c) ≤ D ⇔ c ≥ (1e6/D)^(1/0.9): with D = T(1000) the fewest whole domains are ⌈1000/144⌉.
  const SolverChoice c = solve_deadline(kCounts, kDomain, time_at(1000), synthetic);
  ASSERT_TRUE(c.met);
  EXPECT_EQ(c.chips, 7 * kDomain);
  // Ascending up to the first count that meets (1152), then the bisection between 576 and 1152.
  EXPECT_EQ(c.tried.size(), 7u + 2u);
  EXPECT_FALSE(c.tried.front().found);
  for (const auto& p : c.tried) EXPECT_EQ(p.meets, p.found && p.chips >= 1000) << p.chips;
}

TEST(Solver, DeadlineNoneMeetsGivesTheFastest) {
  const SolverChoice c = solve_deadline(kCounts, kDomain, time_at(100000), synthetic);
  EXPECT_FALSE(c.met);
  EXPECT_EQ(c.chips, kCounts.back());
  EXPECT_EQ(c.tried.size(), kCounts.size());
}

TEST(Solver, BudgetGivesTheFastestAffordableWholeDomains) {
  // cost(c) = 1e6·c^0.1 ≤ B ⇔ c ≤ (B/1e6)^10: with B = cost(5000) the most whole domains ⌊5000/144⌋.
  const double budget = 5000.0 * time_at(5000);
  const SolverChoice c = solve_budget(kCounts, kDomain, budget, synthetic);
  ASSERT_TRUE(c.met);
  EXPECT_EQ(c.chips, 5000 / kDomain * kDomain);
  for (const auto& p : c.tried) EXPECT_EQ(p.meets, p.found && p.chips <= 5000) << p.chips;
}

TEST(Solver, BudgetNoneAffordableGivesTheCheapest) {
  const SolverChoice c = solve_budget(kCounts, kDomain, 1.0, synthetic);
  EXPECT_FALSE(c.met);
  EXPECT_EQ(c.chips, 64);  // the cost rises with chips; 64 is the first count with a plan
}

TEST(Solver, LooserDeadlineNeverNeedsMoreChipsLargerBudgetNeverSlower) {
  long long chips = 1LL << 62;
  for (double d = time_at(30000); d < time_at(64); d *= 1.37) {
    const SolverChoice c = solve_deadline(kCounts, kDomain, d, synthetic);
    ASSERT_TRUE(c.met) << d;
    EXPECT_LE(c.chips, chips) << d;
    chips = c.chips;
  }
  double time = 1e300;
  for (double b = 64.0 * time_at(64); b < 40000.0 * time_at(40000); b *= 1.21) {
    const SolverChoice c = solve_budget(kCounts, kDomain, b, synthetic);
    ASSERT_TRUE(c.met) << b;
    EXPECT_LE(time_at(c.chips), time) << b;
    time = time_at(c.chips);
  }
}

}  // namespace
}  // namespace xpusim::scenario
