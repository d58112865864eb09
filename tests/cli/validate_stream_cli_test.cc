// `validate` without --cv or --html streams its rows (docs/validation.md, "Streaming"): the
// output is the one the in-memory path (taken with --html) writes, byte for byte; a file past
// the in-memory row limit is predicted; a bad file prints nothing before its diagnostics.
#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli_json.h"
#include "cli_runner.h"

namespace {

using xpusim::test::run_cli;
using xpusim::test::write_public_rows;

std::string public_file() { return xpusim::test::data_dir() + "/validation/public.csv"; }

std::string header() {
  std::ifstream in(public_file());
  std::string line;
  std::getline(in, line);
  return line;
}

const std::string kUnknownSystemRow =
    "x-unknown,infer,nosuch-system,8,llama3.1-8b,bf16,,,,,,,,,,,,128,128,1,single-stream,tpot_ms,10,A,https://x/y,";

TEST(ValidateStream, OutputIsTheInMemoryPathsByteForByte) {
  // Train and infer rows of several families, and a row that cannot be predicted.
  const std::string csv = write_public_rows("stream_mixed.csv", {"tr-kor22", "in-mlpi41", "tr-trn1", "in-optneuron"},
                                    {kUnknownSystemRow});
  const std::string html = ::testing::TempDir() + "stream_mixed.html";
  for (const std::string mode : {"", " --json"}) {
    const auto streamed = run_cli("validate " + csv + mode);
    const auto held = run_cli("validate " + csv + mode + " --html " + html);  // the charts hold every row
    ASSERT_EQ(streamed.exit_code, 0) << streamed.err;
    ASSERT_EQ(held.exit_code, 0) << held.err;
    EXPECT_EQ(streamed.out, held.out) << mode;
    EXPECT_NE(streamed.out.find("x-unknown"), std::string::npos);
  }
  // A header without rows is bad input on both paths, with the same message (issue 48: it used
  // to print an empty list and exit 0).
  const std::string empty = write_public_rows("stream_empty.csv", {"no-such-prefix"});
  const auto streamed = run_cli("validate " + empty + " --json");
  const auto held = run_cli("validate " + empty + " --json --html " + html);
  EXPECT_EQ(streamed.exit_code, 2);
  EXPECT_EQ(held.exit_code, 2);
  EXPECT_EQ(streamed.err, held.err);
  EXPECT_NE(streamed.err.find("no measurement rows"), std::string::npos) << streamed.err;
}

TEST(ValidateStream, AFilePastTheInMemoryLimitIsStreamed) {
  // 100,001 rows: more than cross-validation may hold (docs/errors.md), each predicted and
  // written in turn. Rows of an unknown system keep the test fast.
  const std::string path = ::testing::TempDir() + "stream_many.csv";
  {
    std::ofstream out(path, std::ios::binary);
    out << header() << "\n";
    for (int i = 0; i < 100001; ++i) out << "r" << i << kUnknownSystemRow.substr(9) << "\n";
  }
  const auto r = run_cli("validate " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err.substr(0, 300);
  EXPECT_NE(r.out.find("infer                      100001    0"), std::string::npos) << r.out.substr(r.out.size() - 600);
  EXPECT_NE(r.out.find("... and 99001 more rows not predicted"), std::string::npos);
  const auto held = run_cli("validate " + path + " --cv");
  EXPECT_EQ(held.exit_code, 2);
  EXPECT_NE(held.err.find("measurement rows exceeds the limit"), std::string::npos) << held.err;
}

TEST(ValidateStream, RowsSelectsRowsByIdGlobsStreamedOrHeld) {
  const std::string csv = write_public_rows("stream_rows.csv", {"tr-kor22", "in-mlpi41", "tr-trn1"});
  const std::string html = ::testing::TempDir() + "stream_rows.html";
  const std::string rows = " --rows 'in-mlpi41-*-server-*, tr-trn1-llama31-70b'";
  const auto streamed = run_cli("validate " + csv + rows + " --json");
  const auto held = run_cli("validate " + csv + rows + " --json --html " + html);
  ASSERT_EQ(streamed.exit_code, 0) << streamed.err;
  EXPECT_EQ(streamed.out, held.out);
  // Four MLPerf v4.1 server rows and the Trn1 70B row, nothing else; the summary is theirs.
  const auto doc = nlohmann::json::parse(streamed.out);
  ASSERT_EQ(doc["rows"].size(), 5u);
  for (const auto& row : doc["rows"]) {
    const std::string id = row["id"];
    EXPECT_TRUE(id.find("-server-") != std::string::npos || id == "tr-trn1-llama31-70b") << id;
  }
  EXPECT_EQ(doc["inputs"]["row_ids"], "in-mlpi41-*-server-*,tr-trn1-llama31-70b");
  EXPECT_EQ(doc["summary"]["infer"]["n"], 4);
  const auto text = run_cli("validate " + csv + rows);
  EXPECT_NE(text.out.find("infer                         4    4"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("train                         1    1"), std::string::npos) << text.out;
  // Without --rows the inputs do not name it (the whole file's output is unchanged).
  EXPECT_EQ(run_cli("validate " + csv + " --json").out.find("row_ids"), std::string::npos);

  const auto none = run_cli("validate " + csv + " --rows 'nope-*'");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.out, "");
  EXPECT_NE(none.err.find("--rows: matches no row id of the file (got 'nope-*'"), std::string::npos) << none.err;
  const auto blank = run_cli("validate " + csv + " --rows ' , '");
  EXPECT_EQ(blank.exit_code, 2);
  EXPECT_NE(blank.err.find("--rows: names no glob"), std::string::npos) << blank.err;
  const auto bands = run_cli("validate " + csv + " --rows 'tr-*' --cv --write-bands " + ::testing::TempDir() + "b.json");
  EXPECT_EQ(bands.exit_code, 2);
  EXPECT_NE(bands.err.find("--rows: cannot be used with --write-bands"), std::string::npos) << bands.err;
}

TEST(ValidateStream, ABadFilePrintsNothingBeforeEveryDiagnostic) {
  const std::string bad = write_public_rows(
      "stream_bad.csv", {"tr-kor22-22b"},
      {"a,train,h100-sxm-dgx,0,llama3.1-8b,bf16,,,,,,,,,,,,,,,,step_time_s,-1,A,u,",
       "b,foo,h100-sxm-dgx,8,llama3.1-8b,bf16,,,,,,,,,,,,,,,,step_time_s,1,A,u,"});
  for (const std::string mode : {"", " --json"}) {
    const auto r = run_cli("validate " + bad + mode);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, "") << mode;  // the file is checked whole before the first row is predicted
    for (const std::string field : {"row 'a'.chips", "row 'a'.value", "row 'b'.kind"})
      EXPECT_NE(r.err.find(field), std::string::npos) << field << ": " << r.err;
  }
}

}  // namespace

namespace {

// Several files are one set: every row of each, one summary (per source and per framework and
// metric, with band coverage), the same streamed as held.
TEST(ValidateStream, SeveralFilesAreOneSet) {
  const std::string a = write_public_rows("several_a.csv", {"tr-kor22", "in-mlpi41"}, {});
  const std::string b = write_public_rows("several_b.csv", {"in-optneuron"}, {});
  const auto one = run_cli("validate " + a + " --json");
  const auto other = run_cli("validate " + b + " --json");
  const auto both = run_cli("validate " + a + " " + b + " --json");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  const auto j = nlohmann::json::parse(both.out);
  EXPECT_EQ(j["rows"].size(), nlohmann::json::parse(one.out)["rows"].size() + nlohmann::json::parse(other.out)["rows"].size());
  EXPECT_NE(j["inputs"]["file"].get<std::string>().find("several_b.csv"), std::string::npos);
  const auto& cells = j["summary"]["by_framework_metric"];
  ASSERT_FALSE(cells.empty());
  int cell_rows = 0;
  for (const auto& [cell, kinds] : cells.items())
    for (const auto& [kind, s] : kinds.items()) cell_rows += s["n"].get<int>();
  EXPECT_EQ(cell_rows, static_cast<int>(j["rows"].size()));
  int in_band = 0, banded = 0;
  for (const auto& row : j["rows"]) {
    if (!row.contains("predicted_low") || !(row["predicted_low"] < row["predicted_high"])) continue;
    ++banded;
    in_band += row["predicted_low"] <= row["measured"] && row["measured"] <= row["predicted_high"];
  }
  const auto& infer = j["summary"]["infer"];
  const auto& train = j["summary"]["train"];
  EXPECT_EQ(infer["band_rows"].get<int>() + train["band_rows"].get<int>(), banded);
  double covered = 0;  // the summary's coverage is the rows' own
  for (const auto* k : {&infer, &train})
    if ((*k)["band_rows"].get<int>() > 0) covered += (*k)["band_coverage_pct"].get<double>() * (*k)["band_rows"].get<int>() / 100;
  EXPECT_NEAR(covered, in_band, 1e-9);
  const std::string html = ::testing::TempDir() + "several.html";
  for (const std::string mode : {"", " --json"}) {
    const auto streamed = run_cli("validate " + a + " " + b + mode);
    const auto held = run_cli("validate " + a + " " + b + mode + " --html " + html);
    EXPECT_EQ(streamed.out, held.out) << mode;
  }
}

}  // namespace
