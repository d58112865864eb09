#pragma once
// Memory of a chip of every pipeline stage, for `train --html` (docs/html.md): the result holds
// only the most loaded chip; the page stacks each stage's memory against the HBM capacity.

#include <vector>

#include "xpusim/engine/train.h"

namespace xpusim::scenario {

/// mapping::train_memory_of_stage for stages 0 … pp − 1 of the scenario's plan.
std::vector<mapping::TrainMemory> memory_by_stage(const engine::TrainScenario& s);

}  // namespace xpusim::scenario
