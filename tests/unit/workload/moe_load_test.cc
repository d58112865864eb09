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

// 4,096 tokens on 8 expert-parallel ranks, each expert whole on its rank.
workload::LayerShard eight_rank_shard() {
  workload::LayerShard s;
  s.batch = 1;
  s.seq = 4096;
  s.ep = 8;
  s.etp = 1;
  return s;
}

}  // namespace

TEST(MoeLoad, TheBusiestRankRunsItsShareOfRowsTimesTheImbalance) {
  const auto m = workload::load_model("qwen3-30b-a3b", kMoeLoadModels);
  workload::LayerShard s = eight_rank_shard();
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

// Experts placed ep-ways inside a tensor-parallel group (serving with TP attention): the eight
// ranks hold the same 4,096 tokens, so the group routes 32,768 rows once and each rank's 16
// experts run 1/8 of them, 256 rows each, not the 2,048 of a rank that brings its own tokens.
TEST(MoeLoad, RanksThatShareTheirTokensSplitTheRoutedRows) {
  const auto m = workload::load_model("qwen3-30b-a3b", kMoeLoadModels);
  workload::LayerShard s = eight_rank_shard();
  s.tp = 8;
  s.expert_row_share = 1.0 / 8;
  const auto shared = workload::layer_ops(m, 0, s);
  EXPECT_EQ(op_named(shared, "expert_up").m, 32768 / 8 / 16);
  EXPECT_EQ(op_named(shared, "expert_up").count, 16);
  EXPECT_DOUBLE_EQ(op_named(shared, "moe_dispatch").elements, 2.0 * (32768 / 8) * 2048);
  // The router still scores every token the rank holds.
  EXPECT_EQ(op_named(shared, "router").m, 4096);
}
