#pragma once
// Mixed training (docs/fusion.md): one pipeline whose stages run on two kinds of chip. The
// layers are split so that stages finish together: each stage holds as many layers as fit in
// the shortest common stage time, given each kind's measured time per layer.

#include <vector>

namespace xpusim::engine {

/// Layers per stage, stages of kind 0 first, then kind 1, ...: `stages[k]` stages of kind k,
/// each layer costing `layer_time[k]` on it. Minimises the slowest stage (every stage at least
/// one layer); the layers above that bound are taken from the slowest stages, the last first.
/// InputError (field "layers") when there are fewer layers than stages.
std::vector<int> mixed_layer_split(int layers, const std::vector<int>& stages, const std::vector<double>& layer_time);

}  // namespace xpusim::engine
