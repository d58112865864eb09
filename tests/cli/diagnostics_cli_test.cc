// One test per user-input diagnostic, through the real CLI: the exit code (2 for bad input, 1 for
// an infeasible plan) and the text on stderr, which must name the field, the value and what was
// expected. docs/errors.md lists the same messages.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace fs = std::filesystem;
using xpusim::test::CliRun;
using xpusim::test::run_cli;

namespace {

const std::string kTrain = "train --system h100-sxm-dgx --model llama3.1-8b --chips 8 --executor analytical";

/// A fresh directory for this test, removed at the end.
class DiagnosticsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("xs_diag_" + std::to_string(::getpid()) + "_" + std::string(info->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    unsetenv("XPUSIM_DATA_DIR");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  /// A copy of data/ with catalog/systems/<system>.json replaced by `text`; XPUSIM_DATA_DIR
  /// points at it for the CLI runs that follow (the test process's environment is inherited).
  void use_data_with_system(const std::string& system, const std::string& text) {
    const fs::path data = dir_ / "data";
    fs::copy(xpusim::test::data_dir(), data, fs::copy_options::recursive);
    std::ofstream(data / "catalog" / "systems" / (system + ".json"), std::ios::trunc) << text;
    setenv("XPUSIM_DATA_DIR", data.c_str(), 1);
  }
  /// The system file as shipped, with `from` replaced by `to` (once).
  static std::string shipped_system_with(const std::string& system, const std::string& from,
                                         const std::string& to) {
    std::ifstream in(fs::path(xpusim::test::data_dir()) / "catalog" / "systems" / (system + ".json"));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto pos = text.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    if (pos != std::string::npos) text.replace(pos, from.size(), to);
    return text;
  }
  static std::string model_config_with(const std::string& from, const std::string& to) {
    std::ifstream in(fs::path(xpusim::test::data_dir()) / "models" / "llama3.1-8b.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto pos = text.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    if (pos != std::string::npos) text.replace(pos, from.size(), to);
    return text;
  }

  fs::path dir_;
};

/// Exit code 2, every `parts` on stderr, nothing on stdout.
void expect_bad_input(const CliRun& r, const std::vector<std::string>& parts) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  for (const auto& p : parts) EXPECT_NE(r.err.find(p), std::string::npos) << "missing '" << p << "' in:\n" << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

// --- unknown ids -------------------------------------------------------------------------------

TEST_F(DiagnosticsCli, UnknownSystemShowsClosestMatch) {
  expect_bad_input(run_cli("train --system h100-sxm --model llama3.1-8b --chips 8"),
                   {"--system: unknown system 'h100-sxm'", "got 'h100-sxm'", "expected one of: a100-40g-dgx",
                    "did you mean 'h100-sxm-dgx'?"});
}

TEST_F(DiagnosticsCli, UnknownModelShowsClosestMatch) {
  expect_bad_input(run_cli("train --system h100-sxm-dgx --model llama3.1-8bb --chips 8"),
                   {"--model: unknown model 'llama3.1-8bb'", "expected one of: command-a",
                    "did you mean 'llama3.1-8b'?"});
}

// --- missing files -----------------------------------------------------------------------------

TEST_F(DiagnosticsCli, MissingModelConfigFile) {
  const std::string p = path("nope/config.json");
  expect_bad_input(run_cli("train --system h100-sxm-dgx --chips 8 --model " + p),
                   {"--model: cannot open model file '" + p + "'", "expected an existing config.json or a model id"});
}

TEST_F(DiagnosticsCli, MissingScenarioFile) {
  const std::string p = path("nope.yaml");
  expect_bad_input(run_cli("train --scenario " + p),
                   {"--scenario: cannot open file '" + p + "'", "expected an existing, readable file"});
}

TEST_F(DiagnosticsCli, ScenarioThatIsADirectory) {
  expect_bad_input(run_cli("train --scenario " + dir_.string()),
                   {"--scenario: '" + dir_.string() + "' is a directory, not a file"});
}

TEST_F(DiagnosticsCli, MissingValidationCsv) {
  const std::string p = path("nope.csv");
  expect_bad_input(run_cli("validate " + p),
                   {"cannot open file '" + p + "'", "expected an existing, readable CSV file"});
}

// --- malformed documents -----------------------------------------------------------------------

TEST_F(DiagnosticsCli, MalformedJsonModelConfigNamesTheLine) {
  const std::string p = write("broken/config.json", "{\n  \"hidden_size\": 4096,\n  \"num_hidden_layers\": 32\n  \"vocab_size\": 1\n}\n");
  expect_bad_input(run_cli("train --system h100-sxm-dgx --chips 8 --model " + p),
                   {p + ":4: malformed JSON: parse error at line 4, column 14", "unexpected string literal; expected '}'"});
}

TEST_F(DiagnosticsCli, MalformedYamlScenarioNamesTheLine) {
  const std::string p = write("bad.yaml", "system: h100-sxm-dgx\nmodel: llama3.1-8b\nplan:\n  tp: [2\n");
  expect_bad_input(run_cli("train --scenario " + p), {p + ":5: malformed YAML at line 5, column 1"});
}

TEST_F(DiagnosticsCli, ScenarioThatIsNotAMapping) {
  const std::string p = write("list.yaml", "- system\n- model\n");
  expect_bad_input(run_cli("train --scenario " + p),
                   {p + ": a scenario must be a mapping of keys", "got '[\"system\",\"model\"]'",
                    "expected keys such as system, model, chips, plan"});
}

TEST_F(DiagnosticsCli, UnknownScenarioKeySuggestsTheKnownOne) {
  const std::string p = write("typo.yaml",
                              "system: h100-sxm-dgx\nmodel: llama3.1-8b\nchips: 8\nplan:\n  tp: 2\n  micro_bach: 1\n"
                              "executer: event\n");
  const auto r = run_cli("train --scenario " + p);
  expect_bad_input(r, {p + ": plan.micro_bach: unknown key (got 'micro_bach'", "did you mean 'micro_batch'?",
                       p + ": executer: unknown key (got 'executer'", "did you mean 'executor'?"});
}

TEST_F(DiagnosticsCli, ScenarioFieldOfTheWrongType) {
  const std::string p = write("types.yaml", "system: h100-sxm-dgx\nmodel: llama3.1-8b\nchips: 8\nplan:\n  tp: two\n");
  expect_bad_input(run_cli("train --scenario " + p), {p + ": plan.tp: wrong type (got 'two'; expected an integer)"});
}

TEST_F(DiagnosticsCli, UnknownExecutorInScenario) {
  const std::string p = write("ex.yaml", "system: h100-sxm-dgx\nmodel: llama3.1-8b\nchips: 8\nexecutor: analitical\n");
  expect_bad_input(run_cli("train --scenario " + p),
                   {p + ": executor: unknown executor (got 'analitical'; expected event or analytical; did you mean "
                        "'analytical'?)"});
}

// --- catalog values ----------------------------------------------------------------------------

TEST_F(DiagnosticsCli, CatalogNumberWithoutUnit) {
  use_data_with_system("h100-sxm-dgx", shipped_system_with("h100-sxm-dgx", "\"900 GB/s\"", "900"));
  expect_bad_input(run_cli("catalog show h100-sxm-dgx"),
                   {"h100-sxm-dgx.json: scale_up[0].bandwidth_per_chip.value: number without a unit (got '900'; "
                    "expected a bandwidth such as '4.9 TB/s' or '200 Gb/s')"});
}

TEST_F(DiagnosticsCli, CatalogNegativeBandwidth) {
  use_data_with_system("h100-sxm-dgx", shipped_system_with("h100-sxm-dgx", "\"400 Gb/s\"", "\"-400 Gb/s\""));
  expect_bad_input(run_cli(kTrain),
                   {"h100-sxm-dgx.json: scale_out.bandwidth_per_chip.value: must be positive (got '-400 Gb/s'; "
                    "expected a bandwidth such as '4.9 TB/s' or '200 Gb/s')"});
}

TEST_F(DiagnosticsCli, CatalogZeroBandwidth) {
  use_data_with_system("h100-sxm-dgx", shipped_system_with("h100-sxm-dgx", "\"400 Gb/s\"", "\"0 Gb/s\""));
  expect_bad_input(run_cli("catalog list"),
                   {"scale_out.bandwidth_per_chip.value: must be positive (got '0 Gb/s'"});
}

// --- model config ------------------------------------------------------------------------------

TEST_F(DiagnosticsCli, ModelFieldOfTheWrongType) {
  const std::string p = write("wt/config.json", model_config_with("\"hidden_size\": 4096", "\"hidden_size\": \"4096\""));
  expect_bad_input(run_cli("train --system h100-sxm-dgx --chips 8 --model " + p),
                   {p + ": hidden_size: wrong type (got '4096'; expected an integer)"});
}

// --- parallel plan -----------------------------------------------------------------------------

TEST_F(DiagnosticsCli, MtpDepthOutsideTheModelIsBadInput) {
  expect_bad_input(run_cli(kTrain + " --mtp-layers -1"),
                   {"--mtp-layers: must not be negative (got '-1'; expected an integer ≥ 0)"});
  expect_bad_input(run_cli(kTrain + " --mtp-layers 99"),
                   {"--mtp-layers: more multi-token-prediction modules than the model has layers (got '99'; "
                    "expected 0 to 32 (DeepSeek-V3 trains with 1))"});
}

TEST_F(DiagnosticsCli, TensorParallelDegreeThatDoesNotDivideTheHeads) {
  expect_bad_input(run_cli(kTrain + " --tp 3"),
                   {"--tp: tensor-parallel degree does not divide the 32 attention heads (got '3'; expected a "
                    "divisor of the 32 attention heads)"});
}

TEST_F(DiagnosticsCli, DegreesThatDoNotDivideTheChips) {
  expect_bad_input(run_cli("train --system h100-sxm-dgx --model llama3.1-8b --chips 10 --tp 4 --pp 1"),
                   {"--chips: the parallel degrees given do not divide the chips (got '10'; expected a multiple of "
                    "tp·pp·cp·dp = 4)"});
}

TEST_F(DiagnosticsCli, DegreesWhoseProductIsNotTheChips) {
  expect_bad_input(run_cli(kTrain + " --tp 2 --pp 1 --dp 2"),
                   {"--dp: tp·pp·cp·dp must equal the chips (got '4'; expected 8)"});
}

TEST_F(DiagnosticsCli, NegativeDegree) {
  expect_bad_input(run_cli(kTrain + " --tp -2 --pp 1"), {"--tp: must be a positive integer (got '-2'; expected an integer ≥ 1"});
}

TEST_F(DiagnosticsCli, GlobalBatchNotAMultipleOfTheDataParallelRanks) {
  expect_bad_input(run_cli(kTrain + " --tp 2 --pp 1 --global-batch 7"),
                   {"--global-batch: the global batch is not a whole number of micro-batches per data-parallel rank "
                    "(got '7'; expected a multiple of dp·micro_batch = 4·1 = 4)"});
}

TEST_F(DiagnosticsCli, InvalidPlanFoundByTheEngineIsBadInput) {
  expect_bad_input(run_cli(kTrain + " --tp 2 --pp 1 --cp 2 --seq-len 8190"),
                   {"plan: not a valid parallel plan: seq_len 8190 is not divisible by 2·cp = 4",
                    "got 'tp=2 pp=1 dp=2 cp=2"});
}

TEST_F(DiagnosticsCli, ExpertParallelismOnADenseModel) {
  expect_bad_input(run_cli(kTrain + " --ep 2"), {"--ep: expert parallelism needs a MoE model (got '2'; expected 1)"});
}

// --- enumerations ------------------------------------------------------------------------------

TEST_F(DiagnosticsCli, UnknownPrecision) {
  expect_bad_input(run_cli(kTrain + " --precision bf61"),
                   {"--precision: unknown precision (got 'bf61'; expected one of: fp32, tf32, bf16", "did you mean 'bf16'?"});
}

TEST_F(DiagnosticsCli, UnknownZeroStage) {
  expect_bad_input(run_cli(kTrain + " --zero fsdb"),
                   {"--zero: unknown ZeRO stage (got 'fsdb'; expected one of: none, 1, 2, 3, fsdp; did you mean 'fsdp'?)"});
}

TEST_F(DiagnosticsCli, UnknownRecomputeMode) {
  expect_bad_input(run_cli(kTrain + " --recompute ful"),
                   {"--recompute: unknown recompute mode (got 'ful'; expected one of: none, selective, full; did you "
                    "mean 'full'?)"});
}

TEST_F(DiagnosticsCli, UnknownFramework) {
  expect_bad_input(run_cli(kTrain + " --framework megatrom"),
                   {"--framework: unknown framework 'megatrom'", "did you mean 'megatron'?"});
}

// --- validation CSV ----------------------------------------------------------------------------

TEST_F(DiagnosticsCli, ValidationCsvWithAnUnknownColumn) {
  const std::string p = write("v.csv", "id,kind,system,chips,model,metric,value,nots\n"
                                       "r1,train,h100-sxm-dgx,8,llama3.1-8b,step_time_s,1.0,x\n");
  expect_bad_input(run_cli("validate " + p),
                   {p + ":1: header: unknown column (got 'nots'; expected one of: id, kind", "did you mean 'notes'?"});
}

TEST_F(DiagnosticsCli, ValidationCsvWithMissingColumns) {
  const std::string p = write("v.csv", "id,kind\nr1,train\n");
  expect_bad_input(run_cli("validate " + p), {p + ":1: header: missing required column 'system'"});
}

// A typo in a setting column is an error naming the row and column, not an unstated setting
// that the defaults rule would silently fill.
TEST_F(DiagnosticsCli, ValidationCsvWithAMisspelledSetting) {
  const std::string header = "id,kind,system,chips,model,precision,seq_len,global_batch_seqs,micro_batch,tp,pp,dp,"
                             "fsdp_or_zero,recompute,metric,value\n";
  const std::string p = write("v.csv", header + "r1,train,h100-sxm-dgx,8,llama3.1-8b,bf16,4096,64,1,1,1,8,zero1,ful,"
                                                "step_time_s,1.0\n");
  expect_bad_input(run_cli("validate " + p),
                   {"row 'r1'.recompute: unknown value (got 'ful'; expected empty (not stated) or one of: none, "
                    "selective, full;",
                    "did you mean 'full'?"});
  const std::string q = write("v2.csv", header + "r1,train,h100-sxm-dgx,8,llama3.1-8b,bf16,4096,64,1,1,1,8,zero-1,,"
                                                 "step_time_s,1.0\n");
  expect_bad_input(run_cli("validate " + q), {"row 'r1'.fsdp_or_zero: unknown value (got 'zero-1'; expected empty (not "
                                              "stated) or one of: none, zero1, zero2, zero3, fsdp;",
                                              "did you mean 'zero1'?"});
}

// --- expected infeasibility (exit 1) -----------------------------------------------------------

TEST_F(DiagnosticsCli, PlanThatDoesNotFitExits1WithOutOfMemory) {
  const auto r = run_cli(
      "train --system h100-sxm-dgx --model llama3.1-405b --chips 8 --tp 8 --pp 1 --zero none --recompute none "
      "--executor analytical");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("infeasible: out of memory: needs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the chip has 80 GiB"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("DOES NOT FIT"), std::string::npos) << r.out;
}

TEST_F(DiagnosticsCli, PlanThatDoesNotFitExits1InJsonToo) {
  const auto r = run_cli(
      "train --system h100-sxm-dgx --model llama3.1-405b --chips 8 --tp 8 --pp 1 --zero none --recompute none "
      "--executor analytical --json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("\"fits\": false"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("out of memory"), std::string::npos) << r.out;
}

}  // namespace
