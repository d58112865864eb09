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

using Summaries = std::map<std::string, validation::KindSummary>;

/// One summary row: counts, in-sample |error| and, when `cv` is given, the out-of-fold figures.
html::Cells summary_cells(const std::string& name, const validation::KindSummary& k, const Summaries* cv) {
  html::Cells cells = {name, std::to_string(k.n), std::to_string(k.ok), std::to_string(k.unsupported),
                       std::to_string(k.errors), fmt_num(k.median_abs_error_pct, 3), fmt_num(k.p90_abs_error_pct, 3)};
  if (cv) {
    const auto it = cv->find(name);
    cells.push_back(it == cv->end() ? "" : fmt_num(it->second.median_abs_error_pct, 3));
    cells.push_back(it == cv->end() ? "" : fmt_num(it->second.p90_abs_error_pct, 3));
  }
  return cells;
}

std::vector<std::string> summary_headers(const std::string& first, bool cv) {
  std::vector<std::string> h = {first, "rows", "ok", "unsupported", "errors", "median |error| %", "p90 |error| %"};
  if (cv) h.insert(h.end(), {"CV median |error| %", "CV p90 |error| %"});
  return h;
}

std::string summary_table(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                          const CvSummaries& cv) {
  std::vector<html::Cells> rows;
  for (const auto& [kind, k] : validation::summarize(results)) rows.push_back(summary_cells(kind, k, cv.kinds_or_null()));
  for (const auto& [key, k] : validation::summarize_by_family(results, catalog))
    rows.push_back(summary_cells(key, k, cv.families_or_null()));
  return html::table("summary", summary_headers("kind / family", cv.given), rows);
}

/// Per held-out source ("kind/source"): the rows one leave-one-source-out fold predicts.
std::string source_table(const std::vector<validation::RowResult>& results, const CvSummaries& cv) {
  std::vector<html::Cells> rows;
  for (const auto& [key, k] : validation::summarize_by_source(results)) rows.push_back(summary_cells(key, k, &cv.sources));
  return html::table("sources", summary_headers("kind / source", true), rows);
}

/// Where a row's time went, in one phrase (from its explanation, validate --explain): a
/// training step and its parts of at least 1 %, or a serving row's decode step at the mean batch
/// with its parts and a prompt alone.
std::string time_went(const validation::Prediction& p) {
  std::map<std::string, double> e;
  for (const auto& item : p.explain) e[std::string(item.name)] = item.value;
  if (e.count("step_time_s") && e["step_time_s"] > 0) {
    static const std::pair<const char*, const char*> parts[] = {
        {"compute_s", "compute"}, {"tp_comm_s", "TP"},  {"cp_comm_s", "CP"},         {"ep_comm_s", "EP"},
        {"pp_comm_s", "PP"},      {"dp_comm_s", "DP"}, {"bubble_s", "bubble"}, {"optimizer_s", "optimizer"}};
    const double step = e["step_time_s"];
    std::string out = "step " + fmt_num(step, 4) + " s:";
    const char* sep = " ";
    for (const auto& [key, label] : parts) {
      const double share = e[key] / step;
      if (share < 0.01) continue;
      out += sep + std::string(label) + " " + fmt_num(100.0 * share, 2) + " %";
      sep = ", ";
    }
    return out;
  }
  if (!e.count("decode_step_ms")) return "";
  return "decode step " + fmt_num(e["decode_step_ms"], 3) + " ms at batch " + fmt_num(e["mean_batch_per_engine"], 3) +
         " (linear " + fmt_num(e["decode_linear_ms"], 3) + ", attention " + fmt_num(e["decode_attention_ms"], 3) +
         ", comm " + fmt_num(e["decode_comm_ms"], 3) + ", overhead " + fmt_num(e["decode_overhead_ms"], 3) +
         "); a prompt alone " + fmt_num(e["prefill_alone_ms"], 3) + " ms";
}

std::string rows_table(const std::vector<validation::RowResult>& results, const Bands& bands, const hw::Catalog& catalog,
                       const std::vector<validation::RowResult>* cv) {
  std::vector<html::Cells> rows;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const bool ok = r.prediction.status == validation::Status::Ok;
    const bool band = bands[i].first < bands[i].second;
    html::Cells cells = {r.row.id, r.row.kind, validation::family_of_row(r.row, catalog), r.row.system, r.row.model,
                         r.row.metric, fmt_num(r.row.value, 4), ok ? fmt_num(r.prediction.predicted, 4) : "",
                         band ? fmt_num(bands[i].first, 4) + " – " + fmt_num(bands[i].second, 4) : "",
                         ok ? fmt_num(r.error_pct, 3) : ""};
    if (cv) {
      const bool cv_ok = i < cv->size() && (*cv)[i].prediction.status == validation::Status::Ok;
      cells.push_back(cv_ok ? fmt_num((*cv)[i].prediction.predicted, 4) : "");
      cells.push_back(cv_ok ? fmt_num((*cv)[i].error_pct, 3) : "");
    }
    cells.push_back(status_name(r.prediction.status));
    cells.push_back(r.prediction.reason);
    cells.push_back(time_went(r.prediction));
    rows.push_back(cells);
  }
  std::vector<std::string> headers = {"id", "kind", "family", "system", "model", "metric", "measured", "predicted", "band",
                                      "error %"};
  if (cv) headers.insert(headers.end(), {"CV predicted", "CV error %"});
  headers.insert(headers.end(), {"status", "reason", "where the time went"});
  return html::table("rows", headers, rows);
}

}  // namespace

std::string validation_html(const Provenance& provenance, const std::string& file,
                            const std::vector<validation::RowResult>& results, const Bands& bands,
                            const hw::Catalog& catalog, const std::vector<validation::RowResult>* cv) {
  const CvSummaries cv_summaries(cv, catalog);
  std::string body = html::section("summary", "Summary", summary_table(results, catalog, cv_summaries),
                                   cv ? "Absolute errors over the rows predicted (status ok); CV: each row predicted "
                                        "by parameters fitted without any row of its source (leave-one-source-out)."
                                      : "Absolute errors over the rows predicted (status ok).");
  if (cv)
    body += html::section("sources", "Per held-out source", source_table(results, cv_summaries),
                          "Each leave-one-source-out fold holds out every row of one source (a repository, paper or "
                          "web site) and predicts them with parameters fitted on the others (docs/validation.md).");
  body += html::section("scatter", "Predicted against measured, per family", scatter_charts(results, bands, catalog),
                        "Log-log; error bars are the uncertainty band of each prediction (docs/validation.md, "
                        "\"Uncertainty\"); guides at y = x, ±10 % and ±25 %.");
  body += html::section("rows", "Rows", rows_table(results, bands, catalog, cv));
  return html::page("validate", "xpusim validate: " + file,
                    core::fmt_int(static_cast<long long>(results.size())) + " rows", provenance, body);
}

}  // namespace xpusim::report
