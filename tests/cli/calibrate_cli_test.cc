// xpusim calibrate: the --out file round trip through --calibration, and its diagnostics.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.h"
#include "hopper_rows.h"
#include "../scratch_path.h"

using xpusim::test::run_cli;

namespace {

/// A fixture CSV: the header and the public file's H100 train rows.
std::string hopper_fixture() { return xpusim::test::write_hopper_rows("calibrate_fixture"); }

/// `xpusim ARGS` is refused as bad input (exit 2) with a message holding `says`.
void expect_refusal(const std::string& args, const std::string& says) {
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << args;
  EXPECT_NE(r.err.find(says), std::string::npos) << args << ": " << r.err;
}

std::string slurp(const std::string& path) {
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  return ss.str();
}

const char* kKey = "compute.nvidia-hopper.gemm_efficiency";

TEST(CalibrateCli, OutFileIsAcceptedByCalibrationAndReproducesTheFit) {
  const std::string csv = hopper_fixture();
  const std::string out = ::testing::TempDir() + "calibrate_out.yaml";
  auto r = run_cli("calibrate " + csv + " --params " + kKey + " --folds none --json --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto fit = nlohmann::json::parse(r.out);
  ASSERT_EQ(fit["parameters"].size(), 1u);
  EXPECT_EQ(fit["parameters"][0]["key"], kKey);
  const std::string value = fit["parameters"][0]["value"];
  EXPECT_GT(fit["parameters"][0]["sensitive_rows"].get<int>(), 0);

  const std::string file = slurp(out);
  EXPECT_NE(file.find("fitted by xpusim calibrate --params"), std::string::npos) << file;
  EXPECT_NE(file.find("value: \"" + value + "\""), std::string::npos) << file;

  auto show = run_cli("calibration show --json --calibration " + out);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const auto shown = nlohmann::json::parse(show.out);  // (a range-for over a temporary's member
                                                      // read freed memory: ASan, docs/fuzzing.md)
  int matched = 0;
  for (const auto& p : shown["parameters"])
    if (p["key"] == kKey) {
      EXPECT_EQ(p["value"], value);
      ++matched;
    }
  EXPECT_EQ(matched, 1);

  auto validate = run_cli("validate " + csv + " --json --calibration " + out);
  ASSERT_EQ(validate.exit_code, 0) << validate.err;
  const auto v = nlohmann::json::parse(validate.out);
  EXPECT_DOUBLE_EQ(v["summary"]["train"]["median_abs_error_pct"].get<double>(),
                   fit["summary"]["train"]["median_abs_error_pct"].get<double>());
  EXPECT_FALSE(v["summary"]["train"].contains("cv_median_abs_error_pct"));
}

TEST(CalibrateCli, SameInputsGiveTheSameOutput) {
  const std::string csv = hopper_fixture();
  const std::string args = "calibrate " + csv + " --params " + kKey + " --folds none --json";
  EXPECT_EQ(run_cli(args).out, run_cli(args).out);
}

TEST(CalibrateCli, GlobMatchingNoFittedParameterIsAnInputError) {
  auto r = run_cli("calibrate " + hopper_fixture() + " --params 'compute.nvidia-ampere.hbm_*'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--params: matches no fitted parameter"), std::string::npos) << r.err;
}

// An assumed key whose shipped value is 0, marked fitted by the user's overrides: the log-space
// search has no centre, so it is bad input naming the key (it was an internal error).
TEST(CalibrateCli, FittingAKeyDocumentedAtZeroIsAnInputError) {
  const std::string overrides = testing::TempDir() + "/fit_a_zero_key.yaml";
  std::ofstream(overrides) << "serving:\n  frameworks:\n    sglang:\n      layer_overhead:\n"
                              "        value: \"10 us\"\n        kind: fitted\n";
  expect_refusal("calibrate " + hopper_fixture() + " --calibration " + overrides +
                        " --params serving.frameworks.sglang.layer_overhead --folds none",
                    "serving.frameworks.sglang.layer_overhead: a fitted parameter is searched in log space");
}

TEST(CalibrateCli, LeaveOneSourceOutAddsCvFigures) {
  auto r = run_cli("calibrate " + hopper_fixture() + " --params " + std::string(kKey) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["folds"].size(), 2u);
  EXPECT_TRUE(j["summary"]["train"].contains("cv_median_abs_error_pct"));
  EXPECT_TRUE(j["summary"]["by_family"]["nvidia-hopper"]["train"].contains("cv_p90_abs_error_pct"));
}

// Each fold says what it re-fitted: the one key moves rows of every source, so every fold
// re-fits it, from the full fit's value. Every sensitive row is held out by exactly one fold and
// trains the others, so the folds' training rows sum to (folds - 1) x the key's sensitive rows.
TEST(CalibrateCli, EachFoldReportsTheValuesItReFitted) {
  auto r = run_cli("calibrate " + hopper_fixture() + " --params " + std::string(kKey) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& full = j["parameters"][0];
  const auto& fits = j["fold_fits"];
  ASSERT_EQ(fits.size(), j["folds"].size());
  int training_rows = 0;
  for (size_t f = 0; f < fits.size(); ++f) {
    EXPECT_EQ(fits[f]["source"], j["folds"][f]);
    ASSERT_EQ(fits[f]["parameters"].size(), 1u) << fits[f];
    const auto& v = fits[f]["parameters"][0];
    EXPECT_EQ(v["key"], kKey);
    EXPECT_DOUBLE_EQ(v["full_fit"].get<double>(), full["fitted"].get<double>());
    EXPECT_GT(v["fold"].get<double>(), 0.0);
    EXPECT_LE(v["fold"].get<double>(), 1.0);  // an efficiency stays within its range
    training_rows += v["training_rows"].get<int>();
  }
  EXPECT_EQ(training_rows, static_cast<int>(fits.size() - 1) * full["sensitive_rows"].get<int>());
}

}  // namespace

namespace {

/// The H100 train rows of two sources (NeMo's and llm-foundry's tables): two folds, kept small
/// because every fold re-fits.
std::string two_source_fixture() {
  std::ifstream in(hopper_fixture());
  std::string line, text;
  std::getline(in, line);
  text = line + "\n";
  while (std::getline(in, line))
    if (line.find("github.com/NVIDIA/NeMo/") != std::string::npos || line.find("mosaicml/llm-foundry") != std::string::npos)
      text += line + "\n";
  const std::string path = xpusim::test::scratch_path("two_sources", ".csv");
  std::ofstream(path) << text;
  return path;
}

// validate --cv reports each fold: per held-out source and kind, in-sample and out-of-fold
// figures, in the JSON (summary.by_source) and as a text table; without --cv in-sample figures only.
TEST(ValidateCvCli, ReportsEveryHeldOutSource) {
  const std::string csv = two_source_fixture();
  auto r = run_cli("validate " + csv + " --cv --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& by_source = j["summary"]["by_source"];
  ASSERT_EQ(by_source.size(), 2u);
  int rows = 0;
  for (const auto& [source, kinds] : by_source.items()) {
    ASSERT_TRUE(kinds.contains("train")) << source;
    EXPECT_TRUE(kinds["train"].contains("cv_median_abs_error_pct")) << source;
    EXPECT_TRUE(kinds["train"].contains("cv_p90_abs_error_pct")) << source;
    rows += kinds["train"]["n"].get<int>();
  }
  EXPECT_EQ(rows, j["summary"]["train"]["n"].get<int>());
  EXPECT_TRUE(by_source.contains("github.com/NVIDIA/NeMo"));
  EXPECT_TRUE(by_source.contains("github.com/mosaicml/llm-foundry"));
  for (const auto& row : j["rows"]) {  // each row names the fold that held it out
    ASSERT_TRUE(row.contains("cv_source")) << row["id"];
    EXPECT_TRUE(by_source.contains(row["cv_source"].get<std::string>())) << row["cv_source"];
    EXPECT_EQ(row["cv_fold"], row["cv_source"]) << row["id"];
  }

  auto text = run_cli("validate " + csv + " --cv");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("per held-out source"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("github.com/NVIDIA/NeMo"), std::string::npos) << text.out;

  // Without --cv the per-source figures are in-sample only.
  auto plain = run_cli("validate " + csv + " --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto p = nlohmann::json::parse(plain.out);
  ASSERT_TRUE(p["summary"].contains("by_source"));
  EXPECT_FALSE(p["summary"]["by_source"]["github.com/NVIDIA/NeMo"]["train"].contains("cv_median_abs_error_pct"));
  EXPECT_FALSE(p["rows"][0].contains("cv_source"));
}

// --cv-folds model folds a source of 200 or more rows over several models by model; the
// fixture's two small sources stay one fold each, so the out-of-fold figures are the same. The
// flag needs --cv and one of its two words.
TEST(ValidateCvCli, ModelFoldsLeaveSmallSourcesWhole) {
  const std::string csv = two_source_fixture();
  auto by_source = run_cli("validate " + csv + " --cv --json");
  auto by_model = run_cli("validate " + csv + " --cv --cv-folds model --json");
  ASSERT_EQ(by_model.exit_code, 0) << by_model.err;
  const auto a = nlohmann::json::parse(by_source.out), b = nlohmann::json::parse(by_model.out);
  ASSERT_EQ(a["rows"].size(), b["rows"].size());
  for (size_t i = 0; i < a["rows"].size(); ++i) {
    EXPECT_EQ(b["rows"][i]["cv_fold"], a["rows"][i]["cv_source"]) << a["rows"][i]["id"];
    EXPECT_EQ(b["rows"][i]["cv_predicted"], a["rows"][i]["cv_predicted"]) << a["rows"][i]["id"];
  }
  // --progress: a line per fold on stderr, the output unchanged.
  auto progress = run_cli("validate " + csv + " --cv --json --progress");
  ASSERT_EQ(progress.exit_code, 0) << progress.err;
  EXPECT_EQ(progress.out, by_source.out);
  EXPECT_NE(progress.err.find("fold 1/2"), std::string::npos) << progress.err;
  EXPECT_NE(progress.err.find("fold 2/2"), std::string::npos) << progress.err;
  expect_refusal("validate " + csv + " --cv-folds model", "--cv-folds");
  expect_refusal("validate " + csv + " --cv --cv-folds models", "--cv-folds");
  // --cv-sweeps: each fold's fit in up to N coordinate-descent sweeps (default 1); 1 to 3, and
  // only with folds.
  auto three = run_cli("validate " + csv + " --cv --json --cv-sweeps 3");
  ASSERT_EQ(three.exit_code, 0) << three.err;
  EXPECT_EQ(nlohmann::json::parse(three.out)["rows"].size(), nlohmann::json::parse(by_source.out)["rows"].size());
  for (const char* wrong : {"0", "4", "x"})
    expect_refusal("validate " + csv + " --cv --cv-sweeps " + wrong, "--cv-sweeps");
  expect_refusal("validate " + csv + " --cv-sweeps 1", "needs --cv");
  expect_refusal("calibrate " + csv + " --folds none --cv-sweeps 1", "--cv-sweeps: needs --folds");
}

// validate --cv --html carries the folds into the page: CV columns in the summary, the table per
// held-out source, each row's out-of-fold prediction; a page without --cv has none of them.
TEST(ValidateCvCli, HtmlPageShowsTheFolds) {
  const std::string csv = two_source_fixture();
  const std::string page = xpusim::test::scratch_path("validate_cv", ".html");
  auto r = run_cli("validate " + csv + " --cv --html " + page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string cv_page = slurp(page);
  for (const char* text : {"Per held-out source", "CV p90 |error| %", "CV error %", "github.com/mosaicml/llm-foundry"})
    EXPECT_NE(cv_page.find(text), std::string::npos) << text;
  auto plain = run_cli("validate " + csv + " --html " + page);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const std::string plain_page = slurp(page);
  EXPECT_EQ(plain_page.find("CV error %"), std::string::npos);
  EXPECT_EQ(plain_page.find("Per held-out source"), std::string::npos);
}

}  // namespace

// `--params @FILE` reads the globs from a file, one per line ('#' comments, blank lines and
// commas allowed): the same fit as the globs on the command line, and the --out file records
// the globs it fitted.
TEST(CalibrateCli, ParamsFromAFileFitTheSameKeysAsTheCommandLine) {
  const std::string csv = hopper_fixture();
  const std::string list = ::testing::TempDir() + "calibrate_params.txt";
  std::ofstream(list) << "# the Hopper GEMM and attention factors\n\n  " << kKey
                      << "  # dense GEMMs\ncompute.nvidia-hopper.attention_*, compute.nvidia-ampere.gemm_efficiency\n";
  const std::string out = ::testing::TempDir() + "calibrate_params_out.yaml";
  auto from_file = run_cli("calibrate " + csv + " --params @" + list + " --folds none --json --out " + out);
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  auto inline_globs = run_cli("calibrate " + csv + " --params '" + kKey +
                              ",compute.nvidia-hopper.attention_*,compute.nvidia-ampere.gemm_efficiency' --folds none --json");
  ASSERT_EQ(inline_globs.exit_code, 0) << inline_globs.err;
  const auto a = nlohmann::json::parse(from_file.out), b = nlohmann::json::parse(inline_globs.out);
  EXPECT_EQ(a["parameters"], b["parameters"]);
  EXPECT_EQ(a["inputs"]["params"], b["inputs"]["params"]);
  EXPECT_NE(slurp(out).find("--params '" + std::string(kKey) + ",compute.nvidia-hopper.attention_*,"),
            std::string::npos);
}

TEST(CalibrateCli, AParamsFileThatIsMissingOrNamesNoGlobIsAnInputError) {
  auto missing = run_cli("calibrate " + hopper_fixture() + " --params @/nonexistent/params.txt");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/params.txt"), std::string::npos) << missing.err;
  const std::string empty = ::testing::TempDir() + "calibrate_params_empty.txt";
  std::ofstream(empty) << "# nothing but a comment\n\n";
  auto none = run_cli("calibrate " + hopper_fixture() + " --params @" + empty);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("--params: the parameter list names no glob"), std::string::npos) << none.err;
}

// Several files are one set: the rows of two halves fit what the whole file fits.
TEST(CalibrateCli, SeveralFilesFitAsOneSet) {
  const std::string whole = hopper_fixture();
  std::ifstream in(whole);
  std::string header, line, first, second;
  std::getline(in, header);
  for (int i = 0; std::getline(in, line); ++i) (i % 2 == 0 ? first : second) += line + "\n";
  const std::string a = xpusim::test::scratch_path("calibrate_half_a", ".csv"),
                    b = xpusim::test::scratch_path("calibrate_half_b", ".csv");
  std::ofstream(a) << header << "\n" << first;
  std::ofstream(b) << header << "\n" << second;
  const std::string flags = std::string(" --params ") + kKey + " --folds none --json";
  auto one = run_cli("calibrate " + whole + flags);
  auto two = run_cli("calibrate " + a + " " + b + flags);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(two.exit_code, 0) << two.err;
  const auto j1 = nlohmann::json::parse(one.out), j2 = nlohmann::json::parse(two.out);
  EXPECT_EQ(j1["parameters"][0]["value"], j2["parameters"][0]["value"]);
  EXPECT_EQ(j1["parameters"][0]["sensitive_rows"], j2["parameters"][0]["sensitive_rows"]);
}

// A file of one source: no fold can hold it out, so no CV figures are printed (the issue's
// "CV median 6.9%" with no fold run), and the table shows the active value beside the documented.
TEST(CalibrateCli, OneSourceIsInSampleOnlyAndActiveValuesAreShown) {
  const std::string whole = hopper_fixture();
  std::ifstream in(whole);
  std::string header, first;
  std::getline(in, header);
  std::getline(in, first);
  const std::string one = xpusim::test::scratch_path("calibrate_one_source", ".csv");
  std::ofstream(one) << header << "\n" << first << "\n";
  const std::string active = ::testing::TempDir() + "calibrate_active.yaml";
  std::ofstream(active) << "compute:\n  nvidia-hopper:\n    gemm_efficiency: \"0.6\"\n";
  auto text = run_cli("calibrate " + one + " --params " + kKey + " --calibration " + active);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("in sample only"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("CV: leave-one-source-out"), std::string::npos) << text.out;
  auto json = run_cli("calibrate " + one + " --params " + kKey + " --calibration " + active + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_TRUE(j["folds"].empty());
  EXPECT_FALSE(j["summary"]["train"].contains("cv_median_abs_error_pct")) << j["summary"].dump();
  EXPECT_DOUBLE_EQ(j["parameters"][0]["active"].get<double>(), 0.6);
  EXPECT_NE(j["parameters"][0]["start"].get<double>(), 0.6);  // the documented value
}
