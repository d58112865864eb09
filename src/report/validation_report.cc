#include "xpusim/report/validation_report.h"

#include <nlohmann/json.hpp>
#include <cmath>
#include <map>
#include <sstream>

#include "xpusim/core/format.h"
#include "xpusim/report/trust_report.h"
#include "xpusim/validation/source.h"

namespace xpusim::report {

namespace {

using core::strformat;

/// {"<name>": value} of what the twin simulated for the row (validate --explain).
Json explain_json(const validation::Prediction& p) {
  Json out = Json::object();
  for (const auto& item : p.explain) {
    // Counts (tp, engines, requests) print as integers, the rest as numbers.
    const bool whole = std::floor(item.value) == item.value && std::fabs(item.value) < 1e15;
    out[std::string(item.name)] = whole ? Json(static_cast<long long>(item.value)) : Json(item.value);
  }
  return out;
}

Json row_json(const validation::RowResult& r, bool explain) {
  const bool ok = r.prediction.status == validation::Status::Ok;
  Json row = {{"id", r.row.id}, {"kind", r.row.kind}, {"metric", r.row.metric}, {"measured", r.row.value}};
  row["predicted"] = ok ? Json(r.prediction.predicted) : Json(nullptr);
  row["error_pct"] = ok ? Json(r.error_pct) : Json(nullptr);
  row["status"] = status_name(r.prediction.status);
  row["reason"] = r.prediction.reason;
  row["system"] = r.row.system;
  row["assumptions"] = r.prediction.assumptions;
  row["fits"] = r.prediction.does_not_fit.empty();
  if (!r.prediction.does_not_fit.empty()) row["does_not_fit"] = r.prediction.does_not_fit;
  if (!r.prediction.beyond_context.empty()) row["beyond_context"] = r.prediction.beyond_context;
  if (explain) row["explain"] = explain_json(r.prediction);
  return row;
}

/// "  73%" of the rows with a band whose measured value lies inside it ("    -" without bands).
std::string coverage_text(const validation::KindSummary& s) {
  return s.banded > 0 ? strformat(" %8.0f%%", 100.0 * s.in_band / s.banded) : strformat(" %9s", "-");
}

std::string summary_line(const std::string& name, const validation::KindSummary& s,
                         const validation::KindSummary* cv) {
  std::string line = strformat("  %-26s %4d %4d %11.1f%% %9.1f%% %9.1f%%", name.c_str(), s.n, s.ok,
                               s.median_abs_error_pct, s.p90_abs_error_pct, s.mean_abs_error_pct);
  line += coverage_text(s);
  if (cv) line += strformat(" %14.1f%% %9.1f%%", cv->median_abs_error_pct, cv->p90_abs_error_pct) + coverage_text(*cv);
  return line + "\n";
}

Json kind_json(const validation::KindSummary& s, const validation::KindSummary* cv) {
  Json j = {{"n", s.n},
            {"ok", s.ok},
            {"unsupported", s.unsupported},
            {"errors", s.errors},
            {"median_abs_error_pct", s.median_abs_error_pct},
            {"p90_abs_error_pct", s.p90_abs_error_pct},
            {"mean_abs_error_pct", s.mean_abs_error_pct},
            {"band_rows", s.banded},
            {"beyond_context_rows", s.beyond_context}};
  j["band_coverage_pct"] = s.banded > 0 ? Json(100.0 * s.in_band / s.banded) : Json(nullptr);
  if (cv) {
    j["cv_median_abs_error_pct"] = cv->median_abs_error_pct;
    j["cv_p90_abs_error_pct"] = cv->p90_abs_error_pct;
    if (cv->banded > 0) {  // the out-of-fold predictions' own bands
      j["cv_band_rows"] = cv->banded;
      j["cv_band_coverage_pct"] = 100.0 * cv->in_band / cv->banded;
    }
  }
  return j;
}

const validation::KindSummary* find_in(const std::map<std::string, validation::KindSummary>& m, const std::string& k) {
  const auto it = m.find(k);
  return it == m.end() ? nullptr : &it->second;
}

void rows_table_header(std::ostream& o) {
  o << strformat("%-58s %-5s %-34s %12s %12s %8s\n", "id", "kind", "metric", "measured", "predicted", "error");
}

/// "    tp 2, pp 1, …, step_time_s 0.6936, …": the row's explanation under its line.
void explain_line(std::ostream& o, const validation::RowResult& r) {
  if (r.prediction.explain.empty()) return;
  o << "   ";
  const char* sep = " ";
  for (const auto& item : r.prediction.explain) {
    o << sep << item.name << " " << core::fmt_num(item.value, 4);
    sep = ", ";
  }
  o << "\n";
}

void row_line(std::ostream& o, const validation::RowResult& r, bool explain) {
  const std::string measured = core::fmt_num(r.row.value, 5);
  if (r.prediction.status == validation::Status::Ok)
    o << strformat("%-58s %-5s %-34s %12s %12s %+7.1f%%%s%s\n", r.row.id.c_str(), r.row.kind.c_str(),
                   r.row.metric.c_str(), measured.c_str(), core::fmt_num(r.prediction.predicted, 5).c_str(),
                   r.error_pct, r.prediction.does_not_fit.empty() ? "" : "  does not fit in memory as stated",
                   r.prediction.beyond_context.empty() ? "" : "  beyond the model's context as stated");
  else
    o << strformat("%-58s %-5s %-34s %12s %12s %8s\n", r.row.id.c_str(), r.row.kind.c_str(), r.row.metric.c_str(),
                   measured.c_str(), "-", status_name(r.prediction.status));
  if (explain) explain_line(o, r);
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

namespace {

using Summaries = std::map<std::string, validation::KindSummary>;

// {"<name>": {"<kind>": …}} from summaries keyed "<kind>/<name>", with the CV figures of the
// same key when `cv` is given.
Json by_group_json(const Summaries& groups, const Summaries* cv) {
  Json out = Json::object();
  for (const auto& [group, s] : groups) {
    const size_t slash = group.find('/');
    out[group.substr(slash + 1)][group.substr(0, slash)] = kind_json(s, cv ? find_in(*cv, group) : nullptr);
  }
  return out;
}

Json summary_json_of(const Summaries& kinds, const Summaries& families, const Summaries* cv_kinds,
                     const Summaries* cv_families) {
  Json summary = Json::object();
  for (const auto& [k, s] : kinds) summary[k] = kind_json(s, cv_kinds ? find_in(*cv_kinds, k) : nullptr);
  summary["by_family"] = by_group_json(families, cv_families);
  return summary;
}

// The per-source table of a cross-validated run: each source is one fold's held-out rows.
std::string source_table_text(const Summaries& sources, const Summaries& cv_sources) {
  std::ostringstream o;
  o << "\nper held-out source (each leave-one-source-out fold predicts one source's rows)\n";
  o << strformat("  %-52s %-5s %4s %4s %12s %10s %15s %10s\n", "source", "kind", "n", "ok", "median |err|",
                 "p90 |err|", "CV median |err|", "CV p90");
  for (const auto& [group, s] : sources) {
    const size_t slash = group.find('/');
    const validation::KindSummary* cv = find_in(cv_sources, group);
    const std::string cv_text = cv ? strformat(" %14.1f%% %9.1f%%", cv->median_abs_error_pct, cv->p90_abs_error_pct)
                                   : strformat(" %15s %10s", "-", "-");
    o << strformat("  %-52s %-5s %4d %4d %11.1f%% %9.1f%%", group.substr(slash + 1).c_str(),
                   group.substr(0, slash).c_str(), s.n, s.ok, s.median_abs_error_pct, s.p90_abs_error_pct)
      << cv_text << "\n";
  }
  return o.str();
}

std::string summary_text_of(const Summaries& kinds, const Summaries& families, const Summaries* cv_kinds,
                            const Summaries* cv_families) {
  std::ostringstream o;
  o << strformat("  %-26s %4s %4s %12s %10s %10s %9s", "kind", "n", "ok", "median |err|", "p90 |err|", "mean |err|",
                 "in band");
  o << (cv_kinds ? strformat(" %15s %10s %9s\n", "CV median |err|", "CV p90", "CV band") : std::string("\n"));
  for (const auto& [k, s] : kinds) o << summary_line(k, s, cv_kinds ? find_in(*cv_kinds, k) : nullptr);
  for (const auto& [f, s] : families) o << summary_line(f, s, cv_families ? find_in(*cv_families, f) : nullptr);
  for (const auto& [k, s] : kinds)
    if (s.beyond_context > 0)
      o << strformat("  %d %s row(s) run beyond their model config's context, as their sources state (flagged: "
                     "beyond_context)\n",
                     s.beyond_context, k.c_str());
  return o.str();
}

// A table of summaries keyed "<kind>/<name>" (sources; framework/metric cells), with band coverage.
std::string group_table_text(const std::string& title, const std::string& column, const Summaries& groups) {
  std::ostringstream o;
  o << "\n" << title << "\n";
  o << strformat("  %-52s %-5s %4s %4s %12s %10s %9s\n", column.c_str(), "kind", "n", "ok", "median |err|",
                 "p90 |err|", "in band");
  for (const auto& [group, s] : groups) {
    const size_t slash = group.find('/');
    o << strformat("  %-52s %-5s %4d %4d %11.1f%% %9.1f%%", group.substr(slash + 1).c_str(),
                   group.substr(0, slash).c_str(), s.n, s.ok, s.median_abs_error_pct, s.p90_abs_error_pct)
      << coverage_text(s) << "\n";
  }
  return o.str();
}

std::string summary_heading(bool cv) {
  return std::string("\nsummary (absolute error over predicted rows") + (cv ? "; CV: leave-one-source-out" : "") + ")\n";
}

void not_predicted_line(std::ostream& o, const validation::RowResult& r, bool& header) {
  if (!header) o << "\nrows not predicted\n";
  header = true;
  o << "  " << r.row.id << " (" << status_name(r.prediction.status) << "): " << r.prediction.reason << "\n";
}


}  // namespace

CvSummaries::CvSummaries(const std::vector<validation::RowResult>* cv, const hw::Catalog& catalog,
                         const InBand* cv_in_band)
    : given(cv != nullptr) {
  if (!cv) return;
  validation::SummaryBuilder b(&catalog);
  for (size_t i = 0; i < cv->size(); ++i)
    b.add((*cv)[i], cv_in_band && i < cv_in_band->size() ? (*cv_in_band)[i] : std::nullopt);
  kinds = b.kinds();
  families = b.families();
  sources = b.sources();
}

namespace {

validation::SummaryBuilder summaries_of(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                                        const InBand* in_band) {
  validation::SummaryBuilder b(&catalog);
  for (size_t i = 0; i < results.size(); ++i)
    b.add(results[i], in_band && i < in_band->size() ? (*in_band)[i] : std::nullopt);
  return b;
}

// The summary of the stream and of the held rows alike: per kind, family, source (CV figures
// when given) and framework/metric.
Json summary_json_from(const validation::SummaryBuilder& b, const CvSummaries& c) {
  Json summary = summary_json_of(b.kinds(), b.families(), c.kinds_or_null(), c.families_or_null());
  summary["by_source"] = by_group_json(b.sources(), c.given ? &c.sources : nullptr);
  summary["by_framework_metric"] = by_group_json(b.cells(), nullptr);
  return summary;
}

std::string summary_text_from(const validation::SummaryBuilder& b, const CvSummaries& c) {
  std::string text = summary_text_of(b.kinds(), b.families(), c.kinds_or_null(), c.families_or_null());
  text += c.given ? source_table_text(b.sources(), c.sources) : group_table_text("per source", "source", b.sources());
  return text + group_table_text("per framework and metric", "framework / metric", b.cells());
}

}  // namespace

InBand rows_in_band(const std::vector<validation::RowResult>& results, const validation::TrustData& trust,
                    const hw::Catalog& catalog, const std::string& models_dir) {
  const auto bands = row_bands(results, trust, catalog, models_dir);
  InBand out(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& [low, high] = bands[i];
    const double v = results[i].row.value;
    if (low < high) out[i] = low <= v && v <= high;
  }
  return out;
}

Json summary_json(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                  const std::vector<validation::RowResult>* cv, const InBand* in_band, const InBand* cv_in_band) {
  return summary_json_from(summaries_of(results, catalog, in_band), CvSummaries(cv, catalog, cv_in_band));
}

namespace {

/// What `validate` read: the file, whether it cross-validated, and the row globs when given.
Json validate_inputs(const std::string& file, bool cv, const std::string& row_ids) {
  Json inputs{{"file", file}, {"cv", cv}};
  if (!row_ids.empty()) inputs["row_ids"] = row_ids;
  return inputs;
}

}  // namespace

Json validation_document(const Provenance& provenance, const std::string& file,
                         const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                         const std::vector<validation::RowResult>* cv, bool explain, const std::string& row_ids,
                         const InBand* in_band, const InBand* cv_in_band) {
  Json rows = Json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    Json row = row_json(results[i], explain);
    if (cv) row["cv_source"] = validation::source_of(results[i].row.source_url);
    if (cv && i < cv->size() && !(*cv)[i].fold.empty()) row["cv_fold"] = (*cv)[i].fold;  // the fold that held it out
    if (cv && i < cv->size() && (*cv)[i].prediction.status == validation::Status::Ok) {
      row["cv_predicted"] = (*cv)[i].prediction.predicted;  // out of fold: no row of its source in the fit
      row["cv_error_pct"] = (*cv)[i].error_pct;
    }
    rows.push_back(row);
  }
  return document("validate", provenance, validate_inputs(file, cv != nullptr, row_ids),
                  Json{{"rows", rows}, {"summary", summary_json(results, catalog, cv, in_band, cv_in_band)}});
}

std::string summary_text(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                         const std::vector<validation::RowResult>* cv, const InBand* in_band, const InBand* cv_in_band) {
  return summary_text_from(summaries_of(results, catalog, in_band), CvSummaries(cv, catalog, cv_in_band));
}

std::string validation_text(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                            const std::vector<validation::RowResult>* cv, bool explain, const InBand* in_band,
                            const InBand* cv_in_band) {
  std::ostringstream o;
  rows_table_header(o);
  for (const auto& r : results) row_line(o, r, explain);
  o << summary_heading(cv != nullptr);
  o << summary_text(results, catalog, cv, in_band, cv_in_band);
  bool header = false;
  for (const auto& r : results)
    if (r.prediction.status != validation::Status::Ok) not_predicted_line(o, r, header);
  return o.str();
}

// ------------------------------------------------------------------ streaming

namespace {

// Rows not predicted that a streamed text report lists by name (the rest are counted).
constexpr size_t kListedNotPredicted = 1000;

constexpr const char* kRowsMark = "@@xpusim-rows@@";
constexpr const char* kSummaryMark = "\"@@xpusim-summary@@\"";

ValidationStream::Frame frame_of(const Provenance& provenance, const std::string& file, const std::string& row_ids) {
  const std::string text =
      document("validate", provenance, validate_inputs(file, false, row_ids), Json{{"rows", Json::array({kRowsMark})}, {"summary", "@@xpusim-summary@@"}})
          .dump(2);
  const std::string rows_key = "\"rows\": ";
  const size_t at = text.find(rows_key);
  const size_t close = text.find("\n  ]", at);
  return ValidationStream::Frame{text.substr(0, at + rows_key.size()), text.substr(close + 4)};
}

// `text` with every line after the first indented by `spaces`.
std::string indented(const std::string& text, int spaces) {
  const std::string pad(static_cast<size_t>(spaces), ' ');
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

}  // namespace

ValidationStream::ValidationStream(std::ostream& out, bool json, const Provenance& provenance, const std::string& file,
                                   const hw::Catalog& catalog, const validation::TrustData& trust, std::string models_dir,
                                   bool explain, const std::string& row_ids)
    : out_(out), json_(json), explain_(explain), provenance_(provenance), file_(file), catalog_(catalog), trust_(trust),
      models_dir_(std::move(models_dir)), summary_(&catalog) {
  if (json_) frame_ = frame_of(provenance, file, row_ids);
}

void ValidationStream::add(const std::vector<validation::RowResult>& batch) {
  const InBand in_band = rows_in_band(batch, trust_, catalog_, models_dir_);
  for (size_t i = 0; i < batch.size(); ++i) summary_.add(batch[i], in_band[i]);
  if (!json_) {
    if (rows_ == 0) rows_table_header(out_);
    rows_ += static_cast<long long>(batch.size());
    for (const auto& r : batch) {
      row_line(out_, r, explain_);
      if (r.prediction.status == validation::Status::Ok) continue;
      if (not_predicted_.size() < kListedNotPredicted) {
        validation::RowResult brief;
        brief.row.id = r.row.id;
        brief.prediction.status = r.prediction.status;
        brief.prediction.reason = r.prediction.reason;
        not_predicted_.push_back(std::move(brief));
      } else {
        ++more_not_predicted_;
      }
    }
    return;
  }
  Json doc{{"rows", Json::array()}};
  for (const auto& r : batch) doc["rows"].push_back(row_json(r, explain_));
  add_row_trust(doc, batch, trust_, catalog_, models_dir_);
  if (rows_ == 0) out_ << frame_.head << "[\n";
  for (const auto& row : doc["rows"]) out_ << (rows_++ ? ",\n    " : "    ") << indented(row.dump(2), 4);
}

void ValidationStream::finish() {
  const CvSummaries no_cv(nullptr, catalog_);
  if (!json_) {
    if (rows_ == 0) rows_table_header(out_);
    out_ << summary_heading(false) << summary_text_from(summary_, no_cv);
    bool header = false;
    for (const auto& r : not_predicted_) not_predicted_line(out_, r, header);
    if (more_not_predicted_ > 0) out_ << "  ... and " << more_not_predicted_ << " more rows not predicted\n";
    return;
  }
  out_ << (rows_ == 0 ? frame_.head + "[]" : std::string("\n  ]"));
  std::string tail = frame_.tail;
  const Json summary = summary_json_from(summary_, no_cv);
  tail.replace(tail.find(kSummaryMark), std::string(kSummaryMark).size(), indented(summary.dump(2), 2));
  out_ << tail << "\n";
}

}  // namespace xpusim::report
