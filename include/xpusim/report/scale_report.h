#pragma once
// Rendering of training at scale (docs/scale.md): goodput, the site's power, the Monte Carlo of
// the run, and the `train --scaling` curve. Computes nothing new.

#include <string>

#include "xpusim/report/json_convention.h"
#include "xpusim/scenario/scale.h"

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

}  // namespace xpusim::report
