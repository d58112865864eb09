// Temporary: infer rows are reported unsupported until serve/ lands.
#include "xpusim/validation/row.h"

namespace xpusim::validation {
Prediction predict_infer(const Row&, const Context&) {
  Prediction p;
  p.status = Status::Unsupported;
  p.reason = "serving simulation not built yet";
  return p;
}
}  // namespace xpusim::validation
