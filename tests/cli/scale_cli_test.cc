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
                      BadFlag{"--scaling 8-64", "--scaling"}));

}  // namespace
