#pragma once
// The one JSON convention of every command (docs/json.md): a `schema_version`, the command, the
// inputs echoed under `inputs`, units as key suffixes, counts as integers.

#include <nlohmann/json.hpp>
#include <string>

#include "xpusim/scenario/serve_inputs.h"
#include "xpusim/scenario/train_inputs.h"

namespace xpusim::report {

using Json = nlohmann::ordered_json;

/// Bumped when a key is renamed or removed (adding keys does not bump it).
inline constexpr int kSchemaVersion = 1;

/// {"schema_version", "command", "inputs", then the keys of `body` in order}.
Json document(const std::string& command, Json inputs, const Json& body);

/// The inputs as given, unset ones left out; durations in seconds (`timeout_s`, ...).
Json inputs_json(const scenario::TrainInputs& in);
Json inputs_json(const scenario::ServeInputs& in);

/// A count held in a double (e.g. tokens per step) printed as an integer.
long long as_count(double v);

}  // namespace xpusim::report
