// xpusim train at scale end to end (docs/scale.md): goodput in the JSON and the text, the seeded
// Monte Carlo, `--scaling` with its largest useful chip count re-derived from the curve, and
// one test per bad flag value (exit 2, the flag named).

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

using xpusim::test::run_cli;
using Json = nlohmann::json;

namespace {

const std::string kSmall = "train --system h100-sxm-dgx --model llama3.1-8b --chips 64 --tp 1 --pp 1 --seq-len 4096 ";

TEST(ScaleCli, GoodputInTrainJson) {
  const auto r = run_cli(kSmall + "--train-tokens 1e11 --runs 30 --seed 5 --spares 2 --pue 1.3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const Json& g = j["goodput"];
  for (const char* k : {"failures_per_day", "mtbf_s", "checkpoint_interval_s", "goodput_fraction",
                        "effective_tokens_per_s", "time_to_train_s"})
    EXPECT_TRUE(g.contains(k)) << k;
  // MTBF and failures per day describe the same rate; goodput in (0, 1].
  EXPECT_NEAR(g["mtbf_s"].get<double>() * g["failures_per_day"].get<double>(), 86400.0, 1e-6);
  EXPECT_GT(g["goodput_fraction"].get<double>(), 0.0);
  EXPECT_LE(g["goodput_fraction"].get<double>(), 1.0);
  EXPECT_NEAR(g["effective_tokens_per_s"].get<double>(),
              j["tokens_per_s"].get<double>() * g["goodput_fraction"].get<double>(), 1e-6 * j["tokens_per_s"].get<double>());
  EXPECT_NEAR(g["time_to_train_s"].get<double>(), 1e11 / g["effective_tokens_per_s"].get<double>(), 1e-3);
  EXPECT_EQ(g["monte_carlo"]["runs"].get<int>(), 30);
  EXPECT_LE(g["monte_carlo"]["time_to_train_p10_s"].get<double>(), g["monte_carlo"]["time_to_train_p90_s"].get<double>());
  EXPECT_DOUBLE_EQ(j["facility"]["pue"].get<double>(), 1.3);
  EXPECT_NEAR(j["facility"]["facility_power_mw"].get<double>(),
              j["power_per_chip_w"].get<double>() * 64 * 1.3 / 1e6, 1e-9);
  // Same seed, byte-identical document.
  EXPECT_EQ(run_cli(kSmall + "--train-tokens 1e11 --runs 30 --seed 5 --spares 2 --pue 1.3 --json").out, r.out);
}

TEST(ScaleCli, GoodputInText) {
  const auto r = run_cli(kSmall + "--train-tokens 1e11 --runs 10");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"failures", "Young-Daly", "goodput", "time to train with failures", "Monte Carlo (10 runs"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

TEST(ScaleCli, ScalingCurveAndLargestUsefulCount) {
  const auto r = run_cli("train --system h100-sxm-dgx --model llama3.1-8b --seq-len 4096 --scaling 8..128 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const Json& pts = j["scaling"];
  ASSERT_EQ(pts.size(), 5u);  // 8, 16, 32, 64, 128: whole 8-GPU nodes, doubling
  std::vector<long long> chips;
  std::vector<double> tput;
  for (const auto& p : pts) {
    ASSERT_TRUE(p["found"].get<bool>()) << p.dump();
    chips.push_back(p["chips"].get<long long>());
    tput.push_back(p["effective_tokens_per_s"].get<double>());
    EXPECT_EQ(p["plan"]["global_batch"].get<long long>() * 4096, 4194304) << "the critical batch at every count";
  }
  EXPECT_EQ(chips, (std::vector<long long>{8, 16, 32, 64, 128}));
  long long useful = chips.front();
  for (size_t i = 0; i + 1 < chips.size(); ++i)
    if (tput[i + 1] >= 1.5 * tput[i]) useful = chips[i];
  EXPECT_EQ(j["largest_useful_chips"].get<long long>(), useful);
  EXPECT_EQ(j["curve_flattened"].get<bool>(), tput[4] < 1.5 * tput[3]);
  const auto t = run_cli("train --system h100-sxm-dgx --model llama3.1-8b --seq-len 4096 --scaling 8..128");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("largest useful chip count: " + std::to_string(useful)), std::string::npos) << t.out;
}

struct BadFlag {
  const char* args;
  const char* flag;
};
class ScaleCliBadFlag : public ::testing::TestWithParam<BadFlag> {};

TEST_P(ScaleCliBadFlag, ExitsTwoNamingTheFlag) {
  const auto r = run_cli(kSmall + GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find(std::string("error: ") + GetParam().flag + ":"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Flags, ScaleCliBadFlag,
    ::testing::Values(BadFlag{"--checkpoint-tier nvme", "--checkpoint-tier"}, BadFlag{"--spares -1", "--spares"},
                      BadFlag{"--checkpoint-interval 0", "--checkpoint-interval"}, BadFlag{"--pue 1", "--pue"},
                      BadFlag{"--pue 3.5", "--pue"}, BadFlag{"--runs 10", "--runs"},
                      BadFlag{"--train-tokens 1e9 --runs 0", "--runs"}, BadFlag{"--scaling 64..8", "--scaling"},
                      BadFlag{"--scaling 8-64", "--scaling"}, BadFlag{"--max-global-batch-tokens 0", "--max-global-batch-tokens"},
                      BadFlag{"--max-global-batch-tokens nan", "--max-global-batch-tokens"},
                      BadFlag{"--max-global-batch-tokens 4e6 --global-batch 64", "--max-global-batch-tokens"},
                      BadFlag{"--straggler 0.5", "--straggler"}, BadFlag{"--straggler 1000", "--straggler"},
                      BadFlag{"--straggler 1.3 --executor analytical", "--straggler"},
                      BadFlag{"--straggler-stage 0", "--straggler-stage"},
                      BadFlag{"--straggler 1.3 --straggler-stage 1", "--straggler-stage"}));

// A straggling chip: the JSON states the nominal and the slowed step; the slowed one is what the
// run reports, and goodput's effective throughput follows it.
TEST(ScaleCli, StragglingChipIsReportedBesideTheNominalStep) {
  const auto base = run_cli(kSmall + "--json");
  const auto slow = run_cli(kSmall + "--straggler 1.5 --json");
  ASSERT_EQ(base.exit_code, 0) << base.err;
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  const Json b = Json::parse(base.out), j = Json::parse(slow.out);
  ASSERT_FALSE(b["goodput"].contains("straggling_replica"));
  const Json& st = j["goodput"]["straggling_replica"];
  EXPECT_DOUBLE_EQ(st["nominal_step_time_s"].get<double>(), b["step_time_s"].get<double>());
  EXPECT_DOUBLE_EQ(st["step_time_s"].get<double>(), j["step_time_s"].get<double>());
  EXPECT_GT(st["step_slowdown_ratio"].get<double>(), 1.0);
  EXPECT_LE(st["step_slowdown_ratio"].get<double>(), 1.5);
  EXPECT_EQ(st["stage"], 0);
  EXPECT_LT(j["goodput"]["effective_tokens_per_s"].get<double>(), b["goodput"]["effective_tokens_per_s"].get<double>());
}

// Batch-limited planning: the plan search never exceeds the batch bound (the critical batch of
// 16M tokens for a 405B model, or --max-global-batch-tokens), and employs context parallelism
// when tensor parallelism inside a Trn3 UltraServer (at most 16 of its 144 chips divide it)
// cannot: 36,864 chips / tp 16 = 2,304 replicas, more than the 2,048 sequences of 16M tokens.
const std::string kTrn3 = "train --system trn3-ultraserver-gen2 --model llama3.1-405b --seq-len 8192 --json ";

Json plan_at(const std::string& args) {
  const auto r = run_cli(kTrn3 + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? Json::parse(r.out)["plan"] : Json();
}

TEST(ScaleCli, SearchKeepsTheCriticalBatchWithContextParallelism) {
  const Json p = plan_at("--chips 36864");
  ASSERT_FALSE(p.is_null());
  EXPECT_LE(p["global_batch"].get<long long>() * 8192, 16777216LL);
  EXPECT_GE(p["cp"].get<int>(), 2);
  EXPECT_EQ(p["tp"].get<long long>() * p["pp"].get<long long>() * p["cp"].get<long long>() * p["dp"].get<long long>(),
            36864);
}

TEST(ScaleCli, MaxGlobalBatchTokensBoundsTheSearch) {
  for (double bound : {2097152.0, 4194304.0}) {
    const Json p = plan_at("--chips 1152 --max-global-batch-tokens " + std::to_string(static_cast<long long>(bound)));
    ASSERT_FALSE(p.is_null());
    EXPECT_LE(static_cast<double>(p["global_batch"].get<long long>() * 8192), bound);
    // The largest batch within the bound: one more micro-batch per data-parallel rank exceeds it.
    const long long unit = p["dp"].get<long long>() * p["micro_batch"].get<long long>();
    EXPECT_GT(static_cast<double>((p["global_batch"].get<long long>() + unit) * 8192), bound);
  }
}

// At 1M chips no layout stays within 16M tokens (every replica needs a sequence: at most
// tp 16 x cp 8 x 2,048 sequences = 262,144 chips). The error says so and names the most chips a
// plan employs at this batch, in whole UltraServers, which then runs within the bound.
TEST(ScaleCli, MillionChipsAtTheCriticalBatchNameTheMostChipsThatCanBeEmployed) {
  const auto r = run_cli(kTrn3 + "--chips 1048576");
  EXPECT_EQ(r.exit_code, 2);
  const std::string key = "the most chips a plan employs at this batch is ";
  const auto at = r.err.find(key);
  ASSERT_NE(at, std::string::npos) << r.err;
  std::string digits;
  for (char c : r.err.substr(at + key.size())) {
    if (c == ',') continue;
    if (c < '0' || c > '9') break;
    digits += c;
  }
  const long long most = std::stoll(digits);
  EXPECT_LE(most, 262144);
  EXPECT_EQ(most % 144, 0);
  const Json p = plan_at("--chips " + std::to_string(most));
  ASSERT_FALSE(p.is_null());
  EXPECT_LE(p["global_batch"].get<long long>() * 8192, 16777216LL);
  // One more UltraServer has no plan within the batch.
  EXPECT_EQ(run_cli(kTrn3 + "--chips " + std::to_string(most + 144)).exit_code, 2);
}

// The deadline and budget solvers (scenario/solver.h): the answer re-checked against the counts
// tried, monotone in the target, infeasible targets exit 1 with the best achievable.
const std::string kSolver = "train --system h100-sxm-dgx --model llama3.1-8b --seq-len 4096 --train-tokens 2e12 ";

Json solver_json(const std::string& target) {
  const auto r = run_cli(kSolver + target + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Json::parse(r.out);
}

TEST(ScaleCli, DeadlineGivesTheFewestChipsThatFinishWithFailures) {
  const Json j = solver_json("--deadline 10d");
  const Json& s = j["solver"];
  EXPECT_EQ(s["kind"], "deadline");
  EXPECT_DOUBLE_EQ(s["deadline_s"].get<double>(), 10 * 86400.0);
  ASSERT_TRUE(s["met"].get<bool>());
  const long long chips = s["chips"].get<long long>();
  EXPECT_EQ(j["chips"].get<long long>(), chips);
  EXPECT_EQ(s["plan"], j["plan"]);
  // The time with failures is the goodput's, within the deadline; every count tried that meets it
  // has at least as many chips, every smaller one misses it.
  EXPECT_DOUBLE_EQ(s["time_to_train_s"].get<double>(), j["goodput"]["time_to_train_s"].get<double>());
  EXPECT_LE(s["time_to_train_s"].get<double>(), 10 * 86400.0);
  EXPECT_GT(s["time_to_train_s"].get<double>(), j["time_to_train_s"].get<double>()) << "failures cost time";
  bool answer_tried = false;
  for (const auto& t : s["tried"]) {
    const bool meets = t["outcome"] == "meets deadline";
    if (t["outcome"] != "no plan") {
      EXPECT_EQ(meets, t["time_to_train_s"].get<double>() <= 10 * 86400.0) << t.dump();
    }
    if (meets) {
      EXPECT_GE(t["chips"].get<long long>(), chips);
    }
    answer_tried |= t["chips"].get<long long>() == chips && meets;
  }
  EXPECT_TRUE(answer_tried);
  EXPECT_EQ(j["inputs"]["workload"]["deadline"], "10d");
}

TEST(ScaleCli, LooserDeadlineNeverNeedsMoreChips) {
  long long chips = 1LL << 62;
  for (const char* d : {"--deadline 4d", "--deadline 240h", "--deadline 3.5e6s"}) {
    const long long c = solver_json(d)["solver"]["chips"].get<long long>();
    EXPECT_LE(c, chips) << d;
    chips = c;
  }
}

TEST(ScaleCli, BudgetGivesTheFastestRunWithinTheMoney) {
  double time = 1e300;
  for (const char* b : {"--budget 3.4e5", "--budget 4e5", "--budget 1e6"}) {
    const Json s = solver_json(b)["solver"];
    ASSERT_TRUE(s["met"].get<bool>()) << b;
    EXPECT_LE(s["cost_usd"].get<double>(), std::stod(std::string(b).substr(9))) << b;
    // No count tried within the money is faster.
    for (const auto& t : s["tried"]) {
      if (t["outcome"] == "within budget") {
        EXPECT_GE(t["time_to_train_s"].get<double>(), s["time_to_train_s"].get<double>()) << t.dump();
      }
    }
    EXPECT_LE(s["time_to_train_s"].get<double>(), time) << b << ": a larger budget is never slower";
    time = s["time_to_train_s"].get<double>();
  }
}

TEST(ScaleCli, UnreachableDeadlineExitsOneWithTheBestAchievable) {
  const auto r = run_cli(kSolver + "--deadline 1h --json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("infeasible: no chip count"), std::string::npos) << r.err;
  const Json s = Json::parse(r.out)["solver"];
  EXPECT_FALSE(s["met"].get<bool>());
  for (const auto& t : s["tried"]) {
    if (t.contains("time_to_train_s")) {
      EXPECT_GE(t["time_to_train_s"].get<double>(), s["time_to_train_s"].get<double>()) << "the fastest tried";
    }
  }
  const auto text = run_cli(kSolver + "--deadline 1h");
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.out.find("infeasible: no count meets the deadline; best achievable: "), std::string::npos) << text.out;
}

class SolverCliBadFlag : public ::testing::TestWithParam<BadFlag> {};

TEST_P(SolverCliBadFlag, ExitsTwoNamingTheFlag) {
  const auto r = run_cli("train --system h100-sxm-dgx --model llama3.1-8b " + std::string(GetParam().args));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find(std::string("error: ") + GetParam().flag + ":"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Flags, SolverCliBadFlag,
    ::testing::Values(BadFlag{"--train-tokens 1e12 --deadline 30", "--deadline"},
                      BadFlag{"--train-tokens 1e12 --deadline 30W", "--deadline"},
                      BadFlag{"--train-tokens 1e12 --deadline -2d", "--deadline"},
                      BadFlag{"--deadline 30d", "--deadline"}, BadFlag{"--budget 1e6", "--budget"},
                      BadFlag{"--train-tokens 1e12 --budget 0", "--budget"},
                      BadFlag{"--train-tokens 1e12 --deadline 30d --budget 1e6", "--budget"},
                      BadFlag{"--train-tokens 1e12 --deadline 30d --chips 64", "--chips"},
                      BadFlag{"--train-tokens 1e12 --deadline 30d --scaling 8..64", "--scaling"}));

}  // namespace

// With --train-tokens the scaling curve gives each count its time to train (failures included):
// the tokens over that count's effective throughput. --chips (the range chooses the counts) and
// --trace (a single step) exit 2 rather than being dropped.
TEST(ScaleCli, ScalingWithTrainTokensGivesEachCountItsTimeToTrain) {
  const std::string scaling = "train --system h100-sxm-dgx --model llama3.1-8b --seq-len 4096 --scaling 8..32 ";
  const auto r = run_cli(scaling + "--train-tokens 1e11 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int found = 0;
  const Json j = Json::parse(r.out);
  for (const auto& p : j["scaling"]) {
    if (!p["found"].get<bool>()) continue;
    ++found;
    EXPECT_NEAR(p["time_to_train_s"].get<double>(), 1e11 / p["effective_tokens_per_s"].get<double>(),
                1e-9 * p["time_to_train_s"].get<double>());
  }
  EXPECT_EQ(found, 3);
  EXPECT_NE(run_cli(scaling + "--train-tokens 1e11").out.find("days"), std::string::npos);
  EXPECT_EQ(run_cli(scaling).out.find("days"), std::string::npos);
  for (const auto& [args, flag] : {std::pair{"--chips 64", "error: --chips: the scaling range chooses the chip counts"},
                                   std::pair{"--trace t.json", "error: --trace: not available with --scaling"}}) {
    const auto bad = run_cli(scaling + args);
    EXPECT_EQ(bad.exit_code, 2) << args;
    EXPECT_NE(bad.err.find(flag), std::string::npos) << bad.err;
  }
}

namespace {

// One cost path (issue 45, cases 2 and 3): the cost to train is the price per chip-hour × the
// chips × the time with failures the report prints, in the JSON, in the text, in the solver's
// table and in the report under it.
TEST(ScaleCli, CostToTrainIsPriceTimesChipsTimesTheTimeWithFailures) {
  const auto r = run_cli(kSmall + "--train-tokens 1e11 --runs 30 --seed 5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const Json& basis = j["cost_basis"];
  const double with_failures_s = j["goodput"]["time_to_train_s"].get<double>();
  EXPECT_GT(with_failures_s, j["time_to_train_s"].get<double>()) << "failures cost time";
  EXPECT_DOUBLE_EQ(basis["billed_time_s"].get<double>(), with_failures_s);
  EXPECT_EQ(basis["chips"].get<long long>(), 64);
  const double price = basis["price_usd_per_chip_hour"].get<double>();
  EXPECT_GT(price, 0.0);
  EXPECT_NEAR(j["cost_to_train_usd"].get<double>(), price * 64 * with_failures_s / 3600.0,
              1e-9 * j["cost_to_train_usd"].get<double>());
  // Each Monte Carlo percentile of the time is costed the same way.
  const Json& mc = j["goodput"]["monte_carlo"];
  for (const char* p : {"p10", "p50", "p90"}) {
    const double t = mc["time_to_train_" + std::string(p) + "_s"].get<double>();
    EXPECT_NEAR(basis["monte_carlo_cost_usd"][p].get<double>(), price * 64 * t / 3600.0, 1e-6) << p;
  }
  // The text states the same product.
  const auto text = run_cli(kSmall + "--train-tokens 1e11");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(" x 64 chips x "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" days with failures\n"), std::string::npos) << text.out;
}

TEST(ScaleCli, TheSolverAndItsReportStateOneCost) {
  const Json j = solver_json("--deadline 10d");
  ASSERT_TRUE(j["solver"]["met"].get<bool>());
  EXPECT_DOUBLE_EQ(j["solver"]["cost_usd"].get<double>(), j["cost_to_train_usd"].get<double>());
  EXPECT_DOUBLE_EQ(j["cost_basis"]["billed_time_s"].get<double>(), j["solver"]["time_to_train_s"].get<double>());
}

}  // namespace

// A range no count of which the fixed batch can use: every count is listed with its reason and the
// run ends as infeasible (exit 1), not with the last count's error alone (issue 45 case 9).
TEST(ScalingCli, ARangeTheBatchCannotUseListsEveryCountsReason) {
  auto r = xpusim::test::run_cli("train --system trn3-ultraserver-gen2 --model llama3.1-405b --seq-len 8192 "
                                 "--global-batch 2048 --scaling 1024..4096 --json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_GE(j["scaling"].size(), 3u);
  for (const auto& p : j["scaling"]) {
    EXPECT_FALSE(p["found"].get<bool>());
    EXPECT_NE(p["reason"].get<std::string>().find("global batch of 2048"), std::string::npos) << p.dump();
  }
  EXPECT_EQ(j["largest_useful_chips"], 0);
}
