// A Trainium serving forecast states the software range beside its band (issue 46 item 2,
// docs/serving.md "Software range"): the low end is the slowest validated Neuron stack's run of
// the same deployment, the high end the run's stack with GPU-grade serving keys. Each end is
// derived here from runs a user could make by hand.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace {

using nlohmann::json;
using xpusim::test::run_cli;

const std::string kRun = "serve --system trn3-ultraserver-gen2 --model llama3.1-70b --chips 16 --tp 16 --rate 2 --requests 100";

json run_json(const std::string& args) {
  const auto r = run_cli(args + " --json");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return json::parse(r.out);
}

/// The shipped value of `key` as `calibration show --json` prints it.
std::string shipped(const json& params, const std::string& key) {
  for (const auto& p : params)
    if (p.at("key") == key) return p.at("value").get<std::string>();
  ADD_FAILURE() << key << " not in calibration show";
  return "";
}

TEST(SoftwareRangeCli, EndsAreTheSlowestValidatedStackAndGpuGradeKeys) {
  const json doc = run_json(kRun);
  ASSERT_TRUE(doc.contains("software_range")) << doc.dump().substr(0, 400);
  const json& range = doc.at("software_range");
  EXPECT_EQ(range.at("central").get<std::string>().rfind("neuron-nxdi ", 0), 0u) << range.dump();

  // The low end: the slowest (mean end-to-end) of every validated Neuron stack's own run.
  double slowest = doc.at("e2e_latency_mean_s").get<double>();
  double slowest_tpot = doc.at("tpot_mean_ms").get<double>();
  for (const std::string stack : {"neuron-tnx", "optimum-neuron", "vllm-neuron"}) {
    const json other = run_json(kRun + " --framework " + stack);
    if (other.at("e2e_latency_mean_s").get<double>() > slowest) {
      slowest = other.at("e2e_latency_mean_s").get<double>();
      slowest_tpot = other.at("tpot_mean_ms").get<double>();
    }
  }
  EXPECT_DOUBLE_EQ(range.at("low").at("e2e_latency_mean_s").get<double>(), slowest);
  EXPECT_DOUBLE_EQ(range.at("low").at("tpot_mean_ms").get<double>(), slowest_tpot);

  // The high end: the same run with the GPU-grade keys copied by hand into a calibration file.
  const json params = run_json("calibration show").at("parameters");
  const std::string path = ::testing::TempDir() + "gpu_grade.yaml";
  {
    std::ofstream f(path);
    // The keys docs/serving.md names ("Software range").
    for (const std::string k : {"step_overhead", "layer_overhead", "host_time_per_sequence", "prefill_efficiency",
                                "prefill_step_overhead", "moe_prefill_efficiency"})
      f << "serving.frameworks.neuron-nxdi." << k << ": \"" << shipped(params, "serving.frameworks.trtllm." + k) << "\"\n";
    for (const std::string k : {"gemm_efficiency", "low_precision_efficiency", "attention_efficiency", "hbm_efficiency"})
      f << "serving.kernels.trainium." << k << ": \"" << shipped(params, "serving.kernels.nvidia-blackwell." + k) << "\"\n";
  }
  const json high = run_json(kRun + " --calibration " + path);
  EXPECT_DOUBLE_EQ(range.at("high").at("tpot_mean_ms").get<double>(), high.at("tpot_mean_ms").get<double>());
  EXPECT_DOUBLE_EQ(range.at("high").at("ttft_mean_ms").get<double>(), high.at("ttft_mean_ms").get<double>());
  // GPU-grade software is faster than the stack the forecast assumed, the slowest stack slower.
  EXPECT_LT(range.at("high").at("tpot_mean_ms").get<double>(), doc.at("tpot_mean_ms").get<double>());
  EXPECT_GE(range.at("low").at("tpot_mean_ms").get<double>(), doc.at("tpot_mean_ms").get<double>());

  const auto text = run_cli(kRun);
  EXPECT_NE(text.out.find("software range (this forecast assumes neuron-nxdi"), std::string::npos) << text.out;
}

TEST(SoftwareRangeCli, GpuRunsHaveNone) {
  const json doc = run_json("serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --rate 2 --requests 50");
  EXPECT_FALSE(doc.contains("software_range"));
}

}  // namespace

namespace {

// A plan search on Trainium gives its best plan's software range; on a GPU it gives none.
TEST(SoftwareRangeCli, SearchGivesTheBestPlansRange) {
  const json trn = run_json("serve --search --system trn2-48xl --model llama3.1-8b --rate 1 --requests 200 --in-len 512 --out-len 128");
  const json& r = trn.at("results").at(0);
  ASSERT_TRUE(r.at("found").get<bool>()) << r.dump().substr(0, 400);
  ASSERT_TRUE(r.contains("software_range")) << r.dump().substr(0, 400);
  const json& range = r.at("software_range");
  EXPECT_LE(range.at("high").at("tpot_p90_ms").get<double>(), range.at("low").at("tpot_p90_ms").get<double>());
  EXPECT_NE(range.at("high").at("software").get<std::string>().find("GPU-grade"), std::string::npos);
  const auto text = run_cli("serve --search --system trn2-48xl --model llama3.1-8b --rate 1 --requests 200 --in-len 512 --out-len 128");
  EXPECT_NE(text.out.find("software range of this plan"), std::string::npos) << text.out;
  const json gpu = run_json("serve --search --system h100-sxm-dgx --model llama3.1-8b --rate 1 --requests 200 --in-len 512 --out-len 128");
  EXPECT_FALSE(gpu.at("results").at(0).contains("software_range"));
}

}  // namespace

namespace {

// A sweep point is one run: its result leaves the software range out (serve --json has it).
TEST(SoftwareRangeCli, SweepPointsAreOneRunEach) {
  const std::string grid = ::testing::TempDir() + "xs_sweep_trn.yaml";
  std::ofstream(grid) << "command: serve\nbase:\n  system: trn2-48xl\n  model: llama3.1-8b\n  chips: 1\n"
                         "  workload: {rate: 1, requests: 30}\ngrid:\n  precision: [bf16, fp8]\n";
  const json doc = run_json("sweep " + grid);
  ASSERT_EQ(doc.at("points").size(), 2u);
  for (const auto& p : doc.at("points")) {
    ASSERT_TRUE(p.at("result").is_object()) << p.dump().substr(0, 300);
    EXPECT_FALSE(p.at("result").contains("software_range"));
  }
}

}  // namespace
