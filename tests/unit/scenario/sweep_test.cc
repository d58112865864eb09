// scenario/sweep.h: the grid's points (Cartesian product, grid keys in the order written, the
// last fastest), flat/dotted/nested keys, and one diagnostic per kind of bad grid.
#include "xpusim/scenario/sweep.h"

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include "xpusim/scenario/serve_inputs.h"
#include "xpusim/scenario/train_inputs.h"

namespace {

using namespace xpusim;
using config::Json;

scenario::SweepGrid grid(const std::string& yaml_like_json) {
  return scenario::sweep_grid_from_json(Json::parse(yaml_like_json), "grid.yaml");
}

std::string error_of(const std::string& text) {
  try {
    (void)grid(text);
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SweepGrid, PointsAreTheProductLastKeyFastest) {
  const auto g = grid(R"({"command": "train", "base": {"system": "h100-sxm-dgx", "model": "llama3.1-8b"},
                          "grid": {"chips": [8, 16, 32], "precision": ["bf16", "fp8"]}})");
  ASSERT_EQ(scenario::point_count(g), 6u);  // 3 × 2
  // index = i_chips · 2 + i_precision (mixed radix, last key fastest)
  const struct {
    std::size_t index;
    long long chips;
    const char* precision;
  } cases[] = {{0, 8, "bf16"}, {1, 8, "fp8"}, {2, 16, "bf16"}, {5, 32, "fp8"}};
  for (const auto& c : cases) {
    const auto v = scenario::point_values(g, c.index);
    EXPECT_EQ(v[0].get<long long>(), c.chips) << c.index;
    EXPECT_EQ(v[1].get<std::string>(), c.precision) << c.index;
    const Json keys = scenario::point_keys(g, c.index);
    EXPECT_EQ(keys["chips"].get<long long>(), c.chips);
    EXPECT_EQ(keys["plan"]["precision"].get<std::string>(), c.precision);  // flat key placed under plan:
    EXPECT_EQ(keys["system"].get<std::string>(), "h100-sxm-dgx");
  }
}

TEST(SweepGrid, FlatDottedAndNestedKeysAreTheSameKey) {
  core::Diagnostics d;
  const Json flat = scenario::nest_scenario_keys("serve", Json{{"tp", 2}, {"rate", 4.0}}, "", d);
  const Json dotted = scenario::nest_scenario_keys("serve", Json{{"plan.tp", 2}, {"workload.rate", 4.0}}, "", d);
  const Json nested =
      scenario::nest_scenario_keys("serve", Json{{"plan", {{"tp", 2}}}, {"workload", {{"rate", 4.0}}}}, "", d);
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(flat, nested);
  EXPECT_EQ(dotted, nested);
}

TEST(SweepGrid, GridValuesOverrideTheBase) {
  const auto g = grid(R"({"command": "train", "base": {"system": "a", "model": "b", "plan": {"tp": 2, "pp": 1}},
                          "grid": {"plan.tp": [4]}})");
  const Json keys = scenario::point_keys(g, 0);
  EXPECT_EQ(keys["plan"]["tp"].get<long long>(), 4);
  EXPECT_EQ(keys["plan"]["pp"].get<long long>(), 1);
}

TEST(SweepGrid, NoGridKeysIsOnePoint) {
  EXPECT_EQ(scenario::point_count(grid(R"({"command": "serve", "base": {"system": "a"}, "grid": {}})")), 1u);
}

struct BadGrid {
  const char* name;
  const char* text;
  std::vector<const char*> words;  ///< every one must be in the message
};

TEST(SweepGrid, BadGridsNameTheKey) {
  const BadGrid cases[] = {
      {"unknown key", R"({"command": "train", "grid": {"precison": ["bf16"]}})",
       {"grid.yaml", "grid.precison", "unknown key", "did you mean 'precision'"}},
      {"unknown nested key", R"({"command": "train", "base": {"plan": {"tpp": 2}}, "grid": {}})",
       {"base.plan.tpp", "did you mean 'tp'"}},
      {"serve key in train", R"({"command": "train", "grid": {"rate": [1.0]}})", {"grid.rate", "unknown key"}},
      {"empty list", R"({"command": "train", "grid": {"chips": []}})", {"grid.chips", "empty list"}},
      {"not a list", R"({"command": "train", "grid": {"chips": 8}})", {"grid.chips", "not a list"}},
      {"unknown command", R"({"command": "trian", "grid": {}})", {"command", "did you mean 'train'"}},
      {"missing grid", R"({"command": "train"})", {"grid"}},
      {"bad count", R"({"command": "train", "grid": {"chips": [8, 0]}})", {"grid.chips[1]", "0"}},
      {"bad base value", R"({"command": "serve", "base": {"rate": -1}, "grid": {}})", {"base.workload.rate"}},
      {"bad type", R"({"command": "serve", "grid": {"tp": ["two"]}})", {"grid.tp[0]"}},
      {"twice", R"({"command": "train", "grid": {"tp": [1], "plan.tp": [2]}})", {"grid.plan.tp", "twice"}},
      {"too many", R"({"command": "train", "grid": {"seq_len": [1,2,3,4,5,6,7,8,9,10],
         "global_batch": [1,2,3,4,5,6,7,8,9,10], "chips": [1,2,3,4,5,6,7,8,9,10],
         "micro_batch": [1,2,3,4,5,6,7,8,9,10], "tp": [1,2,3,4,5,6,7,8,9,10], "pp": [1,2]}})",
       {"too many points", "200000"}},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(c.text);
    for (const char* w : c.words) EXPECT_NE(msg.find(w), std::string::npos) << c.name << ": " << msg;
  }
}

// The key lists the sweep (and Python) accept are the keys the scenario readers know: none of
// them may be an "unknown key" to the reader (a reader and the list drifting apart fails here).
TEST(SweepGrid, ListedKeysAreKnownToTheScenarioReader) {
  for (const std::string command : {"train", "serve"}) {
    const auto& k = scenario::scenario_keys(command);
    Json doc = Json::object();
    for (const auto& key : k.top) doc[key] = nullptr;
    for (const auto& key : k.plan) doc["plan"][key] = nullptr;
    for (const auto& key : k.workload) doc["workload"][key] = nullptr;
    try {
      if (command == "train") (void)scenario::train_inputs_from_json(doc, "");
      else (void)scenario::serve_inputs_from_json(doc, "");
    } catch (const core::InputError& e) {
      for (const auto& x : e.diagnostics()) EXPECT_NE(x.message, "unknown key") << command << ": " << x.to_string();
    }
  }
}

}  // namespace
