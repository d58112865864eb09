#include "xpusim/workload/model.h"

#include <algorithm>

namespace xpusim::workload {

bool ModelSpec::layer_is_moe(int i) const {
  if (moe.num_experts == 0) return false;
  if (!moe.layer_moe.empty()) {
    return i >= 0 && i < static_cast<int>(moe.layer_moe.size()) && moe.layer_moe[i];
  }
  if (i < moe.first_dense_layers) return false;
  const int k = moe.layer_freq > 0 ? moe.layer_freq : 1;
  return (i - moe.first_dense_layers) % k == 0;
}

bool ModelSpec::layer_sliding(int i) const {
  if (sliding_window <= 0 || layer_is_sliding.empty()) return false;
  return i >= 0 && i < static_cast<int>(layer_is_sliding.size()) && layer_is_sliding[i];
}

long long ModelSpec::layer_context(int i, long long context) const {
  return layer_sliding(i) ? std::min(context, sliding_window) : context;
}

long long ModelSpec::qk_head_dim() const {
  return attention == AttnKind::Mla ? mla.qk_nope_head_dim + mla.qk_rope_head_dim : head_dim;
}

long long ModelSpec::v_head_dim() const {
  return attention == AttnKind::Mla ? mla.v_head_dim : head_dim;
}

}  // namespace xpusim::workload
