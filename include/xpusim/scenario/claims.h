#pragma once
// `xpusim claims`: every public claim about Trainium3 (the project seed's and AWS's launch
// claims, issue 10) checked by running the project's own catalog, training and serving code
// under the claim's conditions, Trn3 against Trn2. For each claim: the conditions as far as
// they are known, the published ratio, the ratio xpusim computes, the range over reasonable
// conditions where they are unknown (precision, batch, generation), why the two differ, and
// which conclusions flip inside the range of the estimated inputs (Trn3 TDP and price).
// Nothing here is a hard-coded result: every ratio comes from a catalog number or a simulation.

#include <string>
#include <vector>

#include "xpusim/calib/params.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/scenario/overrides.h"

namespace xpusim::scenario {

/// One point of a claim's range: the conditions and the ratio xpusim computes under them.
struct ClaimCase {
  std::string conditions;
  double ratio = 0;
};

/// A number shown beside a claim; `key` carries its unit as docs/json.md asks (`mfu_pct`).
struct ClaimFigure {
  std::string key;
  double value = 0;
};

struct Claim {
  std::string id;        ///< e.g. "aws-4.4x-compute"
  std::string text;      ///< the claim as made
  std::string source;    ///< who made it, where (tags of ../shared/reference/hardware.md)
  std::string conditions;  ///< what is known of the conditions, and how xpusim reads the claim
  std::string metric;    ///< what the ratios divide (Trn3 over Trn2)
  double published_ratio = 0;
  /// The claim gives a direction, not a number ("lower inference cost"): published_ratio is
  /// the threshold the ratio must exceed.
  bool published_at_least = false;
  double xpusim_ratio = 0;       ///< under the central conditions (cases[0])
  std::vector<ClaimCase> cases;  ///< central first, then the other reasonable conditions
  double ratio_low = 0, ratio_high = 0;  ///< over the cases
  std::vector<std::string> why;    ///< why published and xpusim differ
  std::vector<std::string> flips;  ///< conclusions that change inside the estimated inputs' ranges
  std::vector<ClaimFigure> figures;
  std::string verdict;  ///< reproduced | within range | not reproduced
};

struct ClaimsInputs {
  EstimateOverrides trn3;  ///< --price/--tdp for the Trn3 systems (Gen1 and Gen2)
};

struct ClaimsReport {
  std::vector<Claim> claims;
  std::vector<std::string> overrides;  ///< override_notes() of the Trn3 systems
  std::vector<std::string> estimates;  ///< the estimated inputs in use, with their ranges
};

/// Runs every check. InputError on bad overrides.
ClaimsReport check_claims(const ClaimsInputs& in, const hw::Catalog& cat, const std::string& models_dir,
                          const calib::Params& params);

}  // namespace xpusim::scenario
