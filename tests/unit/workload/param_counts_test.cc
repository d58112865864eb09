// Parameter counts of every shipped model against the figures in ../shared/models/README.md
// (typed in by hand: total and, for MoE models, active per token incl. embedding + LM head).

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <string>

#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"

using namespace xpusim;
using workload::count_params;
using workload::load_model;

namespace {

const std::string kCountModels = std::string(XS_TESTDATA_DIR) + "/models";

struct CountCase {
  const char* id;
  double total_b;   ///< README total, billions
  double active_b;  ///< README active per token, billions (0 = dense: active == total)
};

const CountCase kCounts[] = {
    {"deepseek-v3", 671.03, 37.55},
    {"deepseek-v3.2", 671.88, 38.40},
    {"gpt-oss-120b", 116.83, 5.71},
    {"qwen3-30b-a3b", 30.53, 3.35},
    {"qwen3-235b-a22b", 235.09, 22.19},
    {"llama2-7b", 6.74, 0},
    {"llama2-13b", 13.02, 0},
    {"llama2-70b", 68.98, 0},
    {"llama3-8b", 8.03, 0},
    {"llama3-70b", 70.55, 0},
    {"llama3.1-8b", 8.03, 0},
    {"llama3.1-70b", 70.55, 0},
    {"llama3.1-405b", 405.85, 0},
    {"llama3.3-70b", 70.55, 0},
    {"mixtral-8x7b", 46.70, 12.88},
    {"gpt-j-6b", 6.05, 0},
    {"falcon-180b", 178.56, 0},
    {"nemotron4-340b", 341.03, 0},
    {"nemotron-h-8b", 8.10, 0},
    {"nemotron-h-56b", 56.32, 0},
    {"qwen3-next-80b-a3b", 79.67, 3.87},
    {"glm-4.5-air", 106.85, 13.42},
    {"glm-4.5", 352.80, 33.63},
    {"kimi-k2", 1026.41, 32.86},
    {"jamba-1.5-mini", 51.57, 12.11},
    {"jamba-1.5-large", 398.56, 94.15},
    {"mamba-2.8b", 2.77, 0},
    {"falcon-mamba-7b", 7.27, 0},
    {"mamba-codestral-7b", 7.29, 0},
    {"gpt3-175b", 174.60, 0},
    {"gpt3-5b", 5.05, 0},
    {"gpt3-20b", 20.26, 0},
    {"megatron-gpt-1.7b", 1.65, 0},
    {"megatron-gpt-3.6b", 3.56, 0},
    {"megatron-gpt-7.5b", 7.47, 0},
    {"megatron-gpt-18.4b", 18.45, 0},
    {"megatron-gpt-39.1b", 39.10, 0},
    {"megatron-gpt-76.1b", 76.05, 0},
    {"megatron-gpt-145.6b", 145.62, 0},
    {"megatron-gpt-310.1b", 310.13, 0},
    {"megatron-gpt-530b", 529.60, 0},
    {"megatron-gpt-1t", 1008.04, 0},
    {"megatron-gpt-22b", 22.07, 0},
    {"mpt-3b", 2.65, 0},
    {"mpt-7b", 6.65, 0},
    {"mpt-13b", 12.84, 0},
    {"mpt-30b", 29.96, 0},
    {"mpt-70b", 64.84, 0},
    // Added 2026-12-04 (data/models/README.md: other models of the same sources' tables); each
    // is within 0.5 % of its card's count as well (the card's figure in the README).
    {"gpt-oss-20b", 20.91, 4.19},
    {"mixtral-8x22b", 140.62, 39.15},
    {"nemotron4-15b", 15.63, 0},
    {"nemotron3-8b", 8.54, 0},
    {"nemotron3-22b", 21.27, 0},
    {"gpt-neox-20b", 20.55, 0},
    {"pythia-6.9b", 6.857, 0},
    {"qwen2.5-7b", 7.616, 0},
    {"gemma2-9b", 9.241, 0},
    {"phi3-mini", 3.821, 0},
    {"dbrx", 131.60, 36.47},
    {"command-r", 34.98, 0},
    {"command-a", 111.06, 0},
    {"deepseek-v2-lite", 15.706, 2.661},
    {"qwen1.5-moe-a2.7b", 14.316, 2.689},
    {"mpt-125m", 0.125, 0},
    {"mpt-350m", 0.356, 0},
    {"mpt-760m", 0.760, 0},
    {"mpt-1b", 1.315, 0},
    {"llama3.2-1b", 1.24, 0},
    {"llama3.2-3b", 3.21, 0},
    {"llama4-maverick", 400.71, 17.18},
    {"llama4-scout", 107.77, 17.17},
    {"qwen3-8b", 8.19, 0},
    {"qwen3-14b", 14.77, 0},
    {"qwen3-32b", 32.76, 0},
    {"qwen2.5-72b", 72.71, 0},
    {"mistral-7b", 7.24, 0},
};

class ParamCountTest : public ::testing::TestWithParam<CountCase> {};

TEST_P(ParamCountTest, TotalAndActiveWithinHalfAPercentOfReadme) {
  const CountCase& c = GetParam();
  const auto m = load_model(c.id, kCountModels);
  const auto p = count_params(m);
  const double total = c.total_b * 1e9;
  const double active = (c.active_b > 0 ? c.active_b : c.total_b) * 1e9;
  EXPECT_NEAR(p.total / total, 1.0, 0.005) << c.id << " total " << p.total;
  EXPECT_NEAR(p.active / active, 1.0, 0.005) << c.id << " active " << p.active;
  EXPECT_EQ(m.is_moe(), c.active_b > 0) << c.id;
  RecordProperty("total_ratio", std::to_string(p.total / total));
  RecordProperty("active_ratio", std::to_string(p.active / active));
}

std::string case_name(const ::testing::TestParamInfo<CountCase>& p) {
  std::string n = p.param.id;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(AllShippedModels, ParamCountTest, ::testing::ValuesIn(kCounts), case_name);

TEST(ParamCount, EveryShippedModelIsInTheTable) {
  const auto ids = workload::model_ids(kCountModels);
  EXPECT_EQ(ids.size(), std::size(kCounts));
  for (const auto& id : ids) {
    bool found = false;
    for (const auto& c : kCounts) found = found || id == c.id;
    EXPECT_TRUE(found) << id;
  }
}

}  // namespace
