// Serving near saturation and MoE on compiled stacks: the schedule-ahead (overlap) scheduler
// and the experts a MoE step runs, with expectations derived in each test (docs/serving.md).
#include <gtest/gtest.h>

#include "../shipped_data.h"

#include <cmath>

#include "xpusim/hw/catalog.h"
#include "xpusim/serve/scenario.h"
#include "xpusim/workload/hf_config.h"
#include "xpusim/workload/ops.h"

namespace xs = xpusim::serve;
namespace wl = xpusim::workload;

namespace {

using xpusim::test::catalog;
using xpusim::test::shipped;

using xpusim::test::model;

xs::StepWork decode(double ctx) {
  xs::StepWork w;
  w.decode_seqs = 1;
  w.decode_context = ctx;
  return w;
}

xs::StepWork mixed(double ctx, long long prompt) {
  xs::StepWork w = decode(ctx);
  w.prefill_tokens = prompt;
  w.prefill_pairs = static_cast<double>(prompt) * static_cast<double>(prompt) / 2.0;
  w.prefill_seqs = w.sampled_prefills = 1;
  return w;
}

// One engine decodes request A (prompt p, long output); request B (prompt p) arrives in the
// middle of a decode step. Without schedule-ahead B joins the next step: TTFT = (end of the
// running step − arrival) + mixed step. With it the next step was formed when the running one
// started, so B joins the step after: TTFT grows by exactly one decode-only step.
TEST(Saturation, ScheduleAheadAddsOneDecodeStepToTheTtftOfAMidStepArrival) {
  const auto& sys = catalog().system("h100-sxm-dgx");
  const auto m = model("llama3.1-8b");
  const auto prof = xs::framework_profile(xs::Framework::Vllm, "", sys.chip, shipped());
  const xs::StepCostModel cost(sys, m, xs::ReplicaPlan{}, prof, xpusim::mapping::memory_params(shipped()), nullptr);
  const long long p = 512;
  xs::StepWork first;
  first.prefill_tokens = p;
  first.prefill_pairs = static_cast<double>(p) * static_cast<double>(p) / 2.0;
  first.prefill_seqs = first.sampled_prefills = 1;
  const double tp = cost.time(first).base();
  const double td0 = cost.time(decode(static_cast<double>(p + 1))).base();
  const double arrival = tp + 2.5 * td0;  // mid third decode step
  // The closed form: walk A's decode steps (context p+1+i) to the one running at `arrival`.
  double end = tp;
  long long i = 0;
  while (end <= arrival) end += cost.time(decode(static_cast<double>(p + 1 + i++))).base();
  const double ctx = static_cast<double>(p + 1 + i);
  const double off = end - arrival + cost.time(mixed(ctx, p)).base();
  const double on = end - arrival + cost.time(decode(ctx)).base() + cost.time(mixed(ctx + 1, p)).base();

  xs::SimSpec spec;
  spec.pool.cost = &cost;
  spec.load.arrival = xs::ArrivalKind::Trace;
  spec.load.trace = {xs::Request{0, p, 400}, xs::Request{xpusim::core::to_sim_time(xpusim::core::seconds(arrival)), p, 2}};
  spec.load.requests = 2;
  for (bool ahead : {false, true}) {
    spec.scheduler.schedule_ahead = ahead;
    const auto r = xs::simulate(spec);
    ASSERT_EQ(r.ttft_each_s.size(), 2u);
    // Completion order: B (two tokens) finishes first.
    const double ttft_b = r.ttft_each_s[0];
    EXPECT_NEAR(ttft_b, ahead ? on : off, 1e-9) << ahead;
    // A request that finds the engine idle is never delayed.
    const double ttft_a = r.ttft_each_s[1];
    EXPECT_NEAR(ttft_a, tp, 1e-9) << ahead;
  }
}

// Uniform top-k routing: an expert is idle when none of T tokens picks it, probability
// (1 − k/E)^T, so E_local·(1 − (1 − k/E)^T) experts run.
TEST(Saturation, TouchedExpertsFollowUniformRouting) {
  EXPECT_NEAR(wl::expected_touched_experts(256, 256, 8, 1), 8.0, 1e-9);
  EXPECT_NEAR(wl::expected_touched_experts(8, 8, 2, 2), 8.0 * (1.0 - 0.75 * 0.75), 1e-12);
  EXPECT_NEAR(wl::expected_touched_experts(32, 256, 8, 4096), 32.0, 1e-6);
  EXPECT_DOUBLE_EQ(wl::expected_touched_experts(16, 128, 4, 0), 0.0);
}

// The busiest of n expert-parallel ranks. The expected maximum of two standard normals is
// 1/sqrt(pi), of three 3/(2 sqrt(pi)). One token of gpt-oss-120b (128 experts, top 4) on 4 ranks of
// 32: p = 4/128 per expert, a rank's count has mean 1 and variance 32·p·(1 − p) = 0.96875, so the
// busiest rank runs 1 + 1.0294·0.9843 experts (1.0294 the expected maximum of four normals). A
// prompt that touches every expert leaves no spread; one rank is the mean.
TEST(Saturation, TheBusiestExpertRankRunsMoreThanTheMean) {
  EXPECT_NEAR(wl::expected_max_of_normals(1), 0.0, 1e-12);
  EXPECT_NEAR(wl::expected_max_of_normals(2), 1.0 / std::sqrt(M_PI), 1e-6);
  EXPECT_NEAR(wl::expected_max_of_normals(3), 1.5 / std::sqrt(M_PI), 1e-6);
  EXPECT_NEAR(wl::expected_max_of_normals(4), 1.0294, 1e-4);
  // Beyond the table (wide EP over a rack): 100 normals, 2.5076 (Tippett's tables); once computed,
  // the same value again.
  EXPECT_NEAR(wl::expected_max_of_normals(100), 2.5076, 1e-3);
  EXPECT_EQ(wl::expected_max_of_normals(100), wl::expected_max_of_normals(100));
  EXPECT_NEAR(wl::busiest_rank_touched_experts(32, 128, 4, 1, 4), 1.0 + 1.0294 * std::sqrt(0.96875), 1e-3);
  EXPECT_NEAR(wl::busiest_rank_touched_experts(32, 128, 4, 1, 1), 1.0, 1e-12);
  EXPECT_NEAR(wl::busiest_rank_touched_experts(32, 128, 4, 100000, 8), 32.0, 1e-9);
}

long long expert_gemms(const wl::ModelSpec& m, long long tokens, wl::LayerShard::ExpertRows rows,
                       long long* rows_per_expert, long long block = 0) {
  wl::LayerShard s;
  s.seq = s.q_len = s.kv_len = tokens;
  s.expert_rows = rows;
  s.expert_block = block;
  int layer = 0;
  while (!m.layer_is_moe(layer)) ++layer;
  for (const auto& op : wl::layer_ops(m, layer, s))
    if (op.name == "expert_up") {
      *rows_per_expert = op.m;
      return op.count;
    }
  return 0;
}

// A one-token decode step of DeepSeek-V3 (256 experts, top 8, one chip holding all) runs 8
// experts on the touched path and all 256 otherwise. A 256-token prompt on 512-row blocks:
// 256·(1 − (1 − 8/256)^256) > 255.9 experts are routed to, so all 256 run, each with 8 rows
// padded to one block of 512; 4,096 tokens give 128 rows each, still one block.
TEST(Saturation, MoeStepRunsTheRoutedExpertsOrAllOfThem) {
  const auto m = model("deepseek-v3");
  using Rows = wl::LayerShard::ExpertRows;
  long long rows = 0;
  EXPECT_EQ(expert_gemms(m, 1, Rows::Touched, &rows), m.moe.experts_per_token);
  EXPECT_EQ(rows, 1);
  EXPECT_EQ(expert_gemms(m, 1, Rows::Balanced, &rows), m.moe.num_experts);
  EXPECT_EQ(expert_gemms(m, 4096, Rows::Touched, &rows), m.moe.num_experts);
  EXPECT_EQ(rows, 4096 * m.moe.experts_per_token / m.moe.num_experts);
  EXPECT_EQ(expert_gemms(m, 256, Rows::Blockwise, &rows, 512), m.moe.num_experts);
  EXPECT_EQ(rows, 512);
  EXPECT_EQ(expert_gemms(m, 256 * 512 / 8 + 1, Rows::Blockwise, &rows, 512), m.moe.num_experts);
  EXPECT_EQ(rows, 1024);  // 513 rows per expert: two blocks
}

// Decode on the touched path streams the routed experts' weights only: a batch-1 DeepSeek-V3
// step on 16 Trn2 chips reads far less than the 78 GiB of weights per chip.
TEST(Saturation, SkippingIdleExpertsCutsBatchOneDecodeToTheActiveWeights) {
  const auto& sys = catalog().system("trn2-48xl");
  const auto m = model("deepseek-v3");
  auto touched = xs::framework_profile(xs::Framework::NeuronNxdi, "", sys.chip, shipped());
  ASSERT_TRUE(touched.moe_skip_idle_experts);
  auto all = touched;
  all.moe_skip_idle_experts = false;
  xs::ReplicaPlan plan;
  plan.plan.tp = 16;
  const auto mem = xpusim::mapping::memory_params(shipped());
  const xs::StepCostModel a(sys, m, plan, touched, mem, nullptr), b(sys, m, plan, all, mem, nullptr);
  const double ba = a.cost(decode(512)).hbm_bytes.base(), bb = b.cost(decode(512)).hbm_bytes.base();
  EXPECT_GT(bb, 0.9 * a.memory().weights.base());
  EXPECT_LT(ba, 0.15 * bb);
}

// Experts ep-ways inside the tensor-parallel group: the eight ranks of a TP 8 engine hold the
// same prompt tokens, so with EP 8 each rank runs the rows routed to its own eighth of the
// experts, whole, and with EP 1 (expert TP 8) every row on an eighth of each expert's FFN. Either
// way a rank does 1/8 of the step's expert math: the step's FLOPs are the same.
TEST(Saturation, ExpertParallelInsideTheTensorGroupSplitsTheExpertMath) {
  const auto& sys = catalog().system("h100-sxm-dgx");
  const auto m = model("qwen3-235b-a22b");
  const auto prof = xs::framework_profile(xs::Framework::TensorRtLlm, "", sys.chip, shipped());
  const auto mem = xpusim::mapping::memory_params(shipped());
  xs::ReplicaPlan ep8, ep1;
  ep8.plan.tp = ep1.plan.tp = 8;
  ep8.plan.ep = 8;
  const xs::StepCostModel a(sys, m, ep8, prof, mem, nullptr), b(sys, m, ep1, prof, mem, nullptr);
  const auto prompt = mixed(1, 4096);
  EXPECT_NEAR(a.cost(prompt).flops.base(), b.cost(prompt).flops.base(), 1e-3 * b.cost(prompt).flops.base());
}

}  // namespace
