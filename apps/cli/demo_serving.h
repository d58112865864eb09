#pragma once
// The serving part of `xpusim demo` (serve/ comparison of systems for one load).

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "xpusim/hw/catalog.h"

namespace xpusim::cli {

nlohmann::ordered_json demo_serving(const hw::Catalog& cat, const std::string& models_dir, std::ostream& o);

}  // namespace xpusim::cli
