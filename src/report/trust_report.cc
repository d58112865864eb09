// Uncertainty bands and the extrapolating flag of train and serve results (report/trust_report.h).

#include "xpusim/report/trust_report.h"

#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <sstream>

#include "xpusim/compute/calibration.h"
#include "xpusim/core/format.h"
#include "xpusim/workload/hf_config.h"

namespace xpusim::report {

using core::strformat;

namespace {

/// The user's file a system or its chip came from (empty: both shipped).
std::string user_hardware(const hw::SystemSpec& system) {
  return !system.user_file.empty() ? system.user_file : system.chip.user_file;
}

}  // namespace

validation::TrustQuery train_query(const engine::TrainScenario& s) {
  return validation::TrustQuery{"train",
                                compute::family_of(s.system->chip),
                                validation::model_type_of(s.model),
                                core::dtype_name(s.plan.precision),
                                s.framework.name,
                                s.plan.chips(),
                                user_hardware(*s.system),
                                s.system->chip.id,
                                ""};  // training presets have no version ranges
}

validation::TrustQuery serve_query(const serve::ServeReport& rep, const hw::SystemSpec& system,
                                   const workload::ModelSpec& model) {
  validation::TrustQuery q{"infer",          compute::family_of(system.chip), validation::model_type_of(model),
                           rep.scenario.precision, rep.framework,             rep.chips_used,
                           user_hardware(system),   system.chip.id, ""};
  if (!rep.framework_version_validated)
    q.unvalidated_software = rep.framework + " " + (rep.framework_version.empty() ? "" : rep.framework_version + " ") +
                             "(range " + rep.framework_version_range + ")";
  return q;
}

namespace {

std::string row_user_hardware(const validation::RowResult& r, const hw::Catalog& catalog) {
  return catalog.has_system(r.row.system) ? user_hardware(catalog.system(r.row.system)) : "";
}

validation::TrustQuery row_query_with_type(const validation::RowResult& r, const hw::Catalog& catalog,
                                           const std::string& model_type) {
  return validation::TrustQuery{r.row.kind, validation::family_of_row(r.row, catalog), model_type,
                                r.row.precision.empty() ? "bf16" : r.row.precision, r.prediction.framework,
                                r.row.chips,
                                row_user_hardware(r, catalog),
                                "",  // a row's chip: its rows are the validation itself (no chip check)
                                ""};
}

}  // namespace

validation::TrustQuery row_query(const validation::RowResult& r, const hw::Catalog& catalog,
                                 const std::string& models_dir) {
  return row_query_with_type(r, catalog, validation::model_type_of(workload::load_model(r.row.model_ref(), models_dir)));
}

namespace {

/// The assessment of each ok row, in row order (none for the others); one model file read per
/// model, not per row.
std::vector<std::optional<validation::Assessment>> row_assessments(const std::vector<validation::RowResult>& results,
                                                                   const validation::TrustData& data,
                                                                   const hw::Catalog& catalog,
                                                                   const std::string& models_dir) {
  std::vector<std::optional<validation::Assessment>> out(results.size());
  std::map<std::string, validation::TrustQuery> by_model;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (r.prediction.status != validation::Status::Ok) continue;
    auto it = by_model.find(r.row.model_ref());
    if (it == by_model.end()) it = by_model.emplace(r.row.model_ref(), row_query(r, catalog, models_dir)).first;
    out[i] = validation::assess(data, row_query_with_type(r, catalog, it->second.model_type));
  }
  return out;
}

}  // namespace

void add_row_trust(Json& doc, const std::vector<validation::RowResult>& results, const validation::TrustData& data,
                   const hw::Catalog& catalog, const std::string& models_dir) {
  Json& rows = doc.at("rows");
  const auto assessments = row_assessments(results, data, catalog, models_dir);
  for (size_t i = 0; i < results.size() && i < rows.size(); ++i) {
    if (!assessments[i]) continue;
    const auto& r = results[i];
    const auto& a = *assessments[i];
    const auto [low, high] =
        validation::band_of(a, r.prediction.predicted, validation::is_time_metric(r.row.metric), r.row.metric);
    rows[i]["predicted_low"] = low;
    rows[i]["predicted_high"] = high;
    rows[i]["extrapolating"] = a.extrapolating;
    rows[i]["extrapolating_reasons"] = a.reasons;
  }
}

std::vector<std::pair<double, double>> row_bands(const std::vector<validation::RowResult>& results,
                                                 const validation::TrustData& data, const hw::Catalog& catalog,
                                                 const std::string& models_dir) {
  const auto assessments = row_assessments(results, data, catalog, models_dir);
  std::vector<std::pair<double, double>> bands(results.size(), {0.0, 0.0});
  for (size_t i = 0; i < results.size(); ++i) {
    if (!assessments[i]) continue;
    const auto& r = results[i];
    bands[i] = validation::band_of(*assessments[i], r.prediction.predicted, validation::is_time_metric(r.row.metric),
                                   r.row.metric);
  }
  return bands;
}

std::vector<TrustedMetric> train_metrics(const engine::TrainResult& r) {
  return {{"step_time_s", "step time", core::to_seconds(r.step_time), "s", true, "step_time_s"},
          {"tokens_per_s", "tokens/s", r.tokens_per_s, "", false, "tokens_per_s_per_chip"},
          {"tokens_per_s_per_chip", "tokens/s/chip", r.tokens_per_s_per_chip, "", false, "tokens_per_s_per_chip"},
          {"mfu_pct", "MFU", r.mfu * 100.0, "%", false, "mfu_pct"}};
}

std::vector<TrustedMetric> serve_metrics(const serve::ServeReport& rep) {
  return {{"ttft_mean_ms", "TTFT mean", rep.sim.ttft_ms.mean, "ms", true, "ttft_ms"},
          {"tpot_mean_ms", "TPOT mean", rep.sim.tpot_ms.mean, "ms", true, "tpot_ms"},
          {"output_tokens_per_s", "output tokens/s", rep.sim.output_tokens_per_s, "", false, "throughput_tokens_per_s"},
          {"output_tokens_per_s_per_chip", "output tokens/s/chip", rep.output_tokens_per_s_per_chip, "", false,
           "throughput_tokens_per_s_per_chip"}};
}

void add_trust_json(Json& doc, const validation::TrustData& data, const validation::Assessment& a,
                    const std::vector<TrustedMetric>& metrics) {
  Json metric_bands = Json::object();
  for (const auto& m : metrics) {
    const auto [low, high] = validation::band_of(a, m.value, m.is_time, m.metric);
    doc[m.key + "_low"] = low;
    doc[m.key + "_high"] = high;
    const validation::Band* cell = validation::metric_band(a, m.metric);
    const validation::Band b = validation::band_for(a, m.metric);
    metric_bands[m.key] = {{"band_rows", cell ? cell->n : a.band.n},
                           {"cell", cell ? "framework and metric" : "kind and family"},
                           {"basis", validation::band_basis(a, m.metric)},
                           {"log_residual_p10", b.low},
                           {"log_residual_p90", b.high}};
  }
  Json trust{{"band_basis", data.basis},
             {"band_cell", a.group},
             {"band_cell_chips", std::vector<std::string>(a.group_chips.begin(), a.group_chips.end())},
             {"has_band", a.has_band},
             {"band_rows", a.band.n},
             {"log_residual_p10", a.band.low},
             {"log_residual_p90", a.band.high},
             {"extrapolating", a.extrapolating},
             {"reasons", a.reasons},
             {"metric_bands", metric_bands}};
  if (a.extrapolating)
    trust["widening"] = a.widening.sources > 0
                            ? Json{{"rule", "spread between sources"},
                                   {"sources", a.widening.sources},
                                   {"log_spread", a.widening.log_spread}}
                            : Json{{"rule", "twice the width"}, {"sources", 0}};
  doc["trust"] = trust;
}

std::string trust_text(const validation::TrustData& data, const validation::Assessment& a,
                       const std::vector<TrustedMetric>& metrics) {
  std::ostringstream o;
  if (a.has_band) {
    o << strformat("uncertainty (p10..p90 of out-of-fold residuals: its framework and metric's where they have at "
                   "least %d rows, else those of %s%s):\n",
                   validation::kMinCellRows, a.group.c_str(), a.extrapolating ? "; widened, extrapolating" : "");
    for (const auto& m : metrics) {
      const auto [low, high] = validation::band_of(a, m.value, m.is_time, m.metric);
      o << strformat("  %-22s %.4g .. %.4g %s (%s)\n", m.label.c_str(), low, high, m.unit.c_str(),
                     validation::band_rows_basis(a, m.metric).c_str());
    }
    if (a.extrapolating) o << "  " << validation::widening_text(a) << "\n";
  } else {
    o << "uncertainty: no cross-validated rows of this kind and family (" << data.basis << ")\n";
  }
  if (a.extrapolating) {
    o << "extrapolating:\n";
    for (const auto& r : a.reasons) o << "  - " << r << "\n";
  }
  return o.str();
}

}  // namespace xpusim::report
