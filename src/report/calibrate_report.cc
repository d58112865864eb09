#include "xpusim/report/calibrate_report.h"

#include <nlohmann/json.hpp>
#include <cmath>
#include <sstream>

#include "xpusim/core/format.h"
#include "xpusim/core/suggest.h"
#include "xpusim/report/validation_report.h"

namespace xpusim::report {

namespace {

using core::strformat;

const std::vector<validation::RowResult>* cv_of(const CalibrateRun& run) { return run.cv.empty() ? nullptr : &run.cv; }

/// A fold's value counts as moved when it is more than 10 % from the full fit's (either way).
bool moved(const validation::FittedValue& v) {
  return v.start > 0 && v.fitted > 0 && std::fabs(std::log(v.fitted / v.start)) > std::log(1.1);
}

Json fold_fits_json(const std::vector<validation::FoldFit>& fits) {
  Json out = Json::array();
  for (const auto& f : fits) {
    Json values = Json::array();
    for (const auto& v : f.values)
      values.push_back({{"key", v.key}, {"full_fit", v.start}, {"fold", v.fitted}, {"value", v.fitted_text},
                        {"training_rows", v.sensitive_rows}});
    out.push_back({{"source", f.source}, {"parameters", values}});
  }
  return out;
}

/// Per fold, the re-fitted keys that moved more than 10 % from the full fit: where the
/// out-of-fold predictions differ from the in-sample ones, and why.
std::string fold_moves_text(const std::vector<validation::FoldFit>& fits) {
  std::ostringstream o;
  for (const auto& f : fits)
    for (const auto& v : f.values)
      if (moved(v))
        o << strformat("  %-40s %-56s %12s -> %s\n", f.source.c_str(), v.key.c_str(), core::fmt_num(v.start, 4).c_str(),
                       v.fitted_text.c_str());
  const std::string lines = o.str();
  if (lines.empty()) return "";
  return "keys a fold moved more than 10 % from the full fit (fold left out, key, full fit -> fold):\n" + lines;
}

}  // namespace

Json calibrate_document(const Provenance& provenance, const CalibrateRun& run, const hw::Catalog& catalog) {
  Json params = Json::array();
  for (const auto& v : run.fit.values)
    params.push_back({{"key", v.key},
                      {"start", v.start},
                      {"active", v.active},
                      {"fitted", v.fitted},
                      {"value", v.fitted_text},
                      {"sensitive_rows", v.sensitive_rows}});
  Json body = {{"parameters", params},
               {"rows_used", run.fit.rows_used},
               {"loss_start", run.fit.loss_start},
               {"loss_end", run.fit.loss_end},
               {"folds", run.folds},
               {"fold_fits", fold_fits_json(run.fold_fits)},
               {"summary", summary_json(run.in_sample, catalog, cv_of(run))}};
  Json inputs = {{"file", run.file}, {"params", run.params_glob}, {"folds", run.folds_mode}};
  return document("calibrate", provenance, inputs, body);
}

std::string calibrate_text(const CalibrateRun& run, const hw::Catalog& catalog) {
  std::ostringstream o;
  o << strformat("%-58s %12s %12s %14s %9s\n", "parameter", "documented", "active", "fitted", "rows");
  for (const auto& v : run.fit.values)
    o << strformat("%-58s %12s %12s %14s %9d\n", v.key.c_str(), core::fmt_num(v.start, 4).c_str(),
                   core::fmt_num(v.active, 4).c_str(), v.fitted_text.c_str(), v.sensitive_rows);
  o << strformat("\nrows used %d; loss %.4f -> %.4f (soft-L1 over ln(pred/measured), analytical executor)\n",
                 run.fit.rows_used, run.fit.loss_start, run.fit.loss_end);
  const std::string scheme = run.folds_mode == "model" ? "leave-one-source-or-model-out" : "leave-one-source-out";
  if (!run.folds.empty()) o << run.folds.size() << " " << scheme << " folds: " << core::join(run.folds) << "\n";
  o << fold_moves_text(run.fold_fits);
  o << "\nsummary with the fitted values (event-driven executor)"
    << (!run.cv.empty() ? "; CV: " + scheme
        : run.folds_mode != "none" ? "; in sample only: the rows come from one source, so no fold can hold one out"
                                   : "; in sample only (--folds none)")
    << "\n";
  o << summary_text(run.in_sample, catalog, cv_of(run));
  return o.str();
}

}  // namespace xpusim::report
