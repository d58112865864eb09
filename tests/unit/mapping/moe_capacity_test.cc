// The busiest expert-parallel rank's routed rows over the mean (TrainPlan::moe_expert_load): the
// stated load imbalance F, capped at Megatron's capacity factor cf (tokens beyond it are dropped),
// or exactly cf when experts are padded to capacity.
#include <gtest/gtest.h>

#include "xpusim/mapping/plan.h"

namespace xpusim::mapping {
namespace {

TEST(MoeCapacity, TheBusiestRankRunsTheImbalanceCappedOrPaddedToCapacity) {
  TrainPlan p;
  EXPECT_DOUBLE_EQ(p.moe_expert_load(), 1.0);  // dropless and balanced
  p.moe_load_imbalance = 1.5;
  EXPECT_DOUBLE_EQ(p.moe_expert_load(), 1.5);  // dropless: every routed token runs
  p.moe_capacity_factor = 1.25;
  EXPECT_DOUBLE_EQ(p.moe_expert_load(), 1.25);  // the 0.25 above capacity is dropped
  p.moe_capacity_factor = 2.0;
  EXPECT_DOUBLE_EQ(p.moe_expert_load(), 1.5);  // a capacity above the load drops nothing
  p.moe_pad_to_capacity = true;
  EXPECT_DOUBLE_EQ(p.moe_expert_load(), 2.0);  // padded: every expert runs its whole capacity
  p.moe_load_imbalance = 1.0;
  p.moe_capacity_factor = 0.8;
  p.moe_pad_to_capacity = false;
  EXPECT_DOUBLE_EQ(p.moe_expert_load(), 0.8);  // below the mean share: drops even when balanced
}

}  // namespace
}  // namespace xpusim::mapping
