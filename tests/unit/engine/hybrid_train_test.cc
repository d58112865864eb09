// Training a hybrid (Nemotron-H): one tensor-parallel region per block, the SSD scan in the
// model FLOPs, and the Mamba head/group divisibility of the plan. Expected values are derived
// from the shapes, not read back from the engine.

#include <gtest/gtest.h>

#include "../shipped_data.h"

#include "xpusim/engine/train.h"
#include "xpusim/mapping/plan.h"
#include "xpusim/workload/accounting.h"

using namespace xpusim;

namespace {

engine::TrainScenario hybrid_scenario(const workload::ModelSpec& m, int tp) {
  engine::TrainScenario s;
  s.framework = engine::framework_params("megatron", test::shipped());
  s.calibration = &test::shipped();
  s.system = &test::catalog().system("h100-sxm-dgx");
  s.model = m;
  s.plan.tp = tp;
  s.plan.dp = 8 / tp;
  s.plan.micro_batch = 1;
  s.plan.global_batch = 4 * s.plan.dp;
  s.plan.seq_len = 8192;
  s.plan.precision = core::Dtype::Fp8;
  s.plan.zero = mapping::Zero::Zero1;
  s.plan.recompute = mapping::Recompute::None;
  return s;
}

}  // namespace

// Every block of a hybrid (Mamba-2, attention or MLP) ends in one row-parallel projection, one
// TP region; a transformer layer has two. Nemotron-H-8B's 52 blocks therefore move as many TP
// bytes as a 26-layer transformer of the same hidden size.
TEST(HybridTrain, OneTensorParallelRegionPerBlock) {
  const auto m = test::model("nemotron-h-8b");
  auto transformer = m;
  transformer.layer_blocks.clear();
  transformer.layers = 26;
  for (bool event : {false, true}) {
    const auto h = event ? engine::simulate_event(hybrid_scenario(m, 2)) : engine::simulate_analytical(hybrid_scenario(m, 2));
    const auto t = event ? engine::simulate_event(hybrid_scenario(transformer, 2))
                         : engine::simulate_analytical(hybrid_scenario(transformer, 2));
    ASSERT_TRUE(h.feasible) << h.reason;
    ASSERT_TRUE(t.feasible) << t.reason;
    EXPECT_GT(core::to_seconds(h.breakdown.tp_comm), 0.0);
    EXPECT_NEAR(core::to_seconds(h.breakdown.tp_comm) / core::to_seconds(t.breakdown.tp_comm), 1.0, 1e-9) << event;
  }
}

// MFU counts the model FLOPs of the hybrid, the SSD scan included (workload::train_flops_per_token).
TEST(HybridTrain, ModelFlopsIncludeTheScan) {
  const auto m = test::model("nemotron-h-8b");
  const auto r = engine::simulate_analytical(hybrid_scenario(m, 1));
  ASSERT_TRUE(r.feasible) << r.reason;
  const double per_token = workload::train_flops_per_token(m, 8192, workload::RecomputeKind::None).model;
  EXPECT_NEAR(r.model_tflops_per_chip / (per_token * r.tokens_per_s_per_chip / 1e12), 1.0, 1e-9);
  EXPECT_GT(per_token, 6.0 * workload::count_params(m).matmul_active);
}

// tp must divide the Mamba heads and groups as it divides the attention heads: tp 16 divides
// Nemotron-H-8B's 32 attention and 128 Mamba heads but not its 8 groups.
TEST(HybridTrain, TensorParallelMustDivideTheMambaGroups) {
  const auto m = test::model("nemotron-h-8b");
  mapping::TrainPlan p;
  p.tp = 16;
  p.global_batch = 1;
  p.micro_batch = 1;
  p.seq_len = 4096;
  const auto r = mapping::check_train_plan(p, m, 16);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().find("128 Mamba heads and 8 groups"), std::string::npos) << r.error();
}

// A gated DeltaNet layer (Qwen3-Next) is a mixer then an MLP, two TP regions like a transformer
// layer: the same model with every layer attention moves the same TP bytes.
TEST(HybridTrain, DeltaNetLayersCloseTwoTensorParallelRegions) {
  const auto m = test::model("qwen3-next-80b-a3b");
  auto transformer = m;
  transformer.layer_blocks.clear();
  auto s = hybrid_scenario(m, 2);
  auto t = hybrid_scenario(transformer, 2);
  s.plan.ep = t.plan.ep = 4;
  const auto h = engine::simulate_analytical(s);
  const auto a = engine::simulate_analytical(t);
  ASSERT_TRUE(h.feasible) << h.reason;
  ASSERT_TRUE(a.feasible) << a.reason;
  EXPECT_GT(core::to_seconds(h.breakdown.tp_comm), 0.0);
  EXPECT_NEAR(core::to_seconds(h.breakdown.tp_comm) / core::to_seconds(a.breakdown.tp_comm), 1.0, 1e-9);
}

// A Mamba-only model (Mamba-Codestral, 64 Mamba-2 layers) trains: one TP region per layer, as
// many TP bytes as a 32-layer transformer of the same hidden size; no attention in its FLOPs, the
// scan in them; the engines agree on the TP traffic.
TEST(HybridTrain, MambaOnlyModelTrainsWithOneRegionPerLayer) {
  const auto m = test::model("mamba-codestral-7b");
  ASSERT_EQ(m.attention_layers(), 0);
  auto transformer = test::model("nemotron-h-8b");
  transformer.layer_blocks.clear();
  transformer.layers = 32;
  for (bool event : {false, true}) {
    const auto s = event ? engine::simulate_event(hybrid_scenario(m, 2)) : engine::simulate_analytical(hybrid_scenario(m, 2));
    const auto t = event ? engine::simulate_event(hybrid_scenario(transformer, 2))
                         : engine::simulate_analytical(hybrid_scenario(transformer, 2));
    ASSERT_TRUE(s.feasible) << s.reason;
    ASSERT_TRUE(t.feasible) << t.reason;
    EXPECT_NEAR(core::to_seconds(s.breakdown.tp_comm) / core::to_seconds(t.breakdown.tp_comm), 1.0, 1e-9) << event;
  }
  const double per_token = workload::train_flops_per_token(m, 8192, workload::RecomputeKind::None).model;
  const double scan = 3.0 * 64 * workload::mamba_scan_flops_per_token(m, 8192);
  EXPECT_NEAR(per_token, 6.0 * workload::count_params(m).matmul_active + scan, 1.0);
}
