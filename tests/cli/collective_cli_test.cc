// xpusim collective end to end: the closed forms of docs/network.md on catalog systems, the
// nccl-tests bandwidth conventions, and every diagnostic.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

using xpusim::test::run_cli;

namespace {

nlohmann::json collective(const std::string& args) {
  auto r = run_cli("collective " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(CollectiveCli, OneShotAllReduceOnAnNvSwitchNode) {
  // h100-sxm-dgx: 8 GPUs on NVSwitch, 900 GB/s both ways per GPU × NVLink efficiency 0.80 =
  // B = 360 GB/s one way. One-shot all-reduce (docs/network.md, `direct`): 2(n−1)/n·S/B + 2α.
  const double S = 1073741824.0, B = 450e9 * 0.80, n = 8;
  const auto j = collective("--system h100-sxm-dgx --chips 8 --op all-reduce --bytes '1 GiB'");
  const double bandwidth_time = j["time_s"].get<double>() - j["latency_s"].get<double>();
  EXPECT_NEAR(bandwidth_time, 2 * (n - 1) / n * S / B, 1e-9);
  // nccl-tests: algbw = S / t, busbw = algbw · 2(n−1)/n.
  EXPECT_NEAR(j["algbw_gb_s"].get<double>(), S / j["time_s"].get<double>() / 1e9, 1e-9);
  EXPECT_NEAR(j["busbw_gb_s"].get<double>(), j["algbw_gb_s"].get<double>() * 2 * (n - 1) / n, 1e-9);
  EXPECT_EQ(j["inputs"]["bytes"].get<long long>(), 1073741824LL);
}

TEST(CollectiveCli, AllToAllOnTheTrn2TorusIsBisectionBound) {
  // trn2-ultraserver, 16 chips = one 4×4 NeuronLink torus: 1,024 GB/s both ways per chip ×
  // efficiency 0.75 = B = 384 GB/s one way, 4 links of B/4 = 96 GB/s. The cut across one
  // sub-dim crosses 4 rings at 2 places (8 links) and carries 16·S/4 = 4S:
  // t = 4S / (8 · 96 GB/s) = S / 192 GB/s for the share S·15/16 the rank sends.
  const double S = 1073741824.0;
  const auto j = collective("--system trn2-ultraserver --chips 16 --op all-to-all --bytes 1073741824");
  EXPECT_EQ(j["algorithm"].get<std::string>(), "direct");
  EXPECT_NEAR(j["time_s"].get<double>() - j["latency_s"].get<double>(), S / 192e9, 1e-9);
  EXPECT_NEAR(j["busbw_gb_s"].get<double>(), j["algbw_gb_s"].get<double>() * 15.0 / 16.0, 1e-9);
}

TEST(CollectiveCli, NamedAlgorithmIsUsedAndTextNamesIt) {
  auto r = run_cli("collective --system h100-sxm-dgx --chips 8 --op all-gather --bytes 1048576 --algorithm ring");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("algorithm ring"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("busbw"), std::string::npos);
}

struct BadCase {
  const char* args;
  const char* field;
  const char* words;
};

TEST(CollectiveCli, BadInputNamesTheFieldAndExitsTwo) {
  const BadCase cases[] = {
      {"--system h100-sxm-dgx --chips 8 --op all-too-all --bytes 1", "--op", "did you mean 'all-to-all'"},
      {"--system h100-sxm-dgx --chips 8 --op all-reduce --bytes 0", "--bytes", "at least 1 byte"},
      {"--system h100-sxm-dgx --chips 8 --op all-reduce --bytes '5 parsecs'", "--bytes", "5 parsecs"},
      {"--system h100-sxm-dgx --chips 1 --op all-reduce --bytes 1", "--chips", "at least 2"},
      {"--system h100-sxm-dgxx --chips 8 --op all-reduce --bytes 1", "--system", "h100-sxm-dgx"},
      {"--system h100-sxm-dgx --chips 8 --op all-to-all --bytes 1 --algorithm tree", "algorithm", "does not apply"},
  };
  for (const BadCase& c : cases) {
    auto r = run_cli(std::string("collective ") + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_NE(r.err.find(c.field), std::string::npos) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << c.args << ": " << r.err;
  }
}

}  // namespace
