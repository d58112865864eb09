#pragma once
// The serving environment the serve unit tests run in: the shipped catalog, models and
// calibration.

#include "../shipped_data.h"
#include "xpusim/serve/scenario.h"

namespace xpusim::test {

inline serve::ServeEnv env() { return serve::ServeEnv{&catalog(), models_dir(), &shipped()}; }

}  // namespace xpusim::test
