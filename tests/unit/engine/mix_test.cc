// The layer split of a mixed pipeline (engine/mix.h): stages finish together.

#include <gtest/gtest.h>

#include <algorithm>

#include "xpusim/core/diagnostics.h"
#include "xpusim/engine/mix.h"

namespace xpusim::engine {
namespace {

double slowest(const std::vector<int>& split, const std::vector<int>& stages, const std::vector<double>& t) {
  double worst = 0;
  size_t i = 0;
  for (size_t k = 0; k < stages.size(); ++k)
    for (int s = 0; s < stages[k]; ++s, ++i) worst = std::max(worst, split[i] * t[k]);
  return worst;
}

TEST(MixedLayerSplit, LayersFollowTheInverseOfEachKindsLayerTime) {
  // 2 slow stages (3 per layer) and 6 fast ones (1 per layer): the bound 12 holds 2 x 4 + 6 x 12 = 80.
  EXPECT_EQ(mixed_layer_split(80, {2, 6}, {3.0, 1.0}), (std::vector<int>{4, 4, 12, 12, 12, 12, 12, 12}));
  // Equal chips: an even split.
  EXPECT_EQ(mixed_layer_split(32, {2, 2}, {1.0, 1.0}), (std::vector<int>{8, 8, 8, 8}));
}

TEST(MixedLayerSplit, TheSlowestStageIsTheLeastAnySplitAllows) {
  // 4 + 4 stages, 32 layers, kind 1 twice as slow: any split has a stage of at least 6
  // (5 per fast stage and 2 per slow one hold only 28); the split reaches 6 and uses every layer.
  const std::vector<int> split = mixed_layer_split(32, {4, 4}, {1.0, 2.0});
  int total = 0;
  for (int l : split) {
    EXPECT_GE(l, 1);
    total += l;
  }
  EXPECT_EQ(total, 32);
  EXPECT_DOUBLE_EQ(slowest(split, {4, 4}, {1.0, 2.0}), 6.0);
}

TEST(MixedLayerSplit, FewerLayersThanStagesIsBadInput) {
  EXPECT_THROW(mixed_layer_split(3, {2, 2}, {1.0, 1.0}), core::InputError);
}

}  // namespace
}  // namespace xpusim::engine
