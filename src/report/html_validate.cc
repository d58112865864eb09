// `validate --html`: predicted against measured per family, the summaries and the rows
// (docs/html.md).

#include <algorithm>
#include <map>

#include "xpusim/core/format.h"
#include "xpusim/report/html.h"
#include "xpusim/report/html_report.h"
#include "xpusim/report/svg.h"
#include "xpusim/report/validation_report.h"
#include "xpusim/validation/trust.h"

namespace xpusim::report {

namespace {

using core::fmt_num;

/// The log-log scatter of one family's ok rows: y = x, ±10 % and ±25 % guides, bands as bars.
std::string family_chart(const std::string& family, const std::vector<size_t>& idx,
                         const std::vector<validation::RowResult>& results, const Bands& bands) {
  double lo = 1e300, hi = 0;
  for (size_t i : idx) {
    const auto& r = results[i];
    for (double v : {r.row.value, r.prediction.predicted, bands[i].first, bands[i].second})
      if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (!(hi > 0)) lo = 1, hi = 10;
  svg::Chart c("pred-vs-measured-" + family, "Predicted against measured: " + family,
               {"measured (row's metric)", lo, hi, true}, {"predicted", lo, hi, true}, 420, 400);
  const double a = c.x().lo, b = c.x().hi;
  c.line({{a, a}, {b, b}}, 7, "y = x");
  c.line({{a, a * 1.1}, {b, b * 1.1}}, 5, "±10 %", true);
  c.line({{a, a * 0.9}, {b, b * 0.9}}, 5, "", true);
  c.line({{a, a * 1.25}, {b, b * 1.25}}, 4, "±25 %", true);
  c.line({{a, a * 0.75}, {b, b * 0.75}}, 4, "", true);
  std::map<std::string, std::vector<svg::Point>> by_kind;
  for (size_t i : idx) {
    const auto& r = results[i];
    by_kind[r.row.kind].push_back({r.row.value, r.prediction.predicted, bands[i].first, bands[i].second,
                                   r.row.id + " (" + r.row.metric + "): measured " + fmt_num(r.row.value, 4) +
                                       ", predicted " + fmt_num(r.prediction.predicted, 4) + ", error " +
                                       fmt_num(r.error_pct, 3) + " %"});
  }
  int colour = 0;
  for (const auto& [kind, pts] : by_kind) c.scatter(pts, colour++, kind);
  return c.render();
}

std::string scatter_charts(const std::vector<validation::RowResult>& results, const Bands& bands,
                           const hw::Catalog& catalog) {
  std::map<std::string, std::vector<size_t>> by_family;
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].prediction.status == validation::Status::Ok)
      by_family[validation::family_of_row(results[i].row, catalog)].push_back(i);
  std::vector<std::string> charts;
  for (const auto& [family, idx] : by_family) charts.push_back(family_chart(family, idx, results, bands));
  return html::row(charts);
}

std::string summary_table(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog) {
  std::vector<html::Cells> rows;
  const auto add = [&](const std::string& name, const validation::KindSummary& k) {
    rows.push_back({name, std::to_string(k.n), std::to_string(k.ok), std::to_string(k.unsupported),
                    std::to_string(k.errors), fmt_num(k.median_abs_error_pct, 3), fmt_num(k.p90_abs_error_pct, 3)});
  };
  for (const auto& [kind, k] : validation::summarize(results)) add(kind, k);
  for (const auto& [key, k] : validation::summarize_by_family(results, catalog)) add(key, k);
  return html::table("summary", {"kind / family", "rows", "ok", "unsupported", "errors", "median |error| %", "p90 |error| %"},
                     rows);
}

std::string rows_table(const std::vector<validation::RowResult>& results, const Bands& bands, const hw::Catalog& catalog) {
  std::vector<html::Cells> rows;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const bool ok = r.prediction.status == validation::Status::Ok;
    const bool band = bands[i].first < bands[i].second;
    rows.push_back({r.row.id, r.row.kind, validation::family_of_row(r.row, catalog), r.row.system, r.row.model,
                    r.row.metric, fmt_num(r.row.value, 4), ok ? fmt_num(r.prediction.predicted, 4) : "",
                    band ? fmt_num(bands[i].first, 4) + " – " + fmt_num(bands[i].second, 4) : "",
                    ok ? fmt_num(r.error_pct, 3) : "", status_name(r.prediction.status), r.prediction.reason});
  }
  return html::table("rows", {"id", "kind", "family", "system", "model", "metric", "measured", "predicted", "band",
                              "error %", "status", "reason"},
                     rows);
}

}  // namespace

std::string validation_html(const Provenance& provenance, const std::string& file,
                            const std::vector<validation::RowResult>& results, const Bands& bands,
                            const hw::Catalog& catalog) {
  std::string body = html::section("summary", "Summary", summary_table(results, catalog),
                                   "Absolute errors over the rows predicted (status ok).");
  body += html::section("scatter", "Predicted against measured, per family", scatter_charts(results, bands, catalog),
                        "Log-log; error bars are the uncertainty band of each prediction (docs/validation.md, "
                        "\"Uncertainty\"); guides at y = x, ±10 % and ±25 %.");
  body += html::section("rows", "Rows", rows_table(results, bands, catalog));
  return html::page("validate", "xpusim validate: " + file,
                    core::fmt_int(static_cast<long long>(results.size())) + " rows", provenance, body);
}

}  // namespace xpusim::report
