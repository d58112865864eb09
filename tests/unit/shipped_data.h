#pragma once
// The shipped data the unit tests read, loaded once per test binary: the hardware catalog
// (data/catalog) and the calibration (data/calibration).

#include <string>

#include "xpusim/calib/params.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/workload/hf_config.h"

namespace xpusim::test {

inline const hw::Catalog& catalog() {
  static const hw::Catalog c = hw::Catalog::load(std::string(XS_TESTDATA_DIR) + "/catalog");
  return c;
}

inline const calib::Params& shipped() {
  static const calib::Params p = calib::load_shipped(XS_TESTDATA_DIR);
  return p;
}

/// The shipped model configs (data/models).
inline std::string models_dir() { return std::string(XS_TESTDATA_DIR) + "/models"; }

inline workload::ModelSpec model(const std::string& id) { return workload::load_model(id, models_dir()); }

}  // namespace xpusim::test
