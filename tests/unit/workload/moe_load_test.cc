// MoE load imbalance (LayerShard::expert_load): the busiest expert-parallel rank receives
// expert_load × the mean routed rows, so its grouped GEMMs and its permute run that many rows.
// Expected values derived from the balanced layer: Qwen3-30B-A3B (128 experts, top 8, expert
// FFN 768, hidden 2048) on 8 expert-parallel ranks, 4,096 tokens.

#include <gtest/gtest.h>

#include <string>

#include "xpusim/workload/hf_config.h"
#include "xpusim/workload/ops.h"

using namespace xpusim;

namespace {

const std::string kMoeLoadModels = std::string(XS_TESTDATA_DIR) + "/models";

const workload::Op& op_named(const std::vector<workload::Op>& ops, const std::string& name) {
  for (const auto& o : ops)
    if (o.name == name) return o;
  ADD_FAILURE() << "no op " << name;
  return ops.front();
}

}  // namespace

TEST(MoeLoad, TheBusiestRankRunsItsShareOfRowsTimesTheImbalance) {
  const auto m = workload::load_model("qwen3-30b-a3b", kMoeLoadModels);
  workload::LayerShard s;
  s.batch = 1;
  s.seq = 4096;
  s.ep = 8;
  s.etp = 1;
  const auto balanced = workload::layer_ops(m, 0, s);
  // Balanced: 4,096 tokens × 8 choices = 32,768 rows over the 16 local experts: 2,048 each.
  EXPECT_EQ(op_named(balanced, "expert_up").m, 2048);
  EXPECT_EQ(op_named(balanced, "expert_up").count, 16);
  EXPECT_DOUBLE_EQ(op_named(balanced, "moe_dispatch").elements, 2.0 * 32768 * 2048);
  s.expert_load = 1.5;
  const auto busy = workload::layer_ops(m, 0, s);
  // 1.5 × 32,768 = 49,152 rows: 3,072 per local expert; the permute moves them all.
  EXPECT_EQ(op_named(busy, "expert_up").m, 3072);
  EXPECT_EQ(op_named(busy, "expert_down").m, 3072);
  EXPECT_DOUBLE_EQ(op_named(busy, "moe_dispatch").elements, 2.0 * 49152 * 2048);
  // Attention and the router see the rank's own tokens, as balanced.
  EXPECT_EQ(op_named(busy, "router").m, op_named(balanced, "router").m);
  EXPECT_EQ(op_named(busy, "qkv_proj").m, op_named(balanced, "qkv_proj").m);
}
