// Multi-token prediction in training (DeepSeek-V3's MTP modules, Megatron's mtp_num_layers): each
// module is a copy of the last layer's block, two norms and eh_proj (2h → h), and a second pass
// through the shared embedding, LM head and loss, all on the last pipeline stage. Expected values
// are derived from the operators and the parameter counts, not read back from the engine.

#include <gtest/gtest.h>

#include "../shipped_data.h"

#include "xpusim/compute/chip_model.h"
#include "xpusim/engine/train.h"
#include "xpusim/mapping/memory.h"
#include "xpusim/mapping/plan.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/ops.h"

using namespace xpusim;

namespace {

engine::TrainScenario mtp_scenario(const workload::ModelSpec& m, int mtp) {
  engine::TrainScenario s;
  s.framework = engine::framework_params("megatron", test::shipped());
  s.calibration = &test::shipped();
  s.system = &test::catalog().system("h100-sxm-dgx");
  s.model = m;
  s.plan.tp = 1;
  s.plan.dp = 8;
  s.plan.micro_batch = 1;
  s.plan.global_batch = 32;
  s.plan.seq_len = 4096;
  s.plan.zero = mapping::Zero::Zero1;
  s.plan.recompute = mapping::Recompute::None;
  s.plan.mtp_layers = mtp;
  return s;
}

}  // namespace

// One MTP module on a one-stage Llama-3.1-8B costs what a 33rd layer costs plus, per micro-batch,
// the forward and backward of its own operators: its norms and eh_proj, the next token's
// embedding and the LM head with its loss (their op times from compute::ChipModel). Optimizer and
// gradient reduction of eh_proj's 2h² weights come on top, under 1% of the step here.
TEST(Mtp, AModuleCostsALayerPlusItsOwnOpsAndASecondHead) {
  const auto m = test::model("llama3.1-8b");
  auto deeper = m;
  deeper.layers = m.layers + 1;
  const auto with = engine::simulate_analytical(mtp_scenario(m, 1));
  const auto layer_more = engine::simulate_analytical(mtp_scenario(deeper, 0));
  ASSERT_TRUE(with.feasible) << with.reason;
  ASSERT_TRUE(layer_more.feasible) << layer_more.reason;
  const auto& chip_spec = test::catalog().system("h100-sxm-dgx").chip;
  const compute::ChipModel chip(chip_spec, compute::calibration_for(chip_spec, test::shipped()));
  workload::LayerShard shard;
  shard.seq = 4096;
  std::vector<workload::Op> ops = workload::mtp_ops(m, shard);
  for (const auto& more : {workload::embedding_ops(m, shard), workload::head_ops(m, shard)})
    ops.insert(ops.end(), more.begin(), more.end());
  compute::Precision prec;
  prec.gemm = core::Dtype::Bf16;
  double per_micro_batch = 0;
  for (const auto& op : ops)
    per_micro_batch += core::to_seconds(chip.time(op, prec, compute::Pass::Forward).time) +
                       core::to_seconds(chip.time(op, prec, compute::Pass::Backward).time);
  const double expected = core::to_seconds(layer_more.step_time) + 4 * per_micro_batch;  // 32 / 8 micro-batches
  EXPECT_NEAR(core::to_seconds(with.step_time) / expected, 1.0, 0.01);
  EXPECT_GT(core::to_seconds(with.step_time), expected);
}

// Memory on the last stage: the module's block (the last layer's parameters) and its norms and
// eh_proj, in weights (2 bytes), gradients and optimizer state; the first stage is unchanged.
TEST(Mtp, TheLastStageHoldsTheModulesWeights) {
  const auto m = test::model("llama3.1-8b");
  auto plan = mtp_scenario(m, 0).plan;
  plan.pp = 2;
  plan.dp = 4;
  const auto params = mapping::MemoryParams{};
  const auto last0 = mapping::train_memory_of_stage(m, plan, 1, params);
  const auto first0 = mapping::train_memory_of_stage(m, plan, 0, params);
  plan.mtp_layers = 1;
  const auto last1 = mapping::train_memory_of_stage(m, plan, 1, params);
  const auto first1 = mapping::train_memory_of_stage(m, plan, 0, params);
  const double module = workload::layer_params(m, m.layers - 1).total() + 2.0 * m.hidden + 2.0 * m.hidden * m.hidden;
  EXPECT_NEAR(core::to_bytes(last1.weights - last0.weights), 2.0 * module, 1.0);
  EXPECT_DOUBLE_EQ(core::to_bytes(first1.weights), core::to_bytes(first0.weights));
  EXPECT_GT(core::to_bytes(last1.activations), core::to_bytes(last0.activations));
}

// A negative depth is refused by the plan check, naming the field.
TEST(Mtp, ANegativeDepthIsRefused) {
  auto plan = mtp_scenario(test::model("llama3.1-8b"), -1).plan;
  const auto r = mapping::check_train_plan(plan, test::model("llama3.1-8b"), 8);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().find("mtp_layers"), std::string::npos) << r.error();
}
