#pragma once
// Loading a model config written inline in a test: the text goes to a file in the test's temp
// directory and through workload::load_model, as a user's config.json would.

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "xpusim/core/diagnostics.h"
#include "xpusim/workload/hf_config.h"

namespace xpusim::test {

inline const std::string& config_models_dir() {
  static const std::string dir = std::string(XS_TESTDATA_DIR) + "/models";
  return dir;
}

/// The model read from `json`, saved as `<temp>/<name>.json`.
inline workload::ModelSpec load_config_text(const std::string& name, const std::string& json) {
  const std::string path = ::testing::TempDir() + name + ".json";
  std::ofstream(path) << json;
  return workload::load_model(path, config_models_dir());
}

/// JSON members (`"key": value, ...`, as text, so that 1e999 or 2^64 reach the reader as
/// written) of `base` whose keys `fields` does not give, then `fields`: a config with some
/// members replaced (a key given twice in one object is refused by the reader).
inline std::string members_with(const std::vector<std::pair<std::string, std::string>>& base, const std::string& fields) {
  std::string out;
  for (const auto& [key, value] : base)
    if (fields.find("\"" + key + "\"") == std::string::npos) out += "\"" + key + "\": " + value + ", ";
  return out + fields;
}

/// The loader's error message for `json` ("" when it loads).
inline std::string config_text_error(const std::string& name, const std::string& json) {
  try {
    load_config_text(name, json);
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace xpusim::test
