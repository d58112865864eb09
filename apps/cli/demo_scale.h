#pragma once
// The million-chip part of `xpusim demo`: llama3.1-405b trained on 15T tokens at the critical
// batch, Trn3 Gen2 beside GB300 NVL72 from one thousand chips to a million, with failures.

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "xpusim/calib/params.h"
#include "xpusim/hw/catalog.h"

namespace xpusim::cli {

nlohmann::ordered_json demo_scale(const hw::Catalog& cat, const std::string& models_dir, const calib::Params& params,
                                  std::ostream& o);

}  // namespace xpusim::cli
