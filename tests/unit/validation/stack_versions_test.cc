// The software stack of a validation row: the framework and version its notes state, the range of
// data/calibration/stacks/serving.yaml that holds it, and the table's `validated` flags in step
// with the shipped measurement files.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "../shipped_data.h"
#include "xpusim/serve/framework.h"
#include "xpusim/validation/row.h"
#include "xpusim/validation/row_scenario.h"

namespace {

using namespace xpusim;

validation::Row infer_row(const std::string& system, const std::string& notes) {
  validation::Row r;
  r.id = "in-test";
  r.kind = "infer";
  r.system = system;
  r.chips = 1;
  r.model = "llama3.1-8b";
  r.in_len = 128;
  r.out_len = 128;
  r.batch_or_concurrency = 1;
  r.mode = "server";
  r.metric = "tpot_ms";
  r.value = 10;
  r.notes = notes;
  return r;
}

validation::RowScenario scenario(const std::string& system, const std::string& notes) {
  auto rs = validation::scenario_for_row(infer_row(system, notes), test::catalog());
  EXPECT_TRUE(rs.has_value()) << (rs ? "" : rs.error());
  return rs ? *rs : validation::RowScenario{};
}

bool says(const validation::RowScenario& rs, const std::string& text) {
  for (const auto& a : rs.assumptions)
    if (a.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(RowStack, TheNotesStateTheFrameworkAndItsVersion) {
  auto rs = scenario("h100-sxm-dgx", "framework: trtllm 1.2.0rc6.post3 (TensorRT-LLM 1.2.0rc6.post3); closed loop");
  EXPECT_EQ(rs.scenario.framework, serve::Framework::TensorRtLlm);
  EXPECT_EQ(rs.scenario.framework_version, "1.2.0rc6.post3");
  rs = scenario("h100-sxm-dgx", "NVIDIA performance table, TensorRT-LLM v0.6.1; batch 64");
  EXPECT_EQ(rs.scenario.framework_version, "0.6.1");
  rs = scenario("h100-sxm-dgx", "framework: sglang 0.5.1.post1; image lmsysorg/sglang");
  EXPECT_EQ(rs.scenario.framework, serve::Framework::Sglang);
  EXPECT_EQ(rs.scenario.framework_version, "0.5.1.post1");
  rs = scenario("trn2-48xl", "NxD Inference contrib card, Neuron SDK 2.29.");
  EXPECT_EQ(rs.scenario.framework, serve::Framework::NeuronNxdi);
  EXPECT_EQ(rs.scenario.framework_version, "2.29");
  rs = scenario("h100-sxm-dgx", "framework: vllm (version not recorded); closed loop");
  EXPECT_EQ(rs.scenario.framework, serve::Framework::Vllm);
  EXPECT_TRUE(rs.scenario.framework_version.empty());
}

TEST(RowStack, AVersionThatIsNotPep440IsSaidAndTheDefaultRangeApplies) {
  const auto rs = scenario("b200-hgx", "framework: trtllm gpt-oss-dev (image tag)");
  EXPECT_TRUE(rs.scenario.framework_version.empty());
  EXPECT_TRUE(says(rs, "'gpt-oss-dev'")) << "no assumption about the version";
}

// A Neuron source's GPU baseline runs its own framework: the NxD Inference Mixtral card's H100
// row is vLLM 0.8.5, not NxD Inference on a GPU.
TEST(RowStack, NeuronStacksRunOnTrainiumOnly) {
  const auto rs = scenario("h100-sxm-dgx", "NxD Inference contrib Mixtral card; GPU baseline: 2x H100 (TP=2), vLLM 0.8.5");
  EXPECT_EQ(rs.scenario.framework, serve::Framework::Vllm);
  EXPECT_EQ(rs.scenario.framework_version, "0.8.5");
}

// Every range the table marks validated holds measurements of the shipped files (a stated
// version in it, or, for a default range, rows that state none), and every range holding
// measurements is marked validated: the flag that makes a forecast `extrapolating` stays true.
TEST(RowStack, TheTablesValidatedFlagsMatchTheShippedMeasurements) {
  std::map<std::string, std::set<std::string>> measured;  // stack → ranges with rows
  for (const char* file : {"public.csv", "aic-silicon.csv"}) {
    for (const auto& row : validation::read_csv(std::string(XS_TESTDATA_DIR) + "/validation/" + file)) {
      if (row.kind != "infer") continue;
      const auto rs = validation::scenario_for_row(row, test::catalog());
      if (!rs || !rs->scenario.framework) continue;
      const auto& chip = test::catalog().system(row.system).chip;
      const auto prof = serve::framework_profile(*rs->scenario.framework, rs->scenario.framework_version, chip,
                                                 test::shipped());
      measured[serve::framework_name(prof.framework)].insert(prof.version_range);
    }
  }
  for (const auto& [key, stack] : test::shipped().stacks())
    for (const auto& range : stack.ranges)
      EXPECT_EQ(range.validated, measured[stack.name].count(range.versions.text) > 0)
          << stack.name << " " << range.versions.text << ": validated flag out of step with the shipped rows";
}
