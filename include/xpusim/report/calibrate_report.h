#pragma once
// Rendering of `xpusim calibrate`: the fitted values, and the in-sample and leave-one-source-out
// error summaries. Computes nothing new.

#include <string>
#include <vector>

#include "xpusim/report/json_convention.h"
#include "xpusim/validation/fit.h"

namespace xpusim::report {

struct CalibrateRun {
  std::string file, params_glob, folds_mode;
  validation::FitResult fit;
  std::vector<validation::RowResult> in_sample;  ///< every row with the fitted values (event executor)
  std::vector<validation::RowResult> cv;         ///< out-of-fold predictions; empty without folds
  std::vector<std::string> folds;                ///< the source left out by each fold
  std::vector<validation::FoldFit> fold_fits;    ///< what each fold re-fitted, in fold order
};

Json calibrate_document(const Provenance& provenance, const CalibrateRun& run, const hw::Catalog& catalog);
std::string calibrate_text(const CalibrateRun& run, const hw::Catalog& catalog);

}  // namespace xpusim::report
