#include "xpusim/report/validation_report.h"

#include <map>
#include <sstream>

#include "xpusim/core/format.h"

namespace xpusim::report {

namespace {

using core::strformat;

Json row_json(const validation::RowResult& r) {
  const bool ok = r.prediction.status == validation::Status::Ok;
  Json row = {{"id", r.row.id}, {"kind", r.row.kind}, {"metric", r.row.metric}, {"measured", r.row.value}};
  row["predicted"] = ok ? Json(r.prediction.predicted) : Json(nullptr);
  row["error_pct"] = ok ? Json(r.error_pct) : Json(nullptr);
  row["status"] = status_name(r.prediction.status);
  row["reason"] = r.prediction.reason;
  row["system"] = r.row.system;
  row["assumptions"] = r.prediction.assumptions;
  return row;
}

std::string summary_line(const std::string& name, const validation::KindSummary& s,
                         const validation::KindSummary* cv) {
  std::string line = strformat("  %-26s %4d %4d %11.1f%% %9.1f%% %9.1f%%", name.c_str(), s.n, s.ok,
                               s.median_abs_error_pct, s.p90_abs_error_pct, s.mean_abs_error_pct);
  if (cv) line += strformat(" %14.1f%% %9.1f%%", cv->median_abs_error_pct, cv->p90_abs_error_pct);
  return line + "\n";
}

Json kind_json(const validation::KindSummary& s, const validation::KindSummary* cv) {
  Json j = {{"n", s.n},
            {"ok", s.ok},
            {"unsupported", s.unsupported},
            {"errors", s.errors},
            {"median_abs_error_pct", s.median_abs_error_pct},
            {"p90_abs_error_pct", s.p90_abs_error_pct},
            {"mean_abs_error_pct", s.mean_abs_error_pct}};
  if (cv) {
    j["cv_median_abs_error_pct"] = cv->median_abs_error_pct;
    j["cv_p90_abs_error_pct"] = cv->p90_abs_error_pct;
  }
  return j;
}

const validation::KindSummary* find_in(const std::map<std::string, validation::KindSummary>& m, const std::string& k) {
  const auto it = m.find(k);
  return it == m.end() ? nullptr : &it->second;
}

void rows_table(std::ostream& o, const std::vector<validation::RowResult>& results) {
  o << strformat("%-58s %-5s %-34s %12s %12s %8s\n", "id", "kind", "metric", "measured", "predicted", "error");
  for (const auto& r : results) {
    const std::string measured = core::fmt_num(r.row.value, 5);
    if (r.prediction.status == validation::Status::Ok)
      o << strformat("%-58s %-5s %-34s %12s %12s %+7.1f%%\n", r.row.id.c_str(), r.row.kind.c_str(),
                     r.row.metric.c_str(), measured.c_str(), core::fmt_num(r.prediction.predicted, 5).c_str(),
                     r.error_pct);
    else
      o << strformat("%-58s %-5s %-34s %12s %12s %8s\n", r.row.id.c_str(), r.row.kind.c_str(), r.row.metric.c_str(),
                     measured.c_str(), "-", status_name(r.prediction.status));
  }
}

}  // namespace

const char* status_name(validation::Status s) {
  switch (s) {
    case validation::Status::Ok: return "ok";
    case validation::Status::Unsupported: return "unsupported";
    case validation::Status::Error: return "error";
  }
  return "?";
}

Json summary_json(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                  const std::vector<validation::RowResult>* cv) {
  std::map<std::string, validation::KindSummary> cv_kinds, cv_families;
  if (cv) {
    cv_kinds = validation::summarize(*cv);
    cv_families = validation::summarize_by_family(*cv, catalog);
  }
  Json summary = Json::object();
  for (const auto& [k, s] : validation::summarize(results)) summary[k] = kind_json(s, find_in(cv_kinds, k));
  Json by_family = Json::object();
  for (const auto& [group, s] : validation::summarize_by_family(results, catalog)) {
    const size_t slash = group.find('/');
    by_family[group.substr(slash + 1)][group.substr(0, slash)] = kind_json(s, find_in(cv_families, group));
  }
  summary["by_family"] = by_family;
  return summary;
}

Json validation_document(const Provenance& provenance, const std::string& file,
                         const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                         const std::vector<validation::RowResult>* cv) {
  Json rows = Json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    Json row = row_json(results[i]);
    if (cv && i < cv->size() && (*cv)[i].prediction.status == validation::Status::Ok) {
      row["cv_predicted"] = (*cv)[i].prediction.predicted;  // out of fold: no row of its source in the fit
      row["cv_error_pct"] = (*cv)[i].error_pct;
    }
    rows.push_back(row);
  }
  Json inputs{{"file", file}, {"cv", cv != nullptr}};
  return document("validate", provenance, inputs,
                  Json{{"rows", rows}, {"summary", summary_json(results, catalog, cv)}});
}

std::string summary_text(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                         const std::vector<validation::RowResult>* cv) {
  std::map<std::string, validation::KindSummary> cv_kinds, cv_families;
  if (cv) {
    cv_kinds = validation::summarize(*cv);
    cv_families = validation::summarize_by_family(*cv, catalog);
  }
  std::ostringstream o;
  o << strformat("  %-26s %4s %4s %12s %10s %10s", "kind", "n", "ok", "median |err|", "p90 |err|", "mean |err|");
  o << (cv ? strformat(" %15s %10s\n", "CV median |err|", "CV p90") : std::string("\n"));
  for (const auto& [k, s] : validation::summarize(results)) o << summary_line(k, s, cv ? find_in(cv_kinds, k) : nullptr);
  for (const auto& [f, s] : validation::summarize_by_family(results, catalog))
    o << summary_line(f, s, cv ? find_in(cv_families, f) : nullptr);
  return o.str();
}

std::string validation_text(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                            const std::vector<validation::RowResult>* cv) {
  std::ostringstream o;
  rows_table(o, results);
  o << "\nsummary (absolute error over predicted rows" << (cv ? "; CV: leave-one-source-out" : "") << ")\n";
  o << summary_text(results, catalog, cv);
  bool header = false;
  for (const auto& r : results) {
    if (r.prediction.status == validation::Status::Ok) continue;
    if (!header) o << "\nrows not predicted\n";
    header = true;
    o << "  " << r.row.id << " (" << status_name(r.prediction.status) << "): " << r.prediction.reason << "\n";
  }
  return o.str();
}

}  // namespace xpusim::report
