#pragma once
// Rendering of `xpusim claims`: text and JSON (docs/json.md, docs/claims.md). Computes nothing new.

#include <string>

#include "xpusim/report/json_convention.h"
#include "xpusim/scenario/claims.h"

namespace xpusim::report {

/// The whole `claims --json` document: envelope, estimated inputs, overrides and one entry per claim.
Json claims_document(const Provenance& provenance, const scenario::ClaimsInputs& in, const scenario::ClaimsReport& rep);
/// A summary table (published vs xpusim ratio, range, verdict), then each claim in full.
std::string claims_text(const scenario::ClaimsReport& rep);

}  // namespace xpusim::report
