#include "xpusim/report/calibrate_report.h"

#include <sstream>

#include "xpusim/core/format.h"
#include "xpusim/core/suggest.h"
#include "xpusim/report/validation_report.h"

namespace xpusim::report {

namespace {

using core::strformat;

const std::vector<validation::RowResult>* cv_of(const CalibrateRun& run) { return run.cv.empty() ? nullptr : &run.cv; }

}  // namespace

Json calibrate_document(const Provenance& provenance, const CalibrateRun& run, const hw::Catalog& catalog) {
  Json params = Json::array();
  for (const auto& v : run.fit.values)
    params.push_back({{"key", v.key},
                      {"start", v.start},
                      {"fitted", v.fitted},
                      {"value", v.fitted_text},
                      {"sensitive_rows", v.sensitive_rows}});
  Json body = {{"parameters", params},
               {"rows_used", run.fit.rows_used},
               {"loss_start", run.fit.loss_start},
               {"loss_end", run.fit.loss_end},
               {"folds", run.folds},
               {"summary", summary_json(run.in_sample, catalog, cv_of(run))}};
  Json inputs = {{"file", run.file}, {"params", run.params_glob}, {"folds", run.folds_mode}};
  return document("calibrate", provenance, inputs, body);
}

std::string calibrate_text(const CalibrateRun& run, const hw::Catalog& catalog) {
  std::ostringstream o;
  o << strformat("%-58s %14s %14s %9s\n", "parameter", "start", "fitted", "rows");
  for (const auto& v : run.fit.values)
    o << strformat("%-58s %14s %14s %9d\n", v.key.c_str(), core::fmt_num(v.start, 4).c_str(), v.fitted_text.c_str(),
                   v.sensitive_rows);
  o << strformat("\nrows used %d; loss %.4f -> %.4f (soft-L1 over ln(pred/measured), analytical executor)\n",
                 run.fit.rows_used, run.fit.loss_start, run.fit.loss_end);
  if (!run.folds.empty()) o << run.folds.size() << " leave-one-source-out folds: " << core::join(run.folds) << "\n";
  o << "\nsummary with the fitted values (event-driven executor)"
    << (run.cv.empty() ? "" : "; CV: leave-one-source-out") << "\n";
  o << summary_text(run.in_sample, catalog, cv_of(run));
  return o.str();
}

}  // namespace xpusim::report
