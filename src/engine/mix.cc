#include "xpusim/engine/mix.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "xpusim/core/check.h"
#include "xpusim/core/diagnostics.h"

namespace xpusim::engine {

namespace {

// Layers a stage of each kind can hold within `bound` seconds (at least one).
long long capacity(double bound, const std::vector<int>& stages, const std::vector<double>& t) {
  long long n = 0;
  for (size_t k = 0; k < stages.size(); ++k)
    n += static_cast<long long>(stages[k]) * std::max(1LL, static_cast<long long>(std::floor(bound / t[k] + 1e-9)));
  return n;
}

// The smallest stage time (a whole number of some kind's layers) that holds every layer.
double smallest_bound(int layers, const std::vector<int>& stages, const std::vector<double>& t) {
  double best = -1;
  for (double tk : t)
    for (int j = 1; j <= layers; ++j) {
      const double bound = j * tk;
      if (best >= 0 && bound >= best) break;
      if (capacity(bound, stages, t) >= layers) { best = bound; break; }
    }
  return best;
}

}  // namespace

std::vector<int> mixed_layer_split(int layers, const std::vector<int>& stages, const std::vector<double>& layer_time) {
  XS_CHECK(stages.size() == layer_time.size() && !stages.empty(), "mixed_layer_split: one time per kind");
  long long total_stages = 0;
  for (int s : stages) total_stages += s;
  if (layers < total_stages)
    core::fail("layers", "fewer layers than pipeline stages", std::to_string(layers),
               "at least " + std::to_string(total_stages) + " (one per stage)");
  const double bound = smallest_bound(layers, stages, layer_time);
  std::vector<int> split;
  std::vector<double> t;
  for (size_t k = 0; k < stages.size(); ++k)
    for (int s = 0; s < stages[k]; ++s) {
      split.push_back(std::max(1, static_cast<int>(std::floor(bound / layer_time[k] + 1e-9))));
      t.push_back(layer_time[k]);
    }
  long long excess = -static_cast<long long>(layers);
  for (int l : split) excess += l;
  while (excess-- > 0) {  // drop a layer from the slowest stage that has more than one
    int worst = -1;
    for (int i = static_cast<int>(split.size()) - 1; i >= 0; --i)
      if (split[i] > 1 && (worst < 0 || split[i] * t[i] > split[worst] * t[worst])) worst = i;
    --split[worst];
  }
  return split;
}

}  // namespace xpusim::engine
