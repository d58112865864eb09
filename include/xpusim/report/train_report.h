#pragma once
// Rendering of training results: text and JSON (docs/json.md). Computes nothing new.

#include <string>

#include "xpusim/report/json_convention.h"
#include "xpusim/scenario/train_inputs.h"

namespace xpusim::report {

Json plan_json(const mapping::TrainPlan& p);
/// The body keys of one step (no envelope): step time, throughput, breakdown, memory, energy.
Json train_json(const engine::TrainScenario& s, const engine::TrainResult& r, const cost::EnergyCost& e);
/// The whole `train --json` document: envelope, step, plan search and token budget.
Json train_document(const Provenance& provenance, const scenario::TrainInputs& in, const scenario::TrainRun& run);
/// The step as a table.
std::string train_text(const engine::TrainScenario& s, const engine::TrainResult& r, const cost::EnergyCost& e);
/// The whole `train` text: the step, the token budget and the plan search note.
std::string train_run_text(const scenario::TrainRun& run);

}  // namespace xpusim::report
