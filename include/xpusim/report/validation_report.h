#pragma once
// Rendering of a validation run (per row predicted vs measured, per kind and family summaries):
// text and JSON (DESIGN.md's stable `validate --json` keys). Computes nothing new.

#include <string>
#include <vector>

#include "xpusim/report/json_convention.h"
#include "xpusim/validation/summary.h"

namespace xpusim::report {

const char* status_name(validation::Status s);
/// `summary`: per kind, and under "by_family" per family and kind, the counts and |error|
/// statistics; with `cv` (leave-one-source-out predictions of the same rows) also
/// cv_median_abs_error_pct and cv_p90_abs_error_pct.
Json summary_json(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                  const std::vector<validation::RowResult>* cv = nullptr);
/// The summary table (per kind, then per kind/family; CV columns with `cv`).
std::string summary_text(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                         const std::vector<validation::RowResult>* cv = nullptr);
/// The whole `validate --json` document; `file` is echoed under inputs.
Json validation_document(const Provenance& provenance, const std::string& file,
                         const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                         const std::vector<validation::RowResult>* cv = nullptr);
/// The table, the summaries (per kind and per kind/family) and the rows not predicted.
std::string validation_text(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                            const std::vector<validation::RowResult>* cv = nullptr);

}  // namespace xpusim::report
