// Every number a JSON document promises is finite and every duration non-negative, over a corpus
// of extreme but valid inputs (issue 48, class 3): nlohmann writes NaN and infinity as null, so a
// null is a failure unless its key is one a document documents as "none" (docs/json.md).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_runner.h"

using xpusim::test::run_cli;
using Json = nlohmann::json;

namespace {

// Keys whose null means "none" by their documentation (docs/json.md), not a lost number.
const std::set<std::string> kNullable = {
    "catalog_digest", "calibration_digest",            // commands that read no catalog or calibration
    "recompute_layers", "moe_capacity_factor", "lora_targets",  // plan options not in use
    "capacity_requests_per_s",                         // closed-loop and offline runs offer no rate
    "prefix_cache",                                    // no prefix hashes, or the cache off
    "predicted_low", "predicted_high", "cv_predicted", "version"};

bool is_duration(const std::string& key) {
  for (const char* unit : {"_s", "_ms", "_us", "_days", "_hours"}) {
    const std::string u(unit);
    if (key.size() > u.size() && key.compare(key.size() - u.size(), u.size(), u) == 0) return true;
  }
  return key == "seconds";
}

void walk(const Json& v, const std::string& path, const std::string& key, std::vector<std::string>& bad) {
  if (v.is_null() && !key.empty() && !kNullable.count(key)) bad.push_back(path + ": null (a NaN or infinity?)");
  if (v.is_number_float() && !std::isfinite(v.get<double>())) bad.push_back(path + ": not finite");
  if (v.is_number() && is_duration(key) && v.get<double>() < 0) bad.push_back(path + ": negative duration " + v.dump());
  if (v.is_object())
    for (const auto& [k, x] : v.items()) walk(x, path + "." + k, k, bad);
  if (v.is_array())
    for (std::size_t i = 0; i < v.size(); ++i) walk(v[i], path + "[" + std::to_string(i) + "]", key, bad);
}

struct Extreme {
  const char* name;
  const char* args;
};

class FiniteJson : public ::testing::TestWithParam<Extreme> {};

TEST_P(FiniteJson, EveryNumberFiniteEveryDurationNonNegative) {
  const auto r = run_cli(std::string(GetParam().args) + " --json");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << GetParam().args << ": " << r.err;
  std::vector<std::string> bad;
  walk(Json::parse(r.out), "", "", bad);
  for (const auto& b : bad) ADD_FAILURE() << GetParam().args << ": " << b;
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, FiniteJson,
    ::testing::Values(
        Extreme{"train_million_chips", "train --system trn3-ultraserver-gen2 --model llama3.1-405b --chips 1048576 "
                                       "--max-global-batch-tokens 1e12 --train-tokens 1e17"},
        Extreme{"train_one_chip_short_sequences", "train --system h100-sxm-dgx --model llama3.1-8b --chips 1 --tp 1 --pp 1 "
                                                  "--global-batch 8 --seq-len 16"},
        Extreme{"train_limits_of_estimates", "train --system h100-sxm-dgx --model llama3.1-8b --chips 8 --tdp 100000 "
                                             "--price 10000 --train-tokens 1e17"},
        Extreme{"train_tiny_estimates", "train --system h100-sxm-dgx --model llama3.1-8b --chips 8 --tdp 0.001 "
                                        "--price 0.0001 --train-tokens 1"},
        Extreme{"serve_overload", "serve --system h100-sxm-dgx --model llama3.1-8b --chips 8 --rate 1e6 --requests 2000"},
        Extreme{"serve_one_token", "serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --in-len 1 --out-len 1 "
                                   "--requests 1"},
        Extreme{"serve_whole_context", "serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --in-len 131000 "
                                       "--out-len 72 --concurrency 1 --requests 2"},
        Extreme{"serve_sglang_tight_kv", "serve --system h100-sxm-dgx --model llama3.1-8b --framework sglang "
                                         "--requests 2000"},
        Extreme{"serve_trainium_static", "serve --system trn2-48xl --model llama3.1-8b --framework neuron-nxdi --tp 1 "
                                         "--chips 1 --requests 20"},
        Extreme{"collective_one_byte", "collective --system h100-sxm-dgx --op all-reduce --chips 2 --bytes 1"},
        Extreme{"collective_one_pib", "collective --system trn3-ultraserver-gen2 --op all-to-all --chips 1048576 "
                                      "--bytes 1125899906842624"},
        Extreme{"catalog_trn3", "catalog show trn3-ultraserver-gen2"},
        Extreme{"model_largest", "model show kimi-k2"},
        Extreme{"claims", "claims"}),
    [](const ::testing::TestParamInfo<Extreme>& i) { return std::string(i.param.name); });

}  // namespace
