#pragma once
// How far to trust a train or serve prediction, rendered: `<metric>_low` / `<metric>_high` beside
// each headline metric and a `trust` object (band basis, `extrapolating`, reasons) in the JSON,
// one block in the text (docs/validation.md, "Uncertainty"). Computes nothing new: the band and
// the flag come from validation::assess over the shipped data/validation/uncertainty.json.

#include <string>
#include <utility>
#include <vector>

#include "xpusim/report/json_convention.h"
#include "xpusim/scenario/train_inputs.h"
#include "xpusim/serve/scenario.h"
#include "xpusim/validation/trust.h"

namespace xpusim::report {

/// One headline metric of a result: its JSON key, its label in the text, its value and unit.
struct TrustedMetric {
  std::string key, label;
  double value = 0;
  std::string unit;
  bool is_time = false;  ///< a duration (band mirrored) rather than a rate
  std::string metric;    ///< the validation metric whose framework cell bands it (validation/trust.h)
};

/// The query of a training step: kind train, the chip's family, the model type, precision,
/// framework preset and chips.
validation::TrustQuery train_query(const engine::TrainScenario& s);
/// The query of a serving run: kind infer, the chip's family, model type, weight precision,
/// serving framework and chips used.
validation::TrustQuery serve_query(const serve::ServeReport& rep, const hw::SystemSpec& system,
                                   const workload::ModelSpec& model);

/// The query of a validation row: its kind, its system's family, its model's type, precision,
/// the framework its prediction used, and chips.
validation::TrustQuery row_query(const validation::RowResult& r, const hw::Catalog& catalog,
                                 const std::string& models_dir);
/// Adds `predicted_low`, `predicted_high` and `extrapolating` (with `extrapolating_reasons`) to
/// each ok row of a `validate --json` document, in row order.
void add_row_trust(Json& doc, const std::vector<validation::RowResult>& results, const validation::TrustData& data,
                   const hw::Catalog& catalog, const std::string& models_dir);
/// The band (predicted_low, predicted_high) of each row, in row order; {0, 0} for rows not predicted.
std::vector<std::pair<double, double>> row_bands(const std::vector<validation::RowResult>& results,
                                                 const validation::TrustData& data, const hw::Catalog& catalog,
                                                 const std::string& models_dir);

/// Headline metrics of a training step (step time, tokens/s, tokens/s per chip, MFU) and of a
/// serving run (mean TTFT and TPOT, output tokens/s and per chip).
std::vector<TrustedMetric> train_metrics(const engine::TrainResult& r);
std::vector<TrustedMetric> serve_metrics(const serve::ServeReport& rep);

/// Adds `<key>_low`/`<key>_high` for each metric and `trust` to the document `doc`.
void add_trust_json(Json& doc, const validation::TrustData& data, const validation::Assessment& a,
                    const std::vector<TrustedMetric>& metrics);
/// The text block: the band of each metric and the extrapolating flag with its reasons.
std::string trust_text(const validation::TrustData& data, const validation::Assessment& a,
                       const std::vector<TrustedMetric>& metrics);

}  // namespace xpusim::report
