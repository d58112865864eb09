#include "xpusim/scenario/stage_memory.h"

namespace xpusim::scenario {

std::vector<mapping::TrainMemory> memory_by_stage(const engine::TrainScenario& s) {
  const mapping::MemoryParams params = mapping::memory_params(*s.calibration);
  std::vector<mapping::TrainMemory> out;
  for (int stage = 0; stage < s.plan.pp; ++stage)
    out.push_back(mapping::train_memory_of_stage(s.model, s.plan, stage, params));
  return out;
}

}  // namespace xpusim::scenario
