#pragma once
// Rendering of a validation run (per row predicted vs measured, per kind and family summaries):
// text and JSON (DESIGN.md's stable `validate --json` keys). Computes nothing new.

#include <string>
#include <vector>

#include "xpusim/report/json_convention.h"
#include "xpusim/validation/summary.h"

namespace xpusim::report {

const char* status_name(validation::Status s);
/// The whole `validate --json` document; `file` is echoed under inputs.
Json validation_document(const Provenance& provenance, const std::string& file, const std::vector<validation::RowResult>& results);
/// The table, the summaries (per kind and per kind/family) and the rows not predicted.
std::string validation_text(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog);

}  // namespace xpusim::report
