#pragma once
// Rendering of training at scale (docs/scale.md): goodput, the site's power, the Monte Carlo of
// the run, and the `train --scaling` curve. Computes nothing new.

#include <string>

#include "xpusim/report/json_convention.h"
#include "xpusim/scenario/scale.h"
#include "xpusim/scenario/solver.h"

namespace xpusim::report {

/// `goodput` (failures, checkpoints, recovery, stragglers, effective throughput, time to train
/// with failures and its Monte Carlo distribution) and `facility` of one run.
Json goodput_json(const scenario::TrainRun& run);
Json facility_json(const scenario::TrainRun& run);
std::string goodput_text(const scenario::TrainRun& run);

/// The `train --scaling --json` document: envelope, then system, model, `scaling` (one entry per
/// count: chips, plan, tokens/s, per chip, MFU, goodput) and the largest useful chip count.
Json scaling_document(const Provenance& provenance, const scenario::TrainInputs& in, const scenario::ScalingCurve& c);
std::string scaling_text(const scenario::ScalingCurve& c);

/// `solver` of `train --deadline/--budget --json`: kind, target, met, chosen chips, plan,
/// time_to_train_s with failures, cost_usd of the whole run, and every count tried with its outcome.
Json solver_json(const scenario::SolverResult& r);
/// The counts tried and the answer (or the best achievable) in one line; the chosen run follows.
std::string solver_text(const scenario::SolverResult& r);

}  // namespace xpusim::report
