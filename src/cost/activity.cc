#include "xpusim/cost/activity.h"

namespace xpusim::cost {

Activity& Activity::operator+=(const Activity& o) {
  for (const auto& [d, f] : o.flops) flops[d] += f;
  hbm_bytes += o.hbm_bytes;
  scale_up_bytes += o.scale_up_bytes;
  scale_out_bytes += o.scale_out_bytes;
  busy += o.busy;
  return *this;
}

Activity Activity::scaled(double k) const {
  Activity a;
  for (const auto& [d, f] : flops) a.flops[d] = f * k;
  a.hbm_bytes = hbm_bytes * k;
  a.scale_up_bytes = scale_up_bytes * k;
  a.scale_out_bytes = scale_out_bytes * k;
  a.busy = busy * k;
  return a;
}

}  // namespace xpusim::cost
