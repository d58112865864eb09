#include "xpusim/validation/summary.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "xpusim/compute/calibration.h"
#include "xpusim/core/parallel.h"
#include "xpusim/validation/row_scenario.h"
#include "xpusim/validation/source.h"

namespace xpusim::validation {

// Absolute values, ascending: what percentile_of_sorted reads.
std::vector<double> sorted_abs(std::vector<double> v) {
  for (auto& x : v) x = std::fabs(x);
  std::sort(v.begin(), v.end());
  return v;
}

// The p-th percentile (linear interpolation) of ascending values.
double percentile_of_sorted(const std::vector<double>& v, double p) {
  if (v.empty()) return 0.0;
  const double pos = p / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(v.size() - 1, lo + 1);
  const double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

namespace {

// Whether the row's model comes from a config the measurement file ships beside it rather than
// from the project's models (the same folder, as for data/validation/public.csv, is not).
bool model_from_the_file(const Row& row, const Context& ctx) {
  if (row.model_file.empty()) return false;
  std::error_code ec;
  return !std::filesystem::equivalent(std::filesystem::path(row.model_file).parent_path(), ctx.models_dir, ec);
}

}  // namespace

std::string configuration_key(const Row& r) {
  auto fmt = [](const auto& v) { return v ? std::to_string(*v) : std::string("-"); };
  return r.kind + "|" + r.system + "|" + r.model + "|" + r.precision + "|" + std::to_string(r.chips) + "|" + fmt(r.tp) +
         "|" + fmt(r.pp) + "|" + fmt(r.ep) + "|" + fmt(r.in_len) + "|" + fmt(r.out_len) + "|" +
         fmt(r.batch_or_concurrency) + "|" + r.mode;
}

std::vector<size_t> first_of_each_configuration(const std::vector<std::string>& keys) {
  std::set<std::string> seen;
  std::vector<size_t> first, rest;
  for (size_t i = 0; i < keys.size(); ++i) (seen.insert(keys[i]).second ? first : rest).push_back(i);
  first.insert(first.end(), rest.begin(), rest.end());
  return first;
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
  if (model_from_the_file(row, ctx)) rr.prediction.assumptions.push_back("model config " + row.model_file);
  if (rr.prediction.status == Status::Ok) rr.error_pct = (rr.prediction.predicted - row.value) / row.value * 100.0;
  return rr;
}

std::vector<RowResult> run_all(const std::vector<Row>& rows, const Context& ctx) {
  std::vector<RowResult> out(rows.size());
  ServeRunCache runs;  // a configuration's TTFT and TPOT rows simulate once
  Context shared = ctx;
  if (!shared.serve_runs) shared.serve_runs = &runs;
  std::vector<std::string> keys;
  for (const Row& r : rows) keys.push_back(configuration_key(r));
  const std::vector<size_t> order = first_of_each_configuration(keys);
  core::parallel_for(order.size(), core::default_threads(),
                     [&](size_t k) { out[order[k]] = predict_row(rows[order[k]], shared); });
  return out;
}

void stream_rows(const std::string& path, const Context& ctx, std::size_t batch,
                 const std::function<void(const std::vector<RowResult>&)>& sink, const RowSelection& keep) {
  check_csv_stream(path);
  RowStream stream(path);
  std::vector<Row> rows;
  Row row;
  bool more = true;
  while (more) {
    rows.clear();
    while (rows.size() < std::max<std::size_t>(1, batch) && (more = stream.next(row)))
      if (keep.keeps(row)) rows.push_back(std::move(row));
    if (!rows.empty()) sink(run_all(rows, ctx));
  }
}

void SummaryBuilder::count(Group& g, const RowResult& r, std::optional<bool> in_band) {
  ++g.counts.n;
  switch (r.prediction.status) {
    case Status::Ok:
      ++g.counts.ok;
      g.errors.push_back(r.error_pct);
      g.counts.beyond_context += r.prediction.beyond_context.empty() ? 0 : 1;
      if (in_band) {
        ++g.counts.banded;
        g.counts.in_band += *in_band ? 1 : 0;
      }
      break;
    case Status::Unsupported: ++g.counts.unsupported; break;
    case Status::Error: ++g.counts.errors; break;
  }
}

void SummaryBuilder::add(const RowResult& r, std::optional<bool> in_band) {
  count(kinds_[r.row.kind], r, in_band);
  count(sources_[r.row.kind + "/" + source_of(r.row.source_url)], r, in_band);
  const std::string framework = r.prediction.framework.empty() ? "unknown" : r.prediction.framework;
  count(cells_[r.row.kind + "/" + framework + "/" + r.row.metric], r, in_band);
  if (!catalog_) return;
  std::string family = "unknown";
  if (catalog_->has_system(r.row.system)) family = compute::family_of(catalog_->system(r.row.system).chip);
  count(families_[r.row.kind + "/" + family], r, in_band);
}

std::map<std::string, KindSummary> SummaryBuilder::finish(const std::map<std::string, Group>& groups) {
  std::map<std::string, KindSummary> out;
  for (const auto& [name, g] : groups) {
    KindSummary k = g.counts;
    const std::vector<double> abs_errors = sorted_abs(g.errors);  // one sort for both percentiles
    k.median_abs_error_pct = percentile_of_sorted(abs_errors, 50);
    k.p90_abs_error_pct = percentile_of_sorted(abs_errors, 90);
    double s = 0;
    for (double e : g.errors) s += std::fabs(e);
    k.mean_abs_error_pct = g.errors.empty() ? 0.0 : s / static_cast<double>(g.errors.size());
    out[name] = k;
  }
  return out;
}

std::map<std::string, KindSummary> SummaryBuilder::kinds() const { return finish(kinds_); }
std::map<std::string, KindSummary> SummaryBuilder::families() const { return finish(families_); }
std::map<std::string, KindSummary> SummaryBuilder::sources() const { return finish(sources_); }
std::map<std::string, KindSummary> SummaryBuilder::cells() const { return finish(cells_); }

std::map<std::string, KindSummary> summarize(const std::vector<RowResult>& results) {
  SummaryBuilder b(nullptr);
  for (const auto& r : results) b.add(r);
  return b.kinds();
}

std::map<std::string, KindSummary> summarize_by_family(const std::vector<RowResult>& results,
                                                       const hw::Catalog& catalog) {
  SummaryBuilder b(&catalog);
  for (const auto& r : results) b.add(r);
  return b.families();
}

std::map<std::string, KindSummary> summarize_by_source(const std::vector<RowResult>& results) {
  std::map<std::string, SummaryBuilder::Group> groups;
  for (const auto& r : results) SummaryBuilder::count(groups[r.row.kind + "/" + source_of(r.row.source_url)], r);
  return SummaryBuilder::finish(groups);
}

std::string default_public_file(const std::string& data_dir) { return data_dir + "/validation/public.csv"; }

}  // namespace xpusim::validation
