#pragma once
// The shipped data the unit tests read, loaded once per test binary: the hardware catalog
// (data/catalog) and the calibration (data/calibration).

#include <string>

#include "xpusim/calib/params.h"
#include "xpusim/hw/catalog.h"

namespace xpusim::test {

inline const hw::Catalog& catalog() {
  static const hw::Catalog c = hw::Catalog::load(std::string(XS_TESTDATA_DIR) + "/catalog");
  return c;
}

inline const calib::Params& shipped() {
  static const calib::Params p = calib::load_shipped(XS_TESTDATA_DIR);
  return p;
}

}  // namespace xpusim::test
