#include "xpusim/validation/summary.h"

#include <algorithm>
#include <cmath>

#include "xpusim/compute/calibration.h"
#include "xpusim/core/parallel.h"

namespace xpusim::validation {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  for (auto& x : v) x = std::fabs(x);
  std::sort(v.begin(), v.end());
  const double pos = p / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(v.size() - 1, lo + 1);
  const double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

RowResult predict_row(const Row& row, const Context& ctx) {
  RowResult rr;
  rr.row = row;
  try {
    rr.prediction = row.kind == "train" ? predict_train(row, ctx) : predict_infer(row, ctx);
  } catch (const core::InputError& e) {
    rr.prediction.status = Status::Error;
    rr.prediction.reason = e.what();
  }
  if (rr.prediction.status == Status::Ok) rr.error_pct = (rr.prediction.predicted - row.value) / row.value * 100.0;
  return rr;
}

std::vector<RowResult> run_all(const std::vector<Row>& rows, const Context& ctx) {
  std::vector<RowResult> out(rows.size());
  core::parallel_for(rows.size(), core::default_threads(), [&](size_t i) { out[i] = predict_row(rows[i], ctx); });
  return out;
}

namespace {
KindSummary summarize_vec(const std::vector<const RowResult*>& rs) {
  KindSummary k;
  std::vector<double> errs;
  for (const auto* r : rs) {
    ++k.n;
    switch (r->prediction.status) {
      case Status::Ok:
        ++k.ok;
        errs.push_back(r->error_pct);
        break;
      case Status::Unsupported: ++k.unsupported; break;
      case Status::Error: ++k.errors; break;
    }
  }
  k.median_abs_error_pct = percentile(errs, 50);
  k.p90_abs_error_pct = percentile(errs, 90);
  double s = 0;
  for (double e : errs) s += std::fabs(e);
  k.mean_abs_error_pct = errs.empty() ? 0.0 : s / static_cast<double>(errs.size());
  return k;
}
}  // namespace

std::map<std::string, KindSummary> summarize(const std::vector<RowResult>& results) {
  std::map<std::string, std::vector<const RowResult*>> by;
  for (const auto& r : results) by[r.row.kind].push_back(&r);
  std::map<std::string, KindSummary> out;
  for (const auto& [k, v] : by) out[k] = summarize_vec(v);
  return out;
}

std::map<std::string, KindSummary> summarize_by_family(const std::vector<RowResult>& results,
                                                       const hw::Catalog& catalog) {
  std::map<std::string, std::vector<const RowResult*>> by;
  for (const auto& r : results) {
    std::string family = "unknown";
    if (catalog.has_system(r.row.system)) family = compute::family_of(catalog.system(r.row.system).chip);
    by[r.row.kind + "/" + family].push_back(&r);
  }
  std::map<std::string, KindSummary> out;
  for (const auto& [k, v] : by) out[k] = summarize_vec(v);
  return out;
}

std::string default_public_file(const std::string& data_dir) { return data_dir + "/validation/public.csv"; }

}  // namespace xpusim::validation
