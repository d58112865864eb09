#include "xpusim/scenario/train_page.h"

namespace xpusim::scenario {

TrainPageData train_page_data(const engine::TrainScenario& s) {
  TrainPageData d;
  const mapping::MemoryParams params = mapping::memory_params(*s.calibration);
  for (int stage = 0; stage < s.plan.pp; ++stage)
    d.stage_memory.push_back(mapping::train_memory_of_stage(s.model, s.plan, stage, params));
  d.layer_ops = engine::layer_op_profile(s);
  return d;
}

}  // namespace xpusim::scenario
