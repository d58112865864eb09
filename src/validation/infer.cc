// validation::predict_infer: a thin adapter over the serving layer's row → scenario logic
// (src/serve/framework_defaults.cc), which picks the framework, the defaults a user of it gets,
// the benchmark's load and the statistic the row reports.

#include "xpusim/serve/framework_defaults.h"
#include "xpusim/validation/row.h"

namespace xpusim::validation {

Prediction predict_infer(const Row& row, const Context& ctx) {
  if (ctx.catalog == nullptr) {
    Prediction p;
    p.status = Status::Error;
    p.reason = "no catalog";
    return p;
  }
  serve::ServeEnv env{ctx.catalog, ctx.models_dir, ctx.calibration};
  return serve::predict_infer_row(row, env);
}

}  // namespace xpusim::validation
