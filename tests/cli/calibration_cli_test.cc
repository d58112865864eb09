// xpusim calibration show and --calibration FILE on train, serve, validate.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

using xpusim::test::run_cli;

namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

double shipped_value(const nlohmann::json& show, const std::string& key) {
  for (const auto& p : show["parameters"])
    if (p["key"] == key) return std::stod(p["value"].get<std::string>());
  ADD_FAILURE() << "no parameter " << key;
  return 0;
}

TEST(CalibrationCli, ShowJsonListsEveryParameterWithBasis) {
  auto r = run_cli("calibration show --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_GT(j["parameters"].size(), 100u);
  for (const auto& p : j["parameters"]) {
    const std::string key = p["key"];
    EXPECT_FALSE(p["value"].get<std::string>().empty()) << key;
    EXPECT_FALSE(p["unit"].get<std::string>().empty()) << key;
    EXPECT_FALSE(p["meaning"].get<std::string>().empty()) << key;
    EXPECT_FALSE(p["basis"].get<std::string>().empty()) << key;
    EXPECT_TRUE(p["kind"] == "fitted" || p["kind"] == "assumed") << key;
    EXPECT_TRUE(p["range"].is_null() || p["range"].size() == 2) << key;
  }
}

TEST(CalibrationCli, ShowReflectsAnOverride) {
  const std::string f = write_file("xs_cal_show.yaml", "network:\n  nvlink_efficiency: \"0.5\"\n");
  auto r = run_cli("calibration show --json --calibration " + f);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(shipped_value(j, "network.nvlink_efficiency"), 0.5);
}

TEST(CalibrationCli, UnknownKeyIsBadInputWithSuggestion) {
  const std::string f = write_file("xs_cal_typo.yaml", "compute:\n  nvidia-hopper:\n    gemm_eficiency: \"0.5\"\n");
  auto r = run_cli("train --system h100-sxm-dgx --model llama3.1-8b --chips 8 --calibration " + f);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("compute.nvidia-hopper.gemm_eficiency"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gemm_efficiency"), std::string::npos) << r.err;
}

TEST(CalibrationCli, WrongUnitIsBadInput) {
  const std::string f = write_file("xs_cal_unit.yaml", "network:\n  switch_hop_latency: \"0.5\"\n");
  auto r = run_cli("calibration show --calibration " + f);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("network.switch_hop_latency"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a time"), std::string::npos) << r.err;
}

// Halving the Hopper GEMM efficiency on a compute-bound plan (dp only: no TP/PP communication,
// gradient reduction overlapped) doubles the time of every GEMM: the compute part of the step
// grows by the GEMM share, so the step time grows by a factor in (1, 2], and the GEMM time
// itself (compute minus the non-GEMM operators, which keep their time) doubles exactly.
TEST(CalibrationCli, HalvingGemmEfficiencySlowsTrainingByTheGemmShare) {
  const std::string base = "train --system h100-sxm-dgx --model llama3.1-8b --chips 8 --tp 1 --pp 1 "
                           "--global-batch 64 --seq-len 4096 --recompute none --json";
  auto show = nlohmann::json::parse(run_cli("calibration show --json").out);
  const double e = shipped_value(show, "compute.nvidia-hopper.gemm_efficiency");
  const std::string half = write_file("xs_cal_gemm.yaml", "compute:\n  nvidia-hopper:\n    gemm_efficiency: \"" +
                                                              std::to_string(e / 2) + "\"\n");
  auto a = run_cli(base), b = run_cli(base + " --calibration " + half);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  const double ta = ja["step_time_s"], tb = jb["step_time_s"];
  EXPECT_GT(tb, ta * 1.3);   // GEMMs dominate an 8B dense step
  EXPECT_LE(tb, ta * 2.0 + 1e-9);
}

// Halving the serving HBM efficiency on a decode-bound load (batch 1, long output) roughly
// doubles the time per output token: decode streams the weights once per token.
TEST(CalibrationCli, HalvingServingHbmEfficiencySlowsDecode) {
  const std::string base = "serve --system h100-sxm-dgx --model llama3.1-8b --concurrency 1 --in-len 128 "
                           "--out-len 256 --requests 4 --json";
  const std::string half = write_file("xs_cal_hbm.yaml", "serving:\n  kernels:\n    nvidia-hopper:\n"
                                                         "      hbm_efficiency: \"0.392\"\n");
  auto show = nlohmann::json::parse(run_cli("calibration show --json").out);
  ASSERT_DOUBLE_EQ(shipped_value(show, "serving.kernels.nvidia-hopper.hbm_efficiency"), 0.784);
  auto a = run_cli(base), b = run_cli(base + " --calibration " + half);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  const double ta = ja["tpot_p50_ms"], tb = jb["tpot_p50_ms"];
  // Weight streaming doubles; fixed step and per-kernel overheads do not: ratio in (1.5, 2].
  EXPECT_GT(tb, ta * 1.5);
  EXPECT_LE(tb, ta * 2.0 + 1e-9);
}

TEST(CalibrationCli, ValidateHonoursTheOverride) {
  const std::string f = write_file("xs_cal_val.yaml", "compute:\n  nvidia-ampere:\n    gemm_efficiency: \"0.335\"\n");
  auto a = run_cli("validate --json"), b = run_cli("validate --json --calibration " + f);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  ASSERT_EQ(ja["rows"].size(), jb["rows"].size());
  int slower = 0;
  for (size_t i = 0; i < ja["rows"].size(); ++i) {
    const auto &ra = ja["rows"][i], &rb = jb["rows"][i];
    if (ra["system"].get<std::string>().rfind("a100", 0) != 0 || ra["kind"] != "train" || ra["status"] != "ok") continue;
    // A slower GEMM lengthens step times and lowers every throughput metric.
    const bool is_time = ra["metric"].get<std::string>().find("time") != std::string::npos;
    if (is_time) EXPECT_GT(rb["predicted"].get<double>(), ra["predicted"].get<double>()) << ra["id"];
    else EXPECT_LT(rb["predicted"].get<double>(), ra["predicted"].get<double>()) << ra["id"];
    ++slower;
  }
  EXPECT_GT(slower, 0);
}

}  // namespace
