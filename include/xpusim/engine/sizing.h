#pragma once
// Capacity planning on top of the executors: the fewest chips that hold a model for training
// or serving, and the time to train on a token budget with the best plan of a small set.

#include <string>
#include <vector>

#include "xpusim/engine/train.h"

namespace xpusim::engine {

/// The first of `candidates` (ordered from least to most recomputation) whose memory fits the
/// chip, or the last one when none fits: what a user does when the recompute mode is not given.
/// Decided from the memory model alone; nothing is simulated.
mapping::Recompute least_recompute_that_fits(const TrainScenario& s,
                                             const std::vector<mapping::Recompute>& candidates);

/// With full recomputation: the fewest layers per model chunk (mapping::TrainPlan::recompute_layers)
/// whose recomputation lets the memory fit, 0 (every layer) when only all of them do or nothing
/// fits. Decided from the memory model alone (bisection on N; memory falls as N grows).
int fewest_recompute_layers_that_fit(const TrainScenario& s);

/// The defaults rule's recomputation for a stated layout: least_recompute_that_fits, and where
/// that is full, a lesser mode was a candidate and the framework recomputes some layers
/// (FrameworkParams::recompute_some_layers), the fewest layers of each chunk that fit.
void set_least_recompute_that_fits(TrainScenario& s, const std::vector<mapping::Recompute>& candidates);

struct TrainFit {
  bool found = false;
  long long chips = 0;
  TrainScenario scenario;
  TrainResult result;
};

/// The fewest chips (whole nodes) on which some plan of a full search (ZeRO-1/3, FSDP, all
/// recompute modes, TP inside the domain, PP) fits a training step of `seq`-token sequences.
TrainFit fewest_chips_to_train(const hw::SystemSpec& sys, const workload::ModelSpec& model,
                               long long seq, core::Dtype precision, const calib::Params& params);

struct ServeFit {
  bool found = false;
  long long chips = 0;    ///< tp × pp of one replica
  int tp = 1, pp = 1;
  core::Bytes per_chip;   ///< weights + KV of one sequence + workspace per chip
};

/// The fewest chips of one serving replica (tp inside the domain, then pp) whose memory holds
/// the weights in `weights` and the KV cache of one `context`-token sequence.
ServeFit fewest_chips_to_serve(const hw::SystemSpec& sys, const workload::ModelSpec& model,
                               core::Dtype weights, long long context, const calib::Params& params);

struct TrainTime {
  bool found = false;
  TrainScenario scenario;
  TrainResult result;
  core::Seconds time;  ///< tokens / (tokens per second of the best plan)
};

/// Both searches run the default framework preset ("megatron") with `params`.
/// Time to train on `tokens` tokens with `chips` chips: the fastest plan of the search space
/// (TP ∈ {4, 8, 16, 32} inside the domain, PP ∈ {1, 2, 4, 8, 16}, selective or full recompute,
/// ZeRO-1) at a global batch of `batch_tokens` tokens (at least one micro-batch per rank),
/// timed by the event-driven executor.
TrainTime time_to_train(const hw::SystemSpec& sys, const workload::ModelSpec& model, long long chips,
                        double tokens, long long seq, core::Dtype precision, long long batch_tokens,
                        const calib::Params& params);

}  // namespace xpusim::engine
