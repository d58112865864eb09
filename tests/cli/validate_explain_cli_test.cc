// `validate --explain` (docs/validation.md, "Explaining a row"): under each row, the plan the twin
// ran and where the time went. The figures are the ones behind the prediction: a step-time row's
// explained step time is its prediction, the breakdown adds up to it, a mean-TTFT row's
// explained TTFT is its prediction and a decode step and a prompt alone are the sums of their parts.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.h"

namespace {

using nlohmann::json;
using xpusim::test::run_cli;

// The header and the public rows with these ids ("id," so that no longer id matches).
std::string write_rows(const std::string& name, const std::vector<std::string>& ids) {
  std::vector<std::string> prefixes;
  for (const auto& id : ids) prefixes.push_back(id + ",");
  return xpusim::test::write_public_rows(name, prefixes);
}

const std::vector<std::string> kRows = {
    "tr-mlpt51-gb300-llama31-8b-512",           // step time, CP and TP
    "tr-mlpt40-gpt3-512-step",                  // step time, a pipeline with its bubble
    "in-mlpi41-llama2-70b-h100x8-server-ttft",  // mean TTFT at the submitted rate
    "in-trtllm-gptoss120b-b200-dep2-1024-1024", // DP attention with EP
};

json explained(const std::string& csv) {
  const auto r = run_cli("validate " + csv + " --explain --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

const json& row(const json& doc, const std::string& id) {
  for (const auto& r : doc["rows"])
    if (r["id"] == id) return r;
  ADD_FAILURE() << "no row " << id;
  static const json none;
  return none;
}

TEST(ValidateExplain, AStepTimeRowsBreakdownAddsUpToItsPrediction) {
  const json doc = explained(write_rows("explain_rows.csv", kRows));
  for (const std::string id : {"tr-mlpt51-gb300-llama31-8b-512", "tr-mlpt40-gpt3-512-step"}) {
    const json& r = row(doc, id);
    const json& e = r["explain"];
    EXPECT_NEAR(e["step_time_s"].get<double>(), r["predicted"].get<double>(), 1e-9) << id;
    double parts = 0;
    for (const char* k : {"compute_s", "tp_comm_s", "cp_comm_s", "ep_comm_s", "pp_comm_s", "dp_comm_s", "bubble_s",
                          "optimizer_s", "other_s"})
      parts += e[k].get<double>();
    EXPECT_NEAR(parts, e["step_time_s"].get<double>(), 1e-3 * e["step_time_s"].get<double>()) << id;
    EXPECT_EQ(e["global_batch"].get<long long>(), e["dp"].get<long long>() * e["micro_batch"].get<long long>() *
                                                      e["micro_batches"].get<long long>()) << id;
  }
  const json& mlperf = row(doc, "tr-mlpt51-gb300-llama31-8b-512")["explain"];  // the row's stated layout
  EXPECT_EQ(mlperf["tp"], 2);
  EXPECT_EQ(mlperf["cp"], 4);
  EXPECT_EQ(mlperf["dp"], 64);
  EXPECT_GT(row(doc, "tr-mlpt40-gpt3-512-step")["explain"]["bubble_s"].get<double>(), 0.0);  // pp 8
}

TEST(ValidateExplain, AServingRowShowsItsEnginesAndItsDecodeStep) {
  const json doc = explained(write_rows("explain_rows.csv", kRows));
  const json& ttft = row(doc, "in-mlpi41-llama2-70b-h100x8-server-ttft");
  const json& e = ttft["explain"];
  EXPECT_NEAR(e["ttft_mean_ms"].get<double>(), ttft["predicted"].get<double>(), 1e-9);  // "TTFT statistic: mean"
  EXPECT_EQ(e["engines"].get<long long>() * e["tp"].get<long long>(), 8);              // 8 chips
  const double parts = e["decode_linear_ms"].get<double>() + e["decode_attention_ms"].get<double>() +
                       e["decode_comm_ms"].get<double>() + e["decode_overhead_ms"].get<double>();
  EXPECT_NEAR(parts, e["decode_step_ms"].get<double>(), 1e-6 * e["decode_step_ms"].get<double>());
  const double prefill = e["prefill_linear_ms"].get<double>() + e["prefill_attention_ms"].get<double>() +
                         e["prefill_comm_ms"].get<double>() + e["prefill_overhead_ms"].get<double>();
  EXPECT_NEAR(prefill, e["prefill_alone_ms"].get<double>(), 1e-6 * e["prefill_alone_ms"].get<double>());
  const json& dep = row(doc, "in-trtllm-gptoss120b-b200-dep2-1024-1024")["explain"];  // DP attention, EP 2
  EXPECT_EQ(dep["tp"], 1);
  EXPECT_EQ(dep["ep"], 2);
  EXPECT_EQ(dep["engines"], 2);  // each chip serves its own sequences
}

TEST(ValidateExplain, IsOnlyThereWhenAskedAndStreamsAsTheInMemoryPathWrites) {
  const std::string csv = write_rows("explain_rows.csv", kRows);
  const std::string html = ::testing::TempDir() + "explain.html";
  const auto plain = run_cli("validate " + csv + " --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("\"explain\""), std::string::npos);
  for (const std::string mode : {"", " --json"}) {
    const auto streamed = run_cli("validate " + csv + " --explain" + mode);
    const auto held = run_cli("validate " + csv + " --explain" + mode + " --html " + html);
    ASSERT_EQ(streamed.exit_code, 0) << streamed.err;
    EXPECT_EQ(streamed.out, held.out) << mode;
  }
  const auto text = run_cli("validate " + csv + " --explain");
  EXPECT_NE(text.out.find("\n    tp 2, pp 1, dp 64, cp 4,"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("decode_step_ms"), std::string::npos);
}

TEST(ValidateExplain, TheHtmlRowsSayWhereTheTimeWent) {
  const std::string csv = write_rows("explain_rows.csv", kRows);
  const std::string html = ::testing::TempDir() + "explain_rows.html";
  const auto r = run_cli("validate " + csv + " --html " + html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("where the time went"), std::string::npos);
  EXPECT_NE(page.find(": compute 9"), std::string::npos);         // the 512-GPU step: compute 94 %
  EXPECT_NE(page.find(" %, bubble "), std::string::npos);         // the pp 8 step has a bubble
  EXPECT_NE(page.find("ms at batch "), std::string::npos);        // a serving row's decode step
  EXPECT_NE(page.find("); a prompt alone "), std::string::npos);
}

}  // namespace

// issue 45, case 10: a row whose configuration as stated does not fit in memory is predicted
// (the measurement says it ran) and flagged in the text and the JSON.
TEST(ValidateExplain, ARowThatDoesNotFitAsStatedIsFlagged) {
  const std::string csv = xpusim::test::write_public_rows("does_not_fit.csv", {"tr-dsv3-2048h800"});
  const auto text = xpusim::test::run_cli("validate " + csv);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("does not fit in memory as stated"), std::string::npos) << text.out;
  const auto json = xpusim::test::run_cli("validate " + csv + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto row = nlohmann::json::parse(json.out)["rows"][0];
  EXPECT_FALSE(row["fits"].get<bool>());
  EXPECT_NE(row["does_not_fit"].get<std::string>().find("per chip"), std::string::npos) << row.dump();
}

namespace {

// Rows whose stated prompt + output exceed their model config's context (issue 45 item 5): the
// two public rows that do are predicted as their sources ran them, flagged per row (text and
// JSON beyond_context) and counted in the summary; a row within its context is not.
TEST(ValidateCli, RowsBeyondTheirModelsContextRunFlaggedAndCounted) {
  const auto r = run_cli(
      "validate --rows 'in-trn1-tnx-llama2-13b-8192-8192-tpot,in-trtllm05-ttft-falcon-180b-h100-tp8-bs1-in2048,"
      "in-trn1-tnx-llama3-8b-128-8064-tpot' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(r.out);
  int flagged = 0;
  for (const auto& row : doc.at("rows")) {
    EXPECT_EQ(row.at("status"), "ok") << row.at("id");
    const bool beyond = row.contains("beyond_context");
    EXPECT_EQ(beyond, row.at("id") != "in-trn1-tnx-llama3-8b-128-8064-tpot") << row.at("id");
    if (beyond) {
      ++flagged;
      EXPECT_NE(row.at("beyond_context").get<std::string>().find("max_position_embeddings"), std::string::npos);
    }
  }
  EXPECT_EQ(flagged, 2);
  EXPECT_EQ(doc.at("summary").at("infer").at("beyond_context_rows"), 2);
  const auto text = run_cli("validate --rows 'in-trn1-tnx-llama2-13b-8192-8192-tpot'");
  EXPECT_NE(text.out.find("beyond the model's context as stated"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("1 infer row(s) run beyond their model config's context"), std::string::npos) << text.out;
}

}  // namespace
