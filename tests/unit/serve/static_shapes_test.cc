// Neuron's compiled static shapes (docs/serving.md, "Static shapes"): the bucket rule of NxD
// Inference's generate_buckets, prompts padded to their bucket, decode steps run for the whole
// compiled batch over the bucket of the batch's context. Expected values are derived in each
// test from the step cost model itself.
#include <gtest/gtest.h>

#include "../shipped_data.h"

#include "xpusim/hw/catalog.h"
#include "xpusim/serve/scenario.h"

namespace xs = xpusim::serve;

namespace {

using xpusim::test::catalog;
using xpusim::test::model;
using xpusim::test::shipped;

// generate_buckets(128, L): 2^i for i in [7, round(log2 L)), then L.
TEST(StaticShapes, BucketsArePowersOfTwoBelowTheCompiledLengthThenTheLengthItself) {
  const xs::StaticShapes nxdi{128, 12800};  // log2 12800 = 13.64 -> 14: 128 .. 8192, 12800
  EXPECT_EQ(nxdi.bucket(1), 128);
  EXPECT_EQ(nxdi.bucket(128), 128);
  EXPECT_EQ(nxdi.bucket(129), 256);
  EXPECT_EQ(nxdi.bucket(5000), 8192);
  EXPECT_EQ(nxdi.bucket(8192), 8192);
  EXPECT_EQ(nxdi.bucket(10000), 12800);
  EXPECT_EQ(nxdi.bucket(12800), 12800);
  const xs::StaticShapes odd{128, 5000};  // log2 5000 = 12.29 -> 12: 128 .. 2048, 5000
  EXPECT_EQ(odd.bucket(2048), 2048);
  EXPECT_EQ(odd.bucket(2049), 5000);
  const xs::StaticShapes pow2{128, 4096};  // 128 .. 2048, 4096
  EXPECT_EQ(pow2.bucket(1500), 2048);
  EXPECT_EQ(pow2.bucket(3000), 4096);
}

TEST(StaticShapes, DynamicShapesBeyondTheCompiledLengthOrWithoutOneKeepOrRoundTheLength) {
  EXPECT_EQ((xs::StaticShapes{0, 4096}).bucket(1500), 1500);  // GPU stacks: dynamic
  EXPECT_EQ((xs::StaticShapes{128, 4096}).bucket(5000), 5000);  // longer than compiled: as is
  EXPECT_EQ((xs::StaticShapes{128, 0}).bucket(1500), 2048);      // no compiled length: next 2^k
  EXPECT_EQ((xs::StaticShapes{128, 0}).bucket(64), 128);
  EXPECT_EQ((xs::StaticShapes{128, 100}).bucket(50), 100);       // compiled below the first bucket
}

xs::StepWork prompt_step(long long tokens) {
  xs::StepWork w;
  w.prefill_tokens = tokens;
  w.prefill_pairs = static_cast<double>(tokens) * static_cast<double>(tokens) / 2.0;
  w.prefill_seqs = w.sampled_prefills = 1;
  return w;
}

xs::StepWork decode_step(long long seqs, double context_sum) {
  xs::StepWork w;
  w.decode_seqs = seqs;
  w.decode_context = context_sum;
  return w;
}

// One request of prompt P and output O on one Trn2 chip (Llama-3.1-8B, NxDI): with static shapes
// and a compiled length of 4096 the prompt runs as its bucket, and every decode step runs the
// compiled batch of 4 lines over the bucket of the context, so TTFT and the decode time are the
// step cost model's at the padded shapes.
TEST(StaticShapes, APromptRunsAsItsBucketAndDecodeRunsTheCompiledBatchOverItsBucket) {
  const auto& sys = catalog().system("trn2-48xl");
  const auto m = model("llama3.1-8b");
  const auto prof = xs::framework_profile(xs::Framework::NeuronNxdi, "", sys.chip, shipped());
  ASSERT_EQ(prof.static_shape_min_bucket, 128);
  xs::ReplicaPlan plan;
  plan.plan.tp = 1;
  const xs::StepCostModel cost(sys, m, plan, prof, xpusim::mapping::memory_params(shipped()), nullptr);
  const long long p = 1500, out = 3;
  xs::SimSpec spec;
  spec.pool.cost = &cost;
  spec.load.arrival = xs::ArrivalKind::Trace;
  spec.load.trace = {xs::Request{0, p, out}};
  spec.load.requests = 1;
  spec.scheduler.chunked_prefill = false;
  spec.scheduler.max_num_seqs = 4;
  spec.scheduler.static_shapes = xs::StaticShapes{128, 4096};
  const auto padded = xs::simulate(spec);
  // Prompt: 1,500 tokens run as 2,048. Decode steps: contexts 1,501 and 1,502, bucket 2,048,
  // four compiled lines.
  const double ttft = cost.time(prompt_step(2048)).base();
  const double decode = 2.0 * cost.time(decode_step(4, 4.0 * 2048)).base();
  ASSERT_EQ(padded.ttft_each_s.size(), 1u);
  EXPECT_NEAR(padded.ttft_each_s[0], ttft, 1e-9);
  EXPECT_NEAR(padded.e2e_each_s[0], ttft + decode, 1e-9);

  spec.scheduler.static_shapes = xs::StaticShapes{};  // dynamic shapes: the request's own sizes
  const auto dynamic = xs::simulate(spec);
  EXPECT_NEAR(dynamic.ttft_each_s[0], cost.time(prompt_step(p)).base(), 1e-9);
  EXPECT_LT(dynamic.e2e_each_s[0], padded.e2e_each_s[0]);
}

}  // namespace
