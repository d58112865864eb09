// xpusim train --schedule: selection, the schedule stated in text and JSON, refusals (exit 2)
// that name the constraint and the values, unknown names with did-you-mean, the YAML key.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

using xpusim::test::run_cli;

namespace {
const std::string kDeepSeek =
    "train --system h800-sxm-dgx --model deepseek-v3 --chips 2048 --tp 1 --pp 16 --ep 64 "
    "--global-batch 15360 --seq-len 4096 --precision fp8 --framework deepseek ";
}

TEST(ScheduleCli, DualPipeOnDeepSeekV3HasASmallerBubbleThanOneFOneB) {
  auto dual = run_cli(kDeepSeek + "--schedule dualpipe --json");
  auto one = run_cli(kDeepSeek + "--schedule 1f1b --json");
  ASSERT_EQ(dual.exit_code, 0) << dual.err;
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto jd = nlohmann::json::parse(dual.out), j1 = nlohmann::json::parse(one.out);
  EXPECT_EQ(jd["schedule"], "dualpipe");
  EXPECT_EQ(j1["schedule"], "1f1b");
  EXPECT_LT(jd["breakdown_s"]["bubble"].get<double>(), j1["breakdown_s"]["bubble"].get<double>());
  // 61 layers over 16 stages: 3 on the first and last (with embedding and head), 4 in between.
  EXPECT_EQ(jd["stage_layers"].size(), 16u);
  EXPECT_EQ(jd["stage_layers"][0], 3);
  EXPECT_EQ(jd["stage_layers"][1], 4);
  auto text = run_cli(kDeepSeek + "--schedule dualpipe");
  EXPECT_NE(text.out.find("schedule: dualpipe; layers per stage 3+embedding"), std::string::npos) << text.out;
}

TEST(ScheduleCli, DefaultIsInterleavedForVppAboveOne) {
  auto r = run_cli("train --system h100-sxm-dgx --model llama3.1-70b --chips 64 --tp 8 --pp 4 --vpp 2 "
                   "--global-batch 32 --seq-len 4096 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["schedule"], "interleaved");
}

TEST(ScheduleCli, RefusalsAreExitTwoWithTheConstraint) {
  struct Case {
    std::string args, words;
  };
  for (const auto& c : std::vector<Case>{
           {"train --system h100-sxm-dgx --model llama3.1-70b --chips 64 --tp 8 --pp 4 --vpp 2 --global-batch 12 "
            "--seq-len 4096",
            "multiple of pp: 6 micro-batches, pp = 4"},
           {"train --system h800-sxm-dgx --model deepseek-v3 --chips 2048 --tp 1 --pp 16 --ep 64 --global-batch 2048 "
            "--seq-len 4096 --precision fp8 --schedule dualpipe",
            "at least 2·pp = 32, got 16"},
           {"train --system h100-sxm-dgx --model llama3.1-70b --chips 48 --tp 8 --pp 3 --global-batch 64 "
            "--seq-len 4096 --schedule dualpipe",
            "even number of pipeline stages, got pp = 3"},
           {"train --system h100-sxm-dgx --model llama3.1-70b --chips 64 --tp 8 --pp 4 --schedule dualpip", "dualpipe"},
       }) {
    auto r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << r.err;
  }
}

TEST(ScheduleCli, ScenarioPlanKeySelectsTheSchedule) {
  const std::string path = ::testing::TempDir() + "xs_schedule.yaml";
  {
    std::ofstream out(path);
    out << "system: h100-sxm-dgx\nmodel: llama3.1-70b\nchips: 64\nplan:\n  tp: 8\n  pp: 4\n  dp: 2\n"
           "  schedule: dualpipe\nworkload:\n  global_batch: 32\n  seq_len: 4096\n";
  }
  auto r = run_cli("train --scenario " + path + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["schedule"], "dualpipe");
  std::remove(path.c_str());
}
