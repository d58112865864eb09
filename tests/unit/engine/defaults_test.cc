// The one rule for unstated training settings (engine/defaults.h). Expected values are derived
// here from the published rule: about 4M tokens (2^22) below 100B total parameters, about 16M
// (2^24) from there; whole micro-batches per data-parallel rank; never fewer micro-batches than
// the pipeline needs (pp; 2·pp for DualPipe; a multiple of pp when interleaved) unless stated.
#include <gtest/gtest.h>

#include "../shipped_data.h"
#include "xpusim/engine/defaults.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"

namespace {

using namespace xpusim;

const std::string kModels = std::string(XS_TESTDATA_DIR) + "/models";
constexpr double kSmallBatchTokens = 4194304.0;   // 2^22
constexpr double kLargeBatchTokens = 16777216.0;  // 2^24

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

mapping::TrainPlan layout(int tp, int pp, int dp, long long seq_len) {
  mapping::TrainPlan p;
  p.tp = tp, p.pp = pp, p.dp = dp, p.seq_len = seq_len;
  return p;
}

TEST(TrainDefaults, A405BModelGetsTheLargeCriticalBatch) {
  const auto md = workload::load_model("llama3.1-405b", kModels);
  ASSERT_GE(workload::count_params(md).total, 1e11);
  const auto rule = engine::defaults_rule("megatron", test::shipped());
  const auto plan = layout(8, 16, 64, 8192);
  const auto d = engine::train_defaults(rule, {}, md, 8192, &plan);
  EXPECT_DOUBLE_EQ(d.batch_tokens.value, kLargeBatchTokens);
  EXPECT_EQ(d.batch_tokens.origin, engine::Origin::Rule);
  // 16M tokens / 8,192 = 2,048 sequences = 32 micro-batches of 1 on each of 64 ranks (≥ pp 16).
  EXPECT_EQ(d.global_batch.value, static_cast<long long>(kLargeBatchTokens) / 8192);
  EXPECT_EQ(d.global_batch.origin, engine::Origin::Rule);
  EXPECT_EQ(d.micro_batch.value, 1);
  EXPECT_EQ(d.micro_batch.origin, engine::Origin::Recipe);
  EXPECT_EQ(d.zero.value, mapping::Zero::Zero1);
}

TEST(TrainDefaults, An8BModelGetsTheSmallCriticalBatch) {
  const auto md = workload::load_model("llama3.1-8b", kModels);
  ASSERT_LT(workload::count_params(md).total, 1e11);
  const auto rule = engine::defaults_rule("megatron", test::shipped());
  const auto plan = layout(1, 1, 48, 8192);
  const auto d = engine::train_defaults(rule, {}, md, 8192, &plan);
  EXPECT_DOUBLE_EQ(d.batch_tokens.value, kSmallBatchTokens);
  // 512 sequences over 48 ranks: rounded up to 11 micro-batches each.
  EXPECT_EQ(d.global_batch.value, ceil_div(512, 48) * 48);
}

TEST(TrainDefaults, NeverFewerMicroBatchesThanThePipelineNeeds) {
  // The case: a >=100B model on pp 35; with dp 512 the critical batch (8,192 sequences
  // of 2,048) gives 16 micro-batches per pipeline, fewer than its 35 stages.
  const auto md = workload::load_model("megatron-gpt-530b", kModels);
  const auto rule = engine::defaults_rule("megatron", test::shipped());
  const auto plan = layout(8, 35, 512, 2048);
  const auto d = engine::train_defaults(rule, {}, md, 2048, &plan);
  EXPECT_EQ(d.global_batch.value, 35LL * 512);
  auto p = plan;
  p.global_batch = d.global_batch.value;
  EXPECT_GE(p.micro_batches(), 35);
}

TEST(TrainDefaults, InterleavedAndDualPipeRoundTheMicroBatches) {
  const auto md = workload::load_model("llama3.1-8b", kModels);
  const auto rule = engine::defaults_rule("megatron", test::shipped());
  auto inter = layout(1, 4, 100, 8192);
  inter.vpp = 2;
  engine::TrainStated st;
  st.vpp = 2;
  // 512 sequences / 100 ranks = 6 micro-batches, rounded up to a multiple of pp 4 = 8.
  EXPECT_EQ(engine::train_defaults(rule, st, md, 8192, &inter).global_batch.value, 8LL * 100);
  auto dual = layout(1, 16, 4, 8192);
  dual.schedule = "dualpipe";
  // 512 / 4 = 128 micro-batches ≥ 2·16 and even.
  EXPECT_EQ(engine::train_defaults(rule, {}, md, 8192, &dual).global_batch.value, 512);
  dual.dp = 64;  // 8 micro-batches < 2·16 = 32
  EXPECT_EQ(engine::train_defaults(rule, {}, md, 8192, &dual).global_batch.value, 32LL * 64);
}

// Within a bound: the largest whole number of micro-batches per data-parallel rank, at least
// the pipeline's, else none (0).
TEST(TrainDefaults, BatchWithinTokensIsTheLargestThatFitsOrNone) {
  auto plan = layout(8, 4, 100, 8192);  // 1F1B: at least 4 micro-batches of 100 sequences
  const double tokens = 2048.0 * 8192;  // 2,048 sequences
  EXPECT_EQ(engine::global_batch_within_tokens(tokens, plan), 20LL * 100);
  EXPECT_EQ(engine::global_batch_for_tokens(tokens, plan), 21LL * 100);  // the target rounds up
  plan.vpp = 2;  // interleaved: multiples of pp
  EXPECT_EQ(engine::global_batch_within_tokens(tokens, plan), 20LL * 100);
  plan.dp = 513;  // 4 x 513 = 2,052 > 2,048
  EXPECT_EQ(engine::global_batch_within_tokens(tokens, plan), 0);
  plan.pp = 1;  // no pipeline: 3 x 513 = 1,539 sequences fit
  plan.vpp = 1;
  EXPECT_EQ(engine::global_batch_within_tokens(tokens, plan), 3LL * 513);
}

TEST(TrainDefaults, AStatedBatchIsKeptEvenBelowThePipelineMinimum) {
  const auto md = workload::load_model("llama3.1-405b", kModels);
  const auto rule = engine::defaults_rule("megatron", test::shipped());
  const auto plan = layout(8, 16, 64, 8192);
  engine::TrainStated st;
  st.global_batch = 64;
  st.micro_batch = 1;
  const auto d = engine::train_defaults(rule, st, md, 8192, &plan);
  EXPECT_EQ(d.global_batch.value, 64);
  EXPECT_EQ(d.global_batch.origin, engine::Origin::Input);
  EXPECT_EQ(d.micro_batch.origin, engine::Origin::Input);
}

TEST(TrainDefaults, WithoutGradientAccumulationTheBatchIsOneLocalBatchPerRank) {
  const auto md = workload::load_model("llama3.1-8b", kModels);
  const auto rule = engine::defaults_rule("torchtitan", test::shipped());
  ASSERT_FALSE(rule.gradient_accumulation);
  const auto plan = layout(1, 1, 2, 131072);
  const auto d = engine::train_defaults(rule, {}, md, 131072, &plan);
  EXPECT_EQ(d.global_batch.value, 2);  // dp × micro-batch 1
  EXPECT_EQ(d.global_batch.origin, engine::Origin::Recipe);
  EXPECT_EQ(d.zero.value, mapping::Zero::Fsdp);
  // A stated global batch of 256 on dp 8 × pp 8: local batch 32 split into 8 micro-batches of 4.
  engine::TrainStated st;
  st.global_batch = 256;
  const auto pp8 = layout(8, 8, 8, 8192);
  EXPECT_EQ(engine::train_defaults(rule, st, md, 8192, &pp8).micro_batch.value, 4);
}

/// The settings of Llama-3.1-8B at 8,192 tokens on dp 8 under `framework` with the recompute
/// level stated.
engine::TrainDefaults stated_recompute_defaults(const std::string& framework, mapping::Recompute recompute) {
  const auto md = workload::load_model("llama3.1-8b", kModels);
  const auto plan = layout(1, 1, 8, 8192);
  engine::TrainStated st;
  st.recompute = recompute;
  return engine::train_defaults(engine::defaults_rule(framework, test::shipped()), st, md, 8192, &plan);
}

TEST(TrainDefaults, EverySettingIsDescribedWithItsOrigin) {
  const auto lines =
      engine::describe(stated_recompute_defaults("megatron", mapping::Recompute::Full), mapping::Recompute::Full, 0);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].rfind("global batch 512 sequences (rule: critical batch of 4,194,304 tokens", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1], "micro-batch 1 (recipe: megatron recipe)");
  EXPECT_EQ(lines[3], "recompute full (input)");
  EXPECT_NE(lines[4].find("optimizer sharding ZeRO-1 (recipe"), std::string::npos) << lines[4];
}

// A selective level that is not Megatron's says what it keeps (AXLearn's remat policy).
TEST(TrainDefaults, TheRecomputeLineNamesWhatSelectiveKeeps) {
  const auto d = stated_recompute_defaults("axlearn", mapping::Recompute::Selective);
  EXPECT_EQ(engine::describe(d, mapping::Recompute::Selective, 0, mapping::SelectiveScope::AllButProjections)[3],
            "recompute selective, keeping only the QKV and up-projection outputs (input)");
  EXPECT_EQ(engine::describe(d, mapping::Recompute::Selective, 0, mapping::SelectiveScope::AttentionCore)[3],
            "recompute selective (input)");
  EXPECT_EQ(engine::describe(d, mapping::Recompute::Full, 0, mapping::SelectiveScope::AllButProjections)[3],
            "recompute full (input)");
  EXPECT_EQ(engine::describe(d, mapping::Recompute::Full, 12)[3],
            "recompute full of the first 12 layers of each model chunk (Megatron --recompute-method block), the "
            "fewest that fit (input)");
}

}  // namespace
