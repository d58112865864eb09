#include "xpusim/workload/model.h"

namespace xpusim::workload {

bool ModelSpec::layer_is_moe(int i) const {
  if (moe.num_experts == 0 || i < moe.first_dense_layers) return false;
  const int k = moe.layer_freq > 0 ? moe.layer_freq : 1;
  return (i - moe.first_dense_layers) % k == 0;
}

}  // namespace xpusim::workload
