#pragma once
// Rendering of `xpusim calibration show`: every fitted or assumed parameter with its value,
// unit, meaning, basis, kind and range (text and JSON). Computes nothing new.

#include <string>

#include "xpusim/calib/params.h"
#include "xpusim/report/json_convention.h"

namespace xpusim::report {

/// `calibration show --json`: `inputs.calibration` (the override file, when given), then
/// `parameters` (key, value, unit, meaning, basis, kind, range, source).
Json calibration_document(const Provenance& provenance, const calib::Params& params,
                          const std::string& override_file);
std::string calibration_text(const calib::Params& params);

}  // namespace xpusim::report
