#pragma once
// Pieces shared by both executors: plan checks, topology, the DP tail, and result metrics.

#include <optional>

#include "stage_costs.h"
#include "xpusim/engine/train.h"

namespace xpusim::engine::detail {

/// Gradient buckets per stage (one per layer, as DDP/Megatron bucket roughly per layer).
int dp_buckets(const StageCost& s);

/// Exposed time of a communication of total length `comm` split into `buckets` buckets, the
/// i-th ready after (i+1)/buckets of a compute window of length `window` that it overlaps.
core::Seconds exposed_bucketed(core::Seconds comm, core::Seconds window, int buckets);

/// Validates the scenario: plan divisibility against the model and the chip count, dtype
/// support. Returns a result with feasible=false and the reason when it fails.
std::optional<TrainResult> check(const TrainScenario& s);

/// The chip calibration with the framework's kernel efficiency applied.
compute::Calibration calibration(const TrainScenario& s);

/// The network parameters of the scenario's calibration.
net::TopologyOptions topology_options(const TrainScenario& s);

/// Fills throughput, FLOP/s, MFU, memory and activity fields from the step time.
void finish(const TrainScenario& s, const StepCosts& c, TrainResult& r);

}  // namespace xpusim::engine::detail
