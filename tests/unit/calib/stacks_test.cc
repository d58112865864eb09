// Versioned software stacks (data/calibration/stacks/): reading a table, choosing a range for a
// version, the settings a range overrides, and the errors for bad tables and bad versions.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "xpusim/calib/params.h"
#include "xpusim/core/diagnostics.h"

using namespace xpusim;

namespace {

const std::string kStackData = XS_TESTDATA_DIR;

const char* kServing = R"(
frameworks:
  fast:
    step_overhead: {value: "600 us", meaning: "per step", basis: "fitted", kind: fitted, range: ["0 s", "1 s"]}
    kernels: {value: "1", meaning: "a switch", basis: "assumed", kind: assumed, range: ["0", "1"]}
)";

const char* kEffects = R"(
        effects:
          overlap_scheduler: "o"
          cuda_graphs: "c"
          chunked_prefill: "p"
          moe_kernels: "m"
          attention: "a"
          speculative_decoding: "s"
          fp4: "f")";

}  // namespace

// A named namespace, not the anonymous one: the TEST_F classes derive from it (-Wsubobject-linkage).
namespace stacks_test {

class StackFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("xs_stacks_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "stacks");
    std::ofstream(dir_ / "serving.yaml") << kServing;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  /// A table for stack `fast` with two ranges; `first_settings` goes into the first one.
  void table(const std::string& first_settings, const std::string& second = ">=1.0,<2",
             const std::string& default_range = ">=1.0,<2") {
    std::ofstream(dir_ / "stacks" / "serving.yaml")
        << "parameters: serving.frameworks\nstacks:\n  fast:\n    default: \"" << default_range
        << "\"\n    ranges:\n      - versions: \"<1.0\"\n        validated: false\n        validation: \"none\""
        << kEffects << "\n" << first_settings << "      - versions: \"" << second
        << "\"\n        validated: true\n        validation: \"rows\"" << kEffects << "\n";
  }
  std::string load_error() {
    try {
      calib::load_directory(dir_.string());
    } catch (const core::InputError& e) {
      return e.what();
    }
    return "";
  }
  std::filesystem::path dir_;
};

}  // namespace stacks_test

using stacks_test::StackFiles;

TEST_F(StackFiles, ARangeChangesOnlyWhatItSets) {
  table("        settings:\n          step_overhead: {value: \"0 s\", basis: \"the old executor\"}\n");
  const calib::Params p = calib::load_directory(dir_.string());
  const calib::Stack* stack = p.stack("serving.fast");
  ASSERT_NE(stack, nullptr);
  EXPECT_EQ(stack->known_ranges(), "<1.0; >=1.0,<2");
  const auto old = calib::choose_stack(*stack, "0.9.1", "framework");
  EXPECT_EQ(old.range->versions.text, "<1.0");
  EXPECT_FALSE(old.range->validated);
  EXPECT_EQ(calib::stack_value(p, old, "step_overhead").quantity.value, 0.0);
  EXPECT_EQ(calib::stack_value(p, old, "kernels").quantity.value, 1.0);  // not set: the framework's
  EXPECT_EQ(old.range->settings.at("step_overhead").basis, "the old executor");
  const auto now = calib::choose_stack(*stack, "1.1.0rc5", "framework");
  EXPECT_EQ(now.version, "1.1.0rc5");
  EXPECT_DOUBLE_EQ(calib::stack_value(p, now, "step_overhead").quantity.value, 600e-6);
  const auto unstated = calib::choose_stack(*stack, "", "framework");
  EXPECT_EQ(unstated.range->versions.text, ">=1.0,<2");  // the default range
  EXPECT_TRUE(unstated.version.empty());
  EXPECT_EQ(stack->range_of(*core::parse_version("1.0rc1")), &stack->ranges[0]);  // before 1.0
}

TEST_F(StackFiles, AVersionNoRangeHoldsNamesTheKnownRanges) {
  table("");
  const calib::Params p = calib::load_directory(dir_.string());
  try {
    calib::choose_stack(*p.stack("serving.fast"), "2.0", "framework");
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("framework"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("<1.0; >=1.0,<2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(calib::choose_stack(*p.stack("serving.fast"), "nightly", "framework"), core::InputError);
}

TEST_F(StackFiles, BadTablesAreInputErrorsNamingTheField) {
  table("        settings:\n          step_overhed: {value: \"0 s\", basis: \"b\"}\n");
  EXPECT_NE(load_error().find("did you mean 'step_overhead'"), std::string::npos) << load_error();
  table("        settings:\n          step_overhead: {value: \"0.5\", basis: \"b\"}\n");
  EXPECT_NE(load_error().find("not in the unit"), std::string::npos) << load_error();
  table("        settings:\n          kernels: {value: \"2\", basis: \"b\"}\n");
  EXPECT_NE(load_error().find("outside the parameter's range"), std::string::npos) << load_error();
  table("        settings:\n          kernels: {value: \"0\"}\n");
  EXPECT_NE(load_error().find("basis"), std::string::npos) << load_error();
  table("", ">=0.9,<2", ">=0.9,<2");
  EXPECT_NE(load_error().find("ranges overlap"), std::string::npos) << load_error();
  table("", ">=1.0,<2", ">=3");
  EXPECT_NE(load_error().find("not one of the stack's ranges"), std::string::npos) << load_error();
  table("", ">=1.0;<2");
  EXPECT_NE(load_error().find("versions"), std::string::npos) << load_error();
}

TEST_F(StackFiles, EveryRangeStatesEveryTopic) {
  std::ofstream(dir_ / "stacks" / "serving.yaml")
      << "parameters: serving.frameworks\nstacks:\n  fast:\n    default: \"*\"\n    ranges:\n"
         "      - versions: \"*\"\n        validated: true\n        validation: \"rows\"\n"
         "        effects:\n          overlap_scheduler: \"o\"\n";
  EXPECT_NE(load_error().find("cuda_graphs"), std::string::npos) << load_error();
}

// The shipped table: every serving framework has one, every range states every topic (the
// loader checks), and TensorRT-LLM's ranges carry the documented changes.
TEST(ShippedStacks, EveryServingFrameworkHasATable) {
  const calib::Params p = calib::load_shipped(kStackData);
  for (const char* name : {"trtllm", "vllm", "nim", "sglang", "neuron-tnx", "neuron-nxdi", "optimum-neuron",
                           "vllm-neuron"}) {
    const calib::Stack* s = p.stack(std::string("serving.") + name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_EQ(s->default_range().effects.size(), calib::stack_effect_topics().size()) << name;
  }
  const calib::Stack& trt = *p.stack("serving.trtllm");
  const auto pre_xqa = calib::choose_stack(trt, "0.6.1", "framework");
  EXPECT_EQ(calib::stack_value(p, pre_xqa, "gqa_kv_sharing").quantity.value, 0.0);
  const auto executor = calib::choose_stack(trt, "0.9.0", "framework");
  EXPECT_EQ(calib::stack_value(p, executor, "gqa_kv_sharing").quantity.value, 1.0);
  EXPECT_EQ(calib::stack_value(p, executor, "host_time_per_sequence").quantity.value, 0.0);
  EXPECT_GT(calib::stack_value(p, calib::choose_stack(trt, "1.2.0rc6.post3", "framework"), "host_time_per_sequence")
                .quantity.value,
            0.0);
}
