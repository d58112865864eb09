#pragma once
// The serving environment the serve unit tests run in: the shipped catalog, models and
// calibration.

#include "../shipped_data.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/mapping/memory.h"
#include "xpusim/serve/scenario.h"

namespace xpusim::test {

inline serve::ServeEnv env() { return serve::ServeEnv{&catalog(), models_dir(), &shipped()}; }

/// Llama-3.1-8B on one H100 with vLLM's shipped profile: one engine whose step costs tests derive.
struct OneH100Engine {
  const hw::SystemSpec& sys = catalog().system("h100-sxm-dgx");
  workload::ModelSpec m = model("llama3.1-8b");
  serve::FrameworkProfile prof = serve::framework_profile(serve::Framework::Vllm, "", sys.chip, shipped());
  serve::ReplicaPlan plan;
  serve::StepCostModel cost{sys, m, plan, prof, mapping::memory_params(shipped()), nullptr};
};

}  // namespace xpusim::test
