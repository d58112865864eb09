#pragma once
// Activity counts of a simulated run (Accelergy style): what happened, not what it cost.
// cost/energy.h turns them into joules and dollars with per-action tables.

#include <map>

#include "xpusim/core/dtype.h"
#include "xpusim/core/units.h"

namespace xpusim::cost {

struct Activity {
  std::map<core::Dtype, core::Flops> flops;  ///< math executed, by dtype, per chip
  core::Bytes hbm_bytes;                      ///< HBM traffic per chip
  core::Bytes scale_up_bytes;                 ///< bytes sent per chip over scale-up links
  core::Bytes scale_out_bytes;                ///< bytes sent per chip over the scale-out fabric
  core::Seconds busy;                         ///< time the chip's math units were busy

  void add_flops(core::Dtype d, core::Flops f) { flops[d] += f; }
  core::Flops total_flops() const {
    core::Flops t;
    for (const auto& [d, f] : flops) t += f;
    return t;
  }
  Activity& operator+=(const Activity& o);
  Activity scaled(double k) const;
};

}  // namespace xpusim::cost
