#pragma once
// Reading optional scenario-file keys into the optional inputs of train_inputs.h and
// serve_inputs.h, each judged by the one check of its kind (config/values.h).

#include <initializer_list>
#include <optional>
#include <string>

#include "xpusim/config/document.h"
#include "xpusim/core/units.h"

namespace xpusim::scenario {

/// Loads a scenario document; an unreadable file is reported against --scenario, and a
/// document that is not a mapping of keys is a diagnostic.
config::Json load_scenario_document(const std::string& path);

void read_text(config::FieldReader& r, const std::string& key, std::optional<std::string>& out);
void read_count(config::FieldReader& r, const std::string& key, std::optional<long long>& out);
void read_non_negative_count(config::FieldReader& r, const std::string& key, std::optional<long long>& out);
void read_positive_number(config::FieldReader& r, const std::string& key, std::optional<double>& out);
void read_fraction(config::FieldReader& r, const std::string& key, std::optional<double>& out);
void read_duration(config::FieldReader& r, const std::string& key, std::optional<core::Seconds>& out);
void read_flag(config::FieldReader& r, const std::string& key, std::optional<bool>& out);
/// A file a scenario file names by a relative path (a model config.json, a draft model, an
/// arrivals trace) is read from the scenario file's folder when it is there, as paths in a
/// config file are; otherwise the value stays as given (a model id, or a path from the working
/// directory). `always_a_path`: the key names a file even without a '/' or ".json".
void resolve_beside(const std::string& scenario_path, std::optional<std::string>& ref, bool always_a_path = false);

/// Keys that belong under `workload:`: a diagnostic that says where they moved.
void moved_to_workload(config::FieldReader& r, std::initializer_list<const char*> keys);

}  // namespace xpusim::scenario
