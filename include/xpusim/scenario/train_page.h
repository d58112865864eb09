#pragma once
// What `train --html` draws besides the step's result (docs/html.md): the memory of a chip of
// every pipeline stage (the result holds only the most loaded one) and the operators of one layer
// as the chip model times them (the roofline's points).

#include <vector>

#include "xpusim/engine/op_profile.h"
#include "xpusim/engine/train.h"

namespace xpusim::scenario {

struct TrainPageData {
  std::vector<mapping::TrainMemory> stage_memory;  ///< stages 0 … pp − 1
  std::vector<engine::OpProfile> layer_ops;        ///< engine::layer_op_profile
};

TrainPageData train_page_data(const engine::TrainScenario& s);

}  // namespace xpusim::scenario
