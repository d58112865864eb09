#pragma once
// The operators of one transformer layer of a training plan as the executors time them (forward
// pass, one chip): FLOP, HBM bytes and time per op. For the roofline of `train --html`
// (docs/html.md).

#include <string>
#include <vector>

#include "xpusim/engine/train.h"

namespace xpusim::engine {

struct OpProfile {
  std::string name;
  core::Flops flops;
  core::Bytes hbm_bytes;
  core::Seconds time;
  bool compute_bound = true;
};

/// Forward operators of the middle transformer layer (layers / 2) for one micro-batch on one chip
/// of the plan, timed by the chip model with the plan's precision and calibration.
std::vector<OpProfile> layer_op_profile(const TrainScenario& s);

}  // namespace xpusim::engine
