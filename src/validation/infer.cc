// validation::predict_infer: a thin adapter over the row → scenario mapping
// (src/validation/row_scenario.cc), which picks the framework, the defaults a user of it gets,
// the benchmark's load and the statistic the row reports.

#include "xpusim/validation/row.h"
#include "xpusim/validation/row_scenario.h"

namespace xpusim::validation {

Prediction predict_infer(const Row& row, const Context& ctx) {
  if (ctx.catalog == nullptr) {
    Prediction p;
    p.status = Status::Error;
    p.reason = "no catalog";
    return p;
  }
  serve::ServeEnv env{ctx.catalog, ctx.models_dir, ctx.calibration};
  return predict_infer_row(row, env, ctx.serving_request_cap, ctx.serve_runs);
}

}  // namespace xpusim::validation
