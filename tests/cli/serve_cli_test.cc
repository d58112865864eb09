#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

using xpusim::test::run_cli;

TEST(ServeCli, JsonHasUnitsInKeysAndOneDocument) {
  auto r = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --precision fp8 --rate 5 --requests 200 "
                   "--in-len 512 --out-len 64 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"ttft_ms_p50", "tpot_ms_mean", "throughput_tokens_per_s", "e2e_latency_s_p99",
                        "energy_j_per_output_token", "cost_dollars_per_million_output_tokens", "timed_out_requests"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["requests"], 200);
}

TEST(ServeCli, TpNotDividingHeadsIsBadInput) {
  auto r = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --tp 3 --chips 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tp must divide the attention heads"), std::string::npos) << r.err;
}

TEST(ServeCli, UnknownModelSuggestsClosest) {
  auto r = run_cli("serve --system h100-sxm-dgx --model llama3.1-8c");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("llama3.1-8b"), std::string::npos) << r.err;
}

TEST(ServeCli, ModelThatDoesNotFitExits1WithMemoryBreakdown) {
  auto r = run_cli("serve --system h100-sxm-dgx --model llama3.1-405b --tp 1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("weights"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GiB"), std::string::npos) << r.err;
}

TEST(ServeCli, ScenarioFileRuns) {
  auto r = run_cli("serve --config " + xpusim::test::data_dir() +
                   "/scenarios/serve-trn3-llama70b.yaml --requests 500");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("TTFT"), std::string::npos);
}

TEST(ServeCli, CompareListsTheThreeSystems) {
  auto r = run_cli("serve --compare --model llama3.1-8b --precision fp8 --rate 5 --requests 200 --in-len 512 --out-len 128");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"trn3-ultraserver-gen2", "trn2-ultraserver", "gb300-nvl72"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}
