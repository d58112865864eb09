#pragma once
// The serving part of `xpusim demo` (serve/ comparison of systems for one load).

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "xpusim/calib/params.h"
#include "xpusim/hw/catalog.h"

namespace xpusim::cli {

nlohmann::ordered_json demo_serving(const hw::Catalog& cat, const std::string& models_dir, const calib::Params& params,
                                    std::ostream& o);

}  // namespace xpusim::cli
