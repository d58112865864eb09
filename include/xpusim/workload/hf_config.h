#pragma once
// Loading Hugging Face config.json files of every supported family into a ModelSpec.

#include <string>
#include <vector>

#include "xpusim/workload/model.h"

namespace xpusim::workload {

/// Loads a model from a path to a config.json, or from an id looked up as
/// `<models_dir>/<id>.json`. An unknown id throws InputError with the closest id; a field of the
/// wrong type, a missing required field or an unsupported model_type is a diagnostic naming
/// the field.
ModelSpec load_model(const std::string& path_or_id, const std::string& models_dir);

/// Ids of the models shipped in `models_dir` (file stems, sorted).
std::vector<std::string> model_ids(const std::string& models_dir);

}  // namespace xpusim::workload
