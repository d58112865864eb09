// xpusim sweep end to end: one CSV row per point in the stated order, infeasible and bad-plan
// points as rows, each point's document equal to `train --json` for the same keys, byte-identical
// reruns, and a diagnostic naming the key for every kind of bad grid (exit 2).

#include <gtest/gtest.h>

#include <filesystem>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "cli_runner.h"

using xpusim::test::run_cli;

namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Analytical executor and a stated plan: each point is milliseconds.
const char* kTrainGrid = R"(command: train
base:
  system: h100-sxm-dgx
  model: llama3.1-8b
  executor: analytical
  plan: {tp: 8, pp: 1}
  workload: {global_batch: 64, seq_len: 4096}
grid:
  chips: [8, 16]
  precision: [bf16, fp8]
)";

TEST(SweepCli, OneRowPerPointLastKeyFastest) {
  const std::string grid = write_file("sweep_train.yaml", kTrainGrid);
  const std::string out = testing::TempDir() + "sweep_train.csv";
  const auto r = run_cli("sweep " + grid + " --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());  // the CSV went to --out
  const auto lines = lines_of(slurp(out));
  ASSERT_EQ(lines.size(), 5u);  // header + 2 × 2 points
  EXPECT_EQ(lines[0].rfind("chips,precision,status,reason,step_time_s,tokens_per_s,tokens_per_s_per_chip,mfu_pct", 0),
            0u) << lines[0];
  const char* prefixes[] = {"8,bf16,ok,,", "8,fp8,ok,,", "16,bf16,ok,,", "16,fp8,ok,,"};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(lines[static_cast<std::size_t>(i) + 1].rfind(prefixes[i], 0), 0u) << lines[i + 1];
  // Byte-identical rerun, and the CSV on stdout without --out.
  const auto again = run_cli("sweep " + grid);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, slurp(out));
}

TEST(SweepCli, InfeasibleAndBadPlanPointsAreRowsNotAborts) {
  // llama3.1-70b with tp 8 on 8 H100s: weights, gradients and Adam states do not fit in 80 GB.
  // tp 3 does not divide 64 heads: a bad plan for that point, a row with the diagnostic.
  const std::string grid = write_file("sweep_rows.yaml", R"(command: train
base: {system: h100-sxm-dgx, model: llama3.1-70b, chips: 24, executor: analytical,
       plan: {pp: 1, zero: none, recompute: none}, workload: {global_batch: 24, seq_len: 4096}}
grid: {tp: [8, 3]}
)");
  const auto r = run_cli("sweep " + grid);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[1].rfind("8,infeasible,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("3,error,", 0), 0u) << lines[2];
  EXPECT_NE(lines[2].find("--tp"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("heads"), std::string::npos) << lines[2];
}

TEST(SweepCli, JsonHasEveryPointsDocumentEqualToTrainJson) {
  const std::string grid = write_file("sweep_json.yaml", kTrainGrid);
  const auto r = run_cli("sweep " + grid + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(doc["command"], "sweep");
  EXPECT_EQ(doc["schema_version"], 1);
  ASSERT_EQ(doc["points"].size(), 4u);
  const auto& p3 = doc["points"][3];
  EXPECT_EQ(p3["index"], 3);
  EXPECT_EQ(p3["values"]["chips"], 16);
  EXPECT_EQ(p3["values"]["precision"], "fp8");
  EXPECT_EQ(p3["status"], "ok");
  // The same keys through `train --scenario FILE --json`: the same document.
  const std::string scenario = write_file("sweep_point3.yaml", R"(system: h100-sxm-dgx
model: llama3.1-8b
chips: 16
executor: analytical
plan: {tp: 8, pp: 1, precision: fp8}
workload: {global_batch: 64, seq_len: 4096}
)");
  const auto t = run_cli("train --scenario " + scenario + " --json");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(p3["result"], nlohmann::ordered_json::parse(t.out));
}

struct BadGrid {
  const char* name;
  const char* text;  ///< nullptr: a file that does not exist
  std::vector<const char*> words;
};

TEST(SweepCli, BadGridsExitTwoNamingTheKey) {
  const BadGrid cases[] = {
      {"unknown key", "command: train\nbase: {system: h100-sxm-dgx}\ngrid: {precison: [bf16]}\n",
       {"grid.precison", "unknown key", "did you mean 'precision'"}},
      {"empty list", "command: train\ngrid: {chips: []}\n", {"grid.chips", "empty list"}},
      {"unknown command", "command: trian\ngrid: {chips: [8]}\n", {"command", "did you mean 'train'"}},
      {"unknown system", "command: train\nbase: {model: llama3.1-8b}\ngrid: {system: [h100-sxm-dgx, h100-sxm-dgz]}\n",
       {"grid.system[1]", "h100-sxm-dgz"}},
      {"unknown model", "command: serve\nbase: {system: h100-sxm-dgx, model: llama9}\ngrid: {rate: [1]}\n",
       {"base.model", "llama9"}},
      {"unknown precision", "command: train\nbase: {system: h100-sxm-dgx}\ngrid: {precision: [bf16, fp9]}\n",
       {"grid.precision[1]", "fp9"}},
      {"bad value", "command: serve\ngrid: {rate: [1, -2]}\n", {"grid.rate[1]", "-2"}},
      {"missing file", nullptr, {"no_such_grid.yaml"}},
  };
  for (const auto& c : cases) {
    const std::string path = c.text ? write_file("bad_grid.yaml", c.text) : testing::TempDir() + "no_such_grid.yaml";
    const auto r = run_cli("sweep " + path);
    EXPECT_EQ(r.exit_code, 2) << c.name << ": " << r.err;
    for (const char* w : c.words) EXPECT_NE(r.err.find(w), std::string::npos) << c.name << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.name;
  }
}

}  // namespace

// A grid that names model configs by relative paths reads them from the grid file's folder,
// whatever the working directory: a copy of Llama-3.1-8B beside the grid runs exactly as the
// shipped id does, in the base and on an axis.
TEST(SweepCli, RelativeModelPathsAreReadBesideTheGridFile) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(testing::TempDir()) / "sweep_beside";
  fs::remove_all(dir);
  fs::create_directories(dir / "models");
  fs::copy_file(fs::path(xpusim::test::data_dir()) / "models" / "llama3.1-8b.json", dir / "models" / "mine.json");
  const fs::path grid = dir / "grid.yaml";
  std::ofstream(grid) << "command: train\nbase:\n  system: h100-sxm-dgx\n  model: models/mine.json\n"
                         "  executor: analytical\n  plan: {tp: 8, pp: 1}\n  workload: {global_batch: 64, seq_len: 4096}\n"
                         "grid:\n  chips: [8]\n  model: [models/mine.json, llama3.1-8b]\n";
  const auto r = run_cli("sweep " + grid.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_NE(lines[1].find(",ok,"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(",ok,"), std::string::npos) << lines[2];
  // The same model: the same figures after the model column.
  EXPECT_EQ(lines[1].substr(lines[1].find(",ok,")), lines[2].substr(lines[2].find(",ok,")));
}
