#pragma once
// Rendering of training results: text tables and JSON (units in key names). Computes nothing new.

#include <nlohmann/json.hpp>
#include <string>

#include "xpusim/cost/energy.h"
#include "xpusim/engine/train.h"

namespace xpusim::report {

using Json = nlohmann::ordered_json;

Json plan_json(const mapping::TrainPlan& p);
Json train_json(const engine::TrainScenario& s, const engine::TrainResult& r,
                const cost::EnergyCost& e);
std::string train_text(const engine::TrainScenario& s, const engine::TrainResult& r,
                       const cost::EnergyCost& e);

}  // namespace xpusim::report
