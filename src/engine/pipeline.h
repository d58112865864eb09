#pragma once
// The per-stage costs seen through a plan's pipeline schedule: times of one micro-batch through
// each rank's chunks (mapping::ChunkTimes), per-rank totals for the DP tail and the breakdown.
// Shared by both executors; private to engine/.

#include <vector>

#include "stage_costs.h"
#include "xpusim/mapping/schedule.h"

namespace xpusim::engine::detail {

struct RankCost {
  std::vector<mapping::ChunkTimes> chunks;  ///< one micro-batch through each chunk
  std::vector<int> micro_batches;           ///< micro-batches through each chunk per step
  std::vector<int> buckets;                 ///< gradient buckets of each chunk
  std::vector<double> grad_share;           ///< chunk gradients ÷ the largest stage's
  double params = 0;                        ///< parameters of the rank's chunks
  int layers = 0;
  core::Seconds forward, backward;          ///< one micro-batch through all chunks
  Breakdown per_step;                       ///< compute, tp, cp, ep (framework share), fsdp per step
  core::Seconds fsdp;                       ///< exposed FSDP gathers per step
};

struct PipelineCosts {
  const mapping::Schedule* schedule = nullptr;
  mapping::PipelineShape shape;
  int chunks = 1;
  std::vector<RankCost> ranks;
  mapping::PipelineTimes times;  ///< per rank: the mean over its chunks
  double largest_stage_params = 0;
  int busiest = 0;               ///< rank with the most work per step
};

PipelineCosts pipeline_costs(const TrainScenario& s, const StepCosts& c);

/// Exposed ZeRO parameter gather of `rank` after its last backward (hidden by the next forward).
core::Seconds exposed_param_gather(const StepCosts& c, const PipelineCosts& p, int rank);

}  // namespace xpusim::engine::detail
