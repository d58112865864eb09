// Golden tests of the example training scenarios: every data/scenarios/train-*.yaml runs through
// `xpusim train --scenario FILE --json`, exits 0, and its headline numbers stay within 2 % of
// the values recorded in tests/golden/<scenario>.json. Two runs give byte-identical output.
//
// Regenerate the golden files after an intended change of the model (see tests/golden/README.md):
//   XPUSIM_UPDATE_GOLDEN=1 build/tests/cli_test --gtest_filter='ScenariosCli.*'

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace fs = std::filesystem;
using xpusim::test::run_cli;

namespace {

constexpr double kRelTol = 0.02;

std::vector<fs::path> train_scenarios() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(xpusim::test::data_dir()) / "scenarios")) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.rfind("train-", 0) == 0 && e.path().extension() == ".yaml")
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

fs::path golden_dir() { return fs::path(xpusim::test::data_dir()).parent_path() / "tests" / "golden"; }

bool updating() {
  const char* v = std::getenv("XPUSIM_UPDATE_GOLDEN");
  return v && *v && std::string(v) != "0";
}

/// The numbers a golden file records, read from the CLI's JSON by key path.
struct Metric {
  const char* name;  ///< key in the golden file
  std::vector<const char*> path;
};
const std::vector<Metric>& metrics() {
  static const std::vector<Metric> m = {
      {"step_time_s", {"step_time_s"}},
      {"tokens_per_s_per_chip", {"tokens_per_s_per_chip"}},
      {"memory_per_chip_gib.total", {"memory_per_chip_gib", "total"}},
  };
  return m;
}

const nlohmann::json* at(const nlohmann::json& j, const std::vector<const char*>& path) {
  const nlohmann::json* p = &j;
  for (const char* k : path) {
    if (!p->is_object() || !p->contains(k)) return nullptr;
    p = &(*p)[k];
  }
  return p;
}

}  // namespace

TEST(ScenariosCli, ThereAreTrainingScenarios) { EXPECT_GE(train_scenarios().size(), 4u); }

TEST(ScenariosCli, EveryTrainScenarioMatchesItsGolden) {
  for (const fs::path& file : train_scenarios()) {
    const std::string stem = file.stem().string();
    SCOPED_TRACE(stem);
    const auto r = run_cli("train --scenario '" + file.string() + "' --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.out;
    EXPECT_EQ(j.value("fits", false), true) << stem << " should fit in memory";

    const fs::path golden = golden_dir() / (stem + ".json");
    if (updating()) {
      nlohmann::ordered_json g;
      g["scenario"] = "data/scenarios/" + file.filename().string();
      g["relative_tolerance"] = kRelTol;
      for (const auto& m : metrics()) {
        const nlohmann::json* v = at(j, m.path);
        ASSERT_NE(v, nullptr) << m.name;
        g[m.name] = v->get<double>();
      }
      fs::create_directories(golden.parent_path());
      std::ofstream out(golden);
      out << g.dump(2) << "\n";
      ASSERT_TRUE(out.good()) << "cannot write " << golden;
      continue;
    }
    std::ifstream in(golden);
    ASSERT_TRUE(in) << "no golden file " << golden
                    << " (write it with XPUSIM_UPDATE_GOLDEN=1, see tests/golden/README.md)";
    const nlohmann::json g = nlohmann::json::parse(in);
    for (const auto& m : metrics()) {
      const nlohmann::json* v = at(j, m.path);
      ASSERT_NE(v, nullptr) << "output lacks " << m.name;
      ASSERT_TRUE(g.contains(m.name)) << golden << " lacks " << m.name;
      const double want = g[m.name].get<double>();
      const double got = v->get<double>();
      EXPECT_LE(std::abs(got - want), kRelTol * std::abs(want))
          << m.name << ": got " << got << ", golden " << want << " (tolerance " << kRelTol * 100 << " %)";
    }
  }
}

TEST(ScenariosCli, RunsAreByteIdentical) {
  for (const fs::path& file : train_scenarios()) {
    SCOPED_TRACE(file.filename().string());
    for (const char* fmt : {" --json", ""}) {
      const auto a = run_cli("train --scenario '" + file.string() + "'" + fmt);
      const auto b = run_cli("train --scenario '" + file.string() + "'" + fmt);
      ASSERT_EQ(a.exit_code, 0) << a.err;
      EXPECT_FALSE(a.out.empty());
      EXPECT_EQ(a.out, b.out);
    }
  }
}

TEST(ScenariosCli, FlagsOverrideTheScenarioFile) {
  const fs::path file = fs::path(xpusim::test::data_dir()) / "scenarios" / "train-llama3.1-8b-trn2.yaml";
  const auto r = run_cli("train --scenario '" + file.string() + "' --global-batch 128 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["global_batch"], 128);
  EXPECT_EQ(j["plan"]["tp"], 4);  // from the file
}

// A scenario file that names its model config by a relative path is read from the file's own
// folder, whatever the working directory (here the run starts elsewhere): the file and its
// config travel together. A bare model id is still looked up in the project's models.
TEST(ScenariosCli, ARelativeModelPathIsReadBesideTheScenarioFile) {
  const fs::path dir = fs::path(::testing::TempDir()) / "scenario_beside";
  fs::remove_all(dir);
  fs::create_directories(dir / "models");
  fs::copy_file(fs::path(xpusim::test::data_dir()) / "models" / "llama3.1-8b.json", dir / "models" / "mine.json");
  for (const char* command : {"train", "serve"}) {
    const fs::path file = dir / (std::string(command) + ".yaml");
    std::ofstream(file) << "system: h100-sxm-dgx\nmodel: models/mine.json\nchips: 8\n"
                        << (std::string(command) == "train" ? "plan:\n  tp: 1\n  pp: 1\nworkload:\n  global_batch: 64\n"
                                                            : "workload:\n  concurrency: 4\n  requests: 20\n");
    const auto r = run_cli(std::string(command) + " --scenario '" + file.string() + "' --json");
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
    EXPECT_NE(r.out.find("mine"), std::string::npos) << command;
  }
}
