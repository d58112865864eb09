#pragma once
// Rendering of a mixed training run (`train --mix`, docs/fusion.md): text and JSON
// (docs/json.md). Computes nothing new.

#include <string>

#include "xpusim/report/json_convention.h"
#include "xpusim/scenario/train_mix.h"

namespace xpusim::report {

/// The `train --mix --json` document.
Json mix_document(const Provenance& provenance, const scenario::TrainInputs& in, const std::string& mix,
                  const scenario::MixResult& r);
std::string mix_text(const scenario::MixResult& r);

}  // namespace xpusim::report
