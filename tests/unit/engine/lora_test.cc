// LoRA fine-tuning: frozen base weights (input gradients only), rank-r adapters on the attention
// projections, and only the adapters reduced, held in the optimizer and checkpointed. Each
// expected value is derived here from the model's shapes, not read back from the engine.

#include <gtest/gtest.h>

#include "../shipped_data.h"

#include <algorithm>

#include "xpusim/compute/chip_model.h"
#include "xpusim/engine/train.h"
#include "xpusim/mapping/memory.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/ops.h"

using namespace xpusim;

namespace {

constexpr auto kAttention = workload::LoraTargets::Attention;
constexpr auto kAllLinear = workload::LoraTargets::AllLinear;

engine::TrainScenario lora_scenario(int lora_rank, int tp = 8, int dp = 1) {
  engine::TrainScenario s;
  s.framework = engine::framework_params("megatron", test::shipped());
  s.calibration = &test::shipped();
  s.system = &test::catalog().system("h100-sxm-dgx");
  s.model = test::model("llama2-70b");
  s.plan.tp = tp;
  s.plan.dp = dp;
  s.plan.micro_batch = 1;
  s.plan.global_batch = 8 * dp;
  s.plan.seq_len = 8192;
  s.plan.precision = core::Dtype::Fp8;
  s.plan.zero = mapping::Zero::None;
  s.plan.recompute = mapping::Recompute::None;
  s.plan.lora_rank = lora_rank;
  s.plan.lora_targets = kAttention;
  return s;
}

}  // namespace

// Llama-2-70B: hidden 8192, 64 query and 8 KV heads of 128. Rank 16 on the fused QKV projection
// (8192 in, (64 + 2·8)·128 = 10,240 out) and the output projection (8192 in, 8192 out):
// 16·(8192 + 10240) + 16·(8192 + 8192) = 557,056 per layer, 44,564,480 for 80 layers. Every
// linear layer adds the gated MLP's up (8192 in, 2·28,672 out) and down (28,672 in, 8192 out):
// 16·65,536 + 16·36,864 = 1,638,400 more.
TEST(Lora, AdapterWeightsAreRankTimesInPlusOutOfEachAdaptedWeight) {
  const auto m = test::model("llama2-70b");
  EXPECT_DOUBLE_EQ(workload::lora_layer_params(m, 0, 16, kAttention), 557056.0);
  EXPECT_DOUBLE_EQ(workload::lora_params(m, 16, kAttention), 80 * 557056.0);
  EXPECT_DOUBLE_EQ(workload::lora_layer_params(m, 0, 16, kAllLinear), 557056.0 + 1638400.0);
  EXPECT_DOUBLE_EQ(workload::lora_params(m, 0, kAllLinear), 0.0);
}

// A layer's operators under LoRA: every base weight frozen, two adapter GEMMs after each
// attention projection with the projection's own (sharded) in and out dimensions.
TEST(Lora, LayerOpsFreezeTheBaseWeightsAndAdaptTheAttentionProjections) {
  const auto m = test::model("llama2-70b");
  workload::LayerShard s;
  s.seq = 4096;
  s.tp = 8;
  s.lora_rank = 16;
  s.lora_targets = kAttention;
  int adapters = 0, frozen = 0;
  const auto ops = workload::layer_ops(m, 0, s);
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    if (!op.is_weight_gemm()) continue;
    if (!op.frozen) {
      ++adapters;
      continue;
    }
    ++frozen;
    if (!op.is_attention_projection()) continue;
    ASSERT_LT(i + 2, ops.size());
    EXPECT_EQ(ops[i + 1].m, op.m);
    EXPECT_EQ(ops[i + 1].k, op.k);
    EXPECT_EQ(ops[i + 1].n, 16);
    EXPECT_EQ(ops[i + 2].k, 16);
    EXPECT_EQ(ops[i + 2].n, op.n);
  }
  EXPECT_EQ(frozen, 4);    // qkv, o, mlp up (gate + up), mlp down
  EXPECT_EQ(adapters, 4);  // A and B of qkv and of o
  s.lora_targets = kAllLinear;
  adapters = 0;
  for (const auto& op : workload::layer_ops(m, 0, s)) adapters += op.is_weight_gemm() && !op.frozen;
  EXPECT_EQ(adapters, 8);  // and of the MLP's up and down
  s.lora_rank = 0;
  for (const auto& op : workload::layer_ops(m, 0, s)) EXPECT_FALSE(op.frozen) << op.name;
}

// A frozen GEMM's backward is its input gradient alone: the forward's FLOPs, and for a large
// compute-bound GEMM the forward's time; a trained one's backward is twice both.
TEST(Lora, AFrozenGemmsBackwardIsOneGemmLikeItsForward) {
  const compute::ChipModel chip(test::catalog().system("h100-sxm-dgx").chip,
                                compute::calibration_for(test::catalog().system("h100-sxm-dgx").chip, test::shipped()));
  workload::LayerShard s;
  s.seq = 8192;
  const auto ops = workload::layer_ops(test::model("llama2-70b"), 0, s);
  workload::Op up = *std::find_if(ops.begin(), ops.end(), [](const auto& o) { return o.name == "mlp_up"; });
  const compute::Precision bf16;
  const auto fwd = chip.time(up, bf16, compute::Pass::Forward);
  const auto trained = chip.time(up, bf16, compute::Pass::Backward);
  up.frozen = true;
  const auto frozen = chip.time(up, bf16, compute::Pass::Backward);
  EXPECT_DOUBLE_EQ(frozen.flops.base(), fwd.flops.base());
  EXPECT_DOUBLE_EQ(trained.flops.base(), 2.0 * fwd.flops.base());
  ASSERT_TRUE(fwd.compute_bound);
  EXPECT_NEAR(core::to_seconds(frozen.time) / core::to_seconds(fwd.time), 1.0, 1e-9);
}

// Model FLOPs per token: full training 6N + 3·attention; LoRA 4N + 3·attention + 6·adapters, so
// the difference is exactly 2N − 6·adapters.
TEST(Lora, ModelFlopsDropTheBaseWeightGradients) {
  const auto m = test::model("llama2-70b");
  const double n = workload::count_params(m).matmul_active;
  const auto full = workload::train_flops_per_token(m, 8192, workload::RecomputeKind::None);
  for (auto targets : {kAttention, kAllLinear}) {
    const auto lora = workload::train_flops_per_token(m, 8192, workload::RecomputeKind::None, 16, targets);
    EXPECT_NEAR((full.model - lora.model) / (2.0 * n - 6.0 * workload::lora_params(m, 16, targets)), 1.0, 1e-12);
  }
}

// Memory: the frozen weights stay, while gradients (2 bytes) and optimizer state (12 bytes) exist
// for the adapters only, split over tp like their projections.
TEST(Lora, OnlyTheAdaptersHoldGradientsAndOptimizerState) {
  const auto s = lora_scenario(16);
  const auto r = engine::simulate_analytical(s);
  ASSERT_TRUE(r.feasible) << r.reason;
  const double adapters_per_chip = workload::lora_params(s.model, 16, kAttention) / 8.0;
  EXPECT_NEAR(core::to_bytes(r.memory.gradients) / (2.0 * adapters_per_chip), 1.0, 1e-9);
  EXPECT_NEAR(core::to_bytes(r.memory.optimizer) / (12.0 * adapters_per_chip), 1.0, 1e-9);
  const auto full = engine::simulate_analytical(lora_scenario(0));
  EXPECT_GT(core::to_bytes(full.memory.gradients), 1000.0 * core::to_bytes(r.memory.gradients));
  EXPECT_NEAR(core::to_bytes(r.memory.weights) / core::to_bytes(full.memory.weights), 1.0, 1e-2);
}

// The step: the frozen weights' GEMMs lose their weight gradients, so the FLOPs fall from
// 6N + 3·attention to 4N + 3·attention + 6·adapters per token (about 0.69 here). The compute falls
// less, since the rank-16 adapter GEMMs are memory-bound (each reads or writes a whole layer
// input or output for 16 columns of math), but it must fall by over a tenth: the weight
// gradients are about a quarter of a full step's compute. The data-parallel gradient reduction
// and the optimizer carry the adapters only.
TEST(Lora, TheStepDropsTheBaseWeightGradientsAndTheirReduction) {
  const auto m = test::model("llama2-70b");
  const double flops_ratio =
      workload::train_flops_per_token(m, 8192, workload::RecomputeKind::None, 16, kAttention).model /
      workload::train_flops_per_token(m, 8192, workload::RecomputeKind::None).model;
  ASSERT_GT(flops_ratio, 2.0 / 3.0);
  for (bool event : {false, true}) {
    const auto lora = lora_scenario(16, 8, 4), full = lora_scenario(0, 8, 4);
    const auto rl = event ? engine::simulate_event(lora) : engine::simulate_analytical(lora);
    const auto rf = event ? engine::simulate_event(full) : engine::simulate_analytical(full);
    ASSERT_TRUE(rl.feasible && rf.feasible);
    const double ratio = core::to_seconds(rl.breakdown.compute) / core::to_seconds(rf.breakdown.compute);
    EXPECT_GT(ratio, flops_ratio) << (event ? "event" : "analytical");
    EXPECT_LT(ratio, 0.9) << (event ? "event" : "analytical");
    EXPECT_LT(core::to_seconds(rl.breakdown.dp_comm), 0.01 * core::to_seconds(rf.breakdown.dp_comm) + 1e-4);
    EXPECT_LT(core::to_seconds(rl.breakdown.optimizer), 0.01 * core::to_seconds(rf.breakdown.optimizer) + 1e-4);
    // MFU counts 4N + 3·attention + 6·adapters per token (ModelFlopsDropTheBaseWeightGradients).
    const auto flops = workload::train_flops_per_token(lora.model, 8192, workload::RecomputeKind::None, 16, kAttention);
    EXPECT_NEAR(rl.model_tflops_per_chip * 1e12 * core::to_seconds(rl.step_time) * 32.0 /
                    (flops.model * 8192.0 * 32.0),
                1.0, 1e-9);
  }
}

// Activations: PyTorch autograd and Transformer Engine keep a GEMM's input only for its weight's
// gradient, so a frozen GEMM without an adapter keeps none. Llama-2-70B in fp8 (1-byte saved
// inputs) with adapters on the attention projections: each layer drops the MLP's input
// (h bytes per token, replicated unless sequence-parallel) and the down-projection's input
// (ffn bytes per token over tp); the gate and up outputs stay (the SwiGLU backward reads them).
// Adapting every linear layer keeps them all. Mixtral's router and routed experts are never
// adapted: with all-linear adapters its MoE layer drops the input, the k permuted copies of it
// (2·k·h bytes) and the k experts' down-projection inputs (k·ffn).
TEST(Lora, AFrozenGemmKeepsNoInputForItsBackward) {
  const auto per_token = [](const workload::ModelSpec& m, const mapping::TrainPlan& p) {
    return core::to_bytes(mapping::activation_bytes_per_layer_no_recompute(m, p, 1)) / (8192.0 * p.micro_batch);
  };
  auto s = lora_scenario(0);
  const double sp = s.plan.sequence_parallel ? 8.0 : 1.0;
  const double full = per_token(s.model, s.plan);
  s.plan.lora_rank = 16;
  EXPECT_NEAR(full - per_token(s.model, s.plan), 8192.0 / sp + 28672.0 / 8.0, 1e-6);
  s.plan.lora_targets = kAllLinear;
  EXPECT_DOUBLE_EQ(per_token(s.model, s.plan), full);

  s.model = test::model("mixtral-8x7b");
  s.plan.lora_rank = 0;
  const double moe_full = per_token(s.model, s.plan);
  s.plan.lora_rank = 16;
  const double h = 4096, k = 2, ffn = 14336;
  EXPECT_NEAR(moe_full - per_token(s.model, s.plan), h / sp + (2.0 * k * h + k * ffn) / 8.0, 1e-6);
}
