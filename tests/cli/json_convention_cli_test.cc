// The JSON convention of docs/json.md, checked on whole documents: schema_version and inputs
// present; every numeric value has a unit word in its key or in an enclosing key, or is one of
// the documented unitless names; counts are integers.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"

using xpusim::test::run_cli;
using Json = nlohmann::json;

namespace {

// docs/json.md: unit words (a key's `_`-separated words) and unitless names.
const std::set<std::string> kUnitWords = {"s",   "ms",  "us",   "j",    "w",     "kw",   "usd", "gib",
                                          "tib", "bytes", "flop", "tflops", "pct", "gb", "tb",  "gbit"};
const std::set<std::string> kUnitless = {
    "schema_version", "chips", "tp", "pp", "dp", "cp", "ep", "vpp", "engines", "decode_engines", "micro_batch",
    "micro_batches", "global_batch", "seq_len", "max_num_seqs", "max_batched_tokens", "static_batch",
    "block_size", "prefill_chips", "draft_len", "in_len", "out_len", "concurrency", "seed", "requests",
    "preemptions", "timed_out_requests", "events", "plans_evaluated", "plans_pruned", "tokens_per_step", "train_tokens",
    "kv_tokens_per_engine", "batch", "n", "ok", "unsupported", "errors", "acceptance", "kv_utilisation",
    "mean_kv_utilisation", "mean_batch_per_engine", "measured", "predicted", "stage_layers"};
// Counts among the unitless names: printed as integers.
const std::set<std::string> kCounts = {"chips", "tp", "pp", "dp", "requests", "events", "tokens_per_step",
                                       "train_tokens", "n", "ok", "preemptions", "timed_out_requests"};

bool has_unit_word(const std::string& key) {
  std::stringstream ss(key);
  std::string word;
  while (std::getline(ss, word, '_'))
    if (kUnitWords.count(word)) return true;
  return false;
}

void check(const Json& j, const std::string& key, bool unit_above, const std::string& where,
           std::vector<std::string>& bad) {
  const bool unit_here = unit_above || has_unit_word(key);
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) check(v, k, unit_here, where + "." + k, bad);
  } else if (j.is_array()) {
    for (const auto& v : j) check(v, key, unit_here, where + "[]", bad);
  } else if (j.is_number()) {
    if (!unit_here && !kUnitless.count(key)) bad.push_back(where + " (no unit, not a documented count/ratio)");
    if (kCounts.count(key) && !j.is_number_integer()) bad.push_back(where + " (a count printed as a float)");
  }
}

struct Command {
  const char* name;
  std::string args;
};

class JsonConvention : public ::testing::TestWithParam<Command> {};

TEST_P(JsonConvention, EnvelopeUnitsAndCounts) {
  const auto r = run_cli(GetParam().args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j;
  ASSERT_NO_THROW(j = Json::parse(r.out)) << r.out.substr(0, 400);
  EXPECT_EQ(j.value("schema_version", 0), 1);
  EXPECT_TRUE(j.contains("command"));
  EXPECT_TRUE(j.contains("inputs") && j["inputs"].is_object());
  std::vector<std::string> bad;
  for (const auto& [k, v] : j.items())
    if (k != "inputs") check(v, k, false, k, bad);
  EXPECT_TRUE(bad.empty()) << [&] {
    std::string s;
    for (const auto& b : bad) s += "\n  " + b;
    return s;
  }();
}

INSTANTIATE_TEST_SUITE_P(
    Commands, JsonConvention,
    ::testing::Values(
        Command{"train", "train --system trn2-48xl --model llama3.1-8b --chips 16 --tp 4 --pp 1 --train-tokens 1e12 --json"},
        Command{"serve", "serve --system h100-sxm-dgx --model llama3.1-8b --precision fp8 --rate 5 --requests 100 "
                         "--in-len 256 --out-len 32 --json"},
        Command{"serve_search", "serve --search --system h100-sxm-dgx --model llama3.1-8b --precision fp8 --rate 2 "
                                "--requests 100 --in-len 256 --out-len 32 --json"},
        Command{"validate", "validate --json"}),
    [](const ::testing::TestParamInfo<Command>& command) { return std::string(command.param.name); });

TEST(JsonConvention, InputsEchoTheScenarioShape) {
  const auto r = run_cli("train --system trn2-48xl --model llama3.1-8b --chips 16 --tp 4 --pp 1 --seq-len 4096 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json in = Json::parse(r.out)["inputs"];
  EXPECT_EQ(in["system"], "trn2-48xl");
  EXPECT_EQ(in["chips"], 16);
  EXPECT_EQ(in["plan"]["tp"], 4);
  EXPECT_EQ(in["workload"]["seq_len"], 4096);
  EXPECT_FALSE(in["plan"].contains("dp"));  // unset inputs are left out
}

}  // namespace
