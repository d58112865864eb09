// Uncertainty bands and the extrapolating flag (validation/trust.h, docs/validation.md).

#include "xpusim/validation/trust.h"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>

#include "xpusim/compute/calibration.h"
#include "xpusim/config/document.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/format.h"
#include "xpusim/core/suggest.h"
#include "xpusim/validation/source.h"
#include "xpusim/workload/hf_config.h"

namespace xpusim::validation {

namespace {

using config::Json;

/// Percentile of signed values as a prediction bound: the k-th smallest of n values lies above a
/// new draw with probability k/(n+1), so the p-th percentile sits at rank p·(n+1) (Hyndman and
/// Fan's type 6), interpolated between ranks and held at the extremes. With many values it is the
/// usual percentile; with few it is wider, as a band for an unseen row must be (a type-7 band of
/// four rows covered half of them).
double signed_percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double pos = p / 100.0 * static_cast<double>(v.size() + 1) - 1.0;  // 0-based rank
  if (pos <= 0) return v.front();
  if (pos >= static_cast<double>(v.size() - 1)) return v.back();
  const size_t lo = static_cast<size_t>(std::floor(pos));
  return v[lo] + (v[lo + 1] - v[lo]) * (pos - static_cast<double>(lo));
}

double rounded(double v) { return std::round(v * 1e4) / 1e4; }

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// Per kind: p90 − p10 of the median log-residuals of the sources with kMinSourceRows rows or
/// more, when kMinSpreadSources sources have them.
std::map<std::string, Widening> spread_between_sources(const std::map<std::string, std::vector<double>>& by_source) {
  std::map<std::string, std::vector<double>> medians;  // kind -> per-source medians
  for (const auto& [kind_source, v] : by_source)
    if (static_cast<int>(v.size()) >= kMinSourceRows)
      medians[kind_source.substr(0, kind_source.find('/'))].push_back(median_of(v));
  std::map<std::string, Widening> out;
  for (const auto& [kind, m] : medians)
    if (static_cast<int>(m.size()) >= kMinSpreadSources)
      out[kind] = Widening{static_cast<int>(m.size()), rounded(signed_percentile(m, 90) - signed_percentile(m, 10))};
  return out;
}

Json set_json(const std::set<std::string>& s) { return Json(std::vector<std::string>(s.begin(), s.end())); }

std::set<std::string> read_set(const Json& j, const std::string& path, core::Diagnostics& diags) {
  std::set<std::string> out;
  if (!j.is_array()) {
    diags.error(path, "wrong type", config::brief(j), "a list of names");
    return out;
  }
  for (const auto& e : j)
    if (e.is_string()) out.insert(e.get<std::string>());
    else diags.error(path, "wrong type", config::brief(e), "a name");
  return out;
}

double read_number(const Json& j, const char* key, const std::string& path, core::Diagnostics& diags) {
  if (j.contains(key) && j.at(key).is_number()) return j.at(key).get<double>();
  diags.error(path + "." + key, "missing or not a number", j.contains(key) ? config::brief(j.at(key)) : "", "a number");
  return 0;
}

}  // namespace

bool is_time_metric(const std::string& metric) {
  return metric == "step_time_s" || metric == "time_to_train_min" || metric == "ttft_ms" || metric == "tpot_ms" ||
         metric == "e2e_latency_s";
}

double rate_log_residual(const RowResult& r) {
  const double residual = std::log(r.prediction.predicted / r.row.value);
  return is_time_metric(r.row.metric) ? -residual : residual;
}

std::string model_type_of(const workload::ModelSpec& model) {
  if (model.has_recurrent()) return model.attention_layers() == 0 ? "ssm" : "hybrid";
  // DeepSeek Sparse Attention: no validation row runs it.
  if (model.dsa.enabled()) return model.moe.num_experts > 0 ? "moe-sparse-attention" : "sparse-attention";
  // Nemotron-NAS: layers of different shapes; no validation row runs one.
  if (model.heterogeneous()) return "dense-heterogeneous";
  return model.moe.num_experts > 0 ? "moe" : "dense";
}

std::string family_of_row(const Row& row, const hw::Catalog& catalog) {
  return catalog.has_system(row.system) ? compute::family_of(catalog.system(row.system).chip) : "unknown";
}

TrustData trust_from(const std::vector<RowResult>& cv, const Context& ctx, const std::string& basis) {
  TrustData data;
  data.basis = basis;
  std::map<std::string, std::vector<double>> residuals, cells, by_source;
  for (const auto& r : cv) {
    if (r.prediction.status != Status::Ok || r.prediction.predicted <= 0 || r.row.value <= 0) continue;
    const std::string group = r.row.kind + "/" + family_of_row(r.row, *ctx.catalog);
    residuals[group].push_back(rate_log_residual(r));
    by_source[r.row.kind + "/" + source_of(r.row.source_url)].push_back(rate_log_residual(r));
    if (!r.prediction.framework.empty())
      cells[group + "/" + r.prediction.framework + "/" + r.row.metric].push_back(rate_log_residual(r));
    Coverage& c = data.coverage[group];
    c.max_chips = std::max(c.max_chips, r.row.chips);
    c.model_types.insert(model_type_of(workload::load_model(r.row.model_ref(), ctx.models_dir)));
    c.precisions.insert(r.row.precision.empty() ? "bf16" : r.row.precision);
    if (!r.prediction.framework.empty()) c.frameworks.insert(r.prediction.framework);
    if (ctx.catalog->has_system(r.row.system)) c.chips.insert(ctx.catalog->system(r.row.system).chip.id);
  }
  for (const auto& [group, v] : residuals)
    data.bands[group] = Band{static_cast<int>(v.size()), rounded(signed_percentile(v, 10)),
                             rounded(signed_percentile(v, 90))};
  for (const auto& [cell, v] : cells)
    if (static_cast<int>(v.size()) >= kMinCellRows)
      data.cells[cell] = Band{static_cast<int>(v.size()), rounded(signed_percentile(v, 10)),
                              rounded(signed_percentile(v, 90))};
  data.widening = spread_between_sources(by_source);
  return data;
}

std::string trust_json_text(const TrustData& data) {
  Json j;
  j["basis"] = data.basis;
  j["groups"] = Json::object();
  for (const auto& [group, c] : data.coverage) {
    const Band b = data.bands.count(group) ? data.bands.at(group) : Band{};
    j["groups"][group] = {{"n", b.n},
                          {"log_residual_p10", b.low},
                          {"log_residual_p90", b.high},
                          {"max_chips", c.max_chips},
                          {"model_types", set_json(c.model_types)},
                          {"precisions", set_json(c.precisions)},
                          {"frameworks", set_json(c.frameworks)},
                          {"chips", set_json(c.chips)}};
  }
  j["cells"] = Json::object();
  for (const auto& [cell, b] : data.cells)
    j["cells"][cell] = {{"n", b.n}, {"log_residual_p10", b.low}, {"log_residual_p90", b.high}};
  j["widening"] = Json::object();
  for (const auto& [kind, w] : data.widening) j["widening"][kind] = {{"sources", w.sources}, {"log_spread", w.log_spread}};
  return j.dump(2) + "\n";
}

TrustData load_trust(const std::string& path) {
  const Json j = config::load_document(path);
  core::Diagnostics diags;
  TrustData data;
  if (j.contains("basis") && j.at("basis").is_string()) data.basis = j.at("basis").get<std::string>();
  if (!j.contains("groups") || !j.at("groups").is_object()) diags.error("groups", "missing", "", "an object");
  else
    for (const auto& [group, g] : j.at("groups").items()) {
      const std::string at = "groups." + group;
      data.bands[group] = Band{static_cast<int>(read_number(g, "n", at, diags)),
                               read_number(g, "log_residual_p10", at, diags),
                               read_number(g, "log_residual_p90", at, diags)};
      Coverage& c = data.coverage[group];
      c.max_chips = static_cast<long long>(read_number(g, "max_chips", at, diags));
      c.model_types = read_set(g.value("model_types", Json::array()), at + ".model_types", diags);
      c.precisions = read_set(g.value("precisions", Json::array()), at + ".precisions", diags);
      c.frameworks = read_set(g.value("frameworks", Json::array()), at + ".frameworks", diags);
      c.chips = read_set(g.value("chips", Json::array()), at + ".chips", diags);
    }
  if (j.contains("cells") && j.at("cells").is_object())
    for (const auto& [cell, g] : j.at("cells").items()) {
      const std::string at = "cells." + cell;
      data.cells[cell] = Band{static_cast<int>(read_number(g, "n", at, diags)),
                              read_number(g, "log_residual_p10", at, diags),
                              read_number(g, "log_residual_p90", at, diags)};
    }
  if (j.contains("widening") && j.at("widening").is_object())  // absent in files before stop 57
    for (const auto& [kind, g] : j.at("widening").items()) {
      const std::string at = "widening." + kind;
      const double spread = read_number(g, "log_spread", at, diags);
      if (!(spread >= 0)) diags.error(at + ".log_spread", "out of range", config::brief(g.at("log_spread")), "a number >= 0");
      data.widening[kind] = Widening{static_cast<int>(read_number(g, "sources", at, diags)), spread};
    }
  diags.set_file(path);
  diags.throw_if_any();
  return data;
}

std::string default_trust_file(const std::string& data_dir) { return data_dir + "/validation/uncertainty.json"; }

Assessment assess(const TrustData& data, const TrustQuery& q) {
  Assessment a;
  const std::string group = q.kind + "/" + q.family;
  a.group = group;
  a.framework = q.framework;
  if (const auto w = data.widening.find(q.kind); w != data.widening.end()) a.widening = w->second;
  const auto band = data.bands.find(group);
  if (band != data.bands.end() && band->second.n > 0) {
    a.has_band = true;
    a.band = band->second;
  }
  const std::string cell_prefix = group + "/" + q.framework + "/";
  for (auto it = data.cells.lower_bound(cell_prefix); it != data.cells.end() && it->first.rfind(cell_prefix, 0) == 0; ++it)
    a.metric_bands[it->first.substr(cell_prefix.size())] = it->second;
  const auto cov = data.coverage.find(group);
  if (cov == data.coverage.end()) {
    a.reasons.push_back("no validated " + q.kind + " rows on the " + q.family + " family");
  } else {
    const Coverage& c = cov->second;
    a.group_chips = c.chips;
    if (!q.chip.empty() && !c.chips.empty() && !c.chips.count(q.chip))
      a.reasons.push_back("no validated " + q.kind + " rows on " + q.chip + " (the " + q.family +
                          " family's rows are on " + core::join(std::vector<std::string>(c.chips.begin(), c.chips.end())) +
                          ")");
    if (!c.model_types.count(q.model_type))
      a.reasons.push_back("model type " + q.model_type + " not validated for " + group);
    if (q.chips > 2 * c.max_chips)
      a.reasons.push_back(std::to_string(q.chips) + " chips is beyond twice the largest validated for " + group +
                          " (" + std::to_string(c.max_chips) + ")");
    if (!c.precisions.count(q.precision))
      a.reasons.push_back("precision " + q.precision + " not validated for " + group);
    if (!q.framework.empty() && !c.frameworks.count(q.framework))
      a.reasons.push_back("framework " + q.framework + " not validated for " + group);
  }
  if (!q.user_hardware.empty())
    a.reasons.push_back("hardware from your catalog (" + q.user_hardware + ") is not validated; the band is the " +
                        group + " family's");
  if (!q.unvalidated_software.empty())
    a.reasons.push_back("software " + q.unvalidated_software + " has no validation measurements");
  a.extrapolating = !a.reasons.empty();
  return a;
}

namespace {

/// The framework cell of `metric`, else of its per-chip twin (a rate and the same rate per chip
/// share their relative error): "throughput_tokens_per_s" <-> "throughput_tokens_per_s_per_chip".
std::map<std::string, Band>::const_iterator metric_cell(const Assessment& a, const std::string& metric) {
  static const std::string per_chip = "_per_chip";
  auto cell = a.metric_bands.find(metric);
  if (cell != a.metric_bands.end()) return cell;
  const bool is_per_chip = metric.size() > per_chip.size() && metric.ends_with(per_chip);
  return a.metric_bands.find(is_per_chip ? metric.substr(0, metric.size() - per_chip.size()) : metric + per_chip);
}

}  // namespace

const Band* metric_band(const Assessment& a, const std::string& metric) {
  const auto cell = metric_cell(a, metric);
  return cell != a.metric_bands.end() ? &cell->second : nullptr;
}

Band band_for(const Assessment& a, const std::string& metric) {
  const auto cell = metric_cell(a, metric);
  Band b = cell != a.metric_bands.end() ? cell->second : a.band;
  if (a.extrapolating) {
    const double half = a.widening.sources > 0 ? a.widening.log_spread / 2 : (b.high - b.low) / 2;
    b.low -= half;
    b.high += half;
  }
  return b;
}

std::string band_rows_basis(const Assessment& a, const std::string& metric) {
  const auto cell = metric_cell(a, metric);
  if (cell != a.metric_bands.end())
    return std::to_string(cell->second.n) + " out-of-fold rows of " + a.group + "/" + a.framework + "/" + cell->first;
  std::string out = std::to_string(a.band.n) + " out-of-fold rows of " + a.group;
  if (!a.group_chips.empty())
    out += " (chips " + core::join(std::vector<std::string>(a.group_chips.begin(), a.group_chips.end())) + ")";
  return out;
}

std::string widening_text(const Assessment& a) {
  if (!a.extrapolating) return "";
  if (a.widening.sources == 0) return "widened to twice its width (extrapolating; no spread between sources measured)";
  return "widened by the spread between " + std::to_string(a.widening.sources) + " sources (" +
         core::fmt_num(a.widening.log_spread, 3) + " in log-residual, half each side; extrapolating)";
}

std::string band_basis(const Assessment& a, const std::string& metric) {
  const std::string widened = widening_text(a);
  return band_rows_basis(a, metric) + (widened.empty() ? "" : "; " + widened);
}

std::pair<double, double> band_of(const Assessment& a, double value, bool is_time, const std::string& metric) {
  if (!a.has_band && a.metric_bands.empty()) return {value, value};
  const Band b = band_for(a, metric);
  if (is_time) return {value * std::exp(b.low), value * std::exp(b.high)};
  return {value * std::exp(-b.high), value * std::exp(-b.low)};
}

}  // namespace xpusim::validation
