// One verdict per kind of value (config/values.h): the same bad value gets the same message
// whether it comes from a flag, a scenario file or a validation CSV cell; only the path (the
// flag, the key, the row and column) differs. Zero never silently means "default".

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cli_runner.h"

using xpusim::test::run_cli;

namespace {

std::string write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

/// The message after the path: "must be ... (got '...'; expected ...)".
std::string message_after(const std::string& err, const std::string& path) {
  const auto at = err.find(path + ": ");
  if (at == std::string::npos) return "<no diagnostic for " + path + " in: " + err + ">";
  const auto start = at + path.size() + 2;
  return err.substr(start, err.find('\n', start) - start);
}

const char* kCsvHeader = "id,kind,system,chips,model,tp,metric,value\n";

struct BadCount {
  const char* value;
  const char* expected_message;
};

class SameVerdict : public ::testing::TestWithParam<BadCount> {};

TEST_P(SameVerdict, FlagYamlAndCsvGiveTheSameMessageForATpCount) {
  const BadCount c = GetParam();
  const std::string v = c.value;
  const auto flag = run_cli("train --system h100-sxm-dgx --model llama3.1-8b --chips 8 --pp 1 --tp " + v);
  const std::string yaml = write("xs_values_" + v + ".yaml",
                                 "system: h100-sxm-dgx\nmodel: llama3.1-8b\nchips: 8\nplan:\n  pp: 1\n  tp: " + v + "\n");
  const auto file = run_cli("train --scenario " + yaml);
  const std::string csv = write("xs_values_" + v + ".csv", std::string(kCsvHeader) +
                                "r1,train,h100-sxm-dgx,8,llama3.1-8b," + v + ",mfu_pct,40\n");
  const auto row = run_cli("validate " + csv);
  for (const auto* r : {&flag, &file, &row}) EXPECT_EQ(r->exit_code, 2) << r->err;
  const std::string from_flag = message_after(flag.err, "--tp");
  EXPECT_EQ(from_flag, c.expected_message);
  EXPECT_EQ(message_after(file.err, "plan.tp"), from_flag);
  EXPECT_EQ(message_after(row.err, "row 'r1'.tp"), from_flag);
}

INSTANTIATE_TEST_SUITE_P(
    Counts, SameVerdict,
    ::testing::Values(
        BadCount{"0", "must be a positive integer (got '0'; expected an integer ≥ 1 (leave it out for the default))"},
        BadCount{"-2", "must be a positive integer (got '-2'; expected an integer ≥ 1 (leave it out for the default))"}));

TEST(SameVerdictServe, RateZeroFromAFlagAndAFile) {
  const auto flag = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --rate 0");
  const std::string yaml = write("xs_values_rate.yaml",
                                 "system: h100-sxm-dgx\nmodel: llama3.1-8b\nworkload:\n  rate: 0\n");
  const auto file = run_cli("serve --scenario " + yaml);
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_EQ(file.exit_code, 2);
  EXPECT_EQ(message_after(flag.err, "--rate"), "must be a finite positive number (got '0'; expected a number > 0)");
  EXPECT_EQ(message_after(file.err, "workload.rate"), message_after(flag.err, "--rate"));
}

TEST(SameVerdictServe, NegativeTimeoutFromAFlagAndAFile) {
  const auto flag = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --timeout '-5 s'");
  const std::string yaml = write("xs_values_timeout.yaml",
                                 "system: h100-sxm-dgx\nmodel: llama3.1-8b\nworkload:\n  timeout: \"-5 s\"\n");
  const auto file = run_cli("serve --scenario " + yaml);
  EXPECT_EQ(flag.exit_code, 2) << flag.err;
  EXPECT_EQ(file.exit_code, 2) << file.err;
  const std::string from_flag = message_after(flag.err, "--timeout");
  EXPECT_NE(from_flag.find("must be a finite positive duration (got '-5 s'"), std::string::npos) << from_flag;
  EXPECT_EQ(message_after(file.err, "workload.timeout"), from_flag);
}

TEST(SameVerdictServe, AcceptanceOutsideAFraction) {
  const auto flag = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --acceptance 1.5");
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_EQ(message_after(flag.err, "--acceptance"),
            "must be a fraction in [0, 1) (got '1.5'; expected a number ≥ 0 and < 1, e.g. 0.7)");
}

}  // namespace
