#pragma once
// The trace part of `xpusim demo`: a real request trace (data/traces) replayed on Trn3 and GB300,
// with and without prefix caching.

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "xpusim/calib/params.h"
#include "xpusim/hw/catalog.h"

namespace xpusim::cli {

nlohmann::ordered_json demo_trace(const hw::Catalog& cat, const std::string& data_dir, const calib::Params& params,
                                  std::ostream& o);

}  // namespace xpusim::cli
