#pragma once
// Rendering of a validation run (per row predicted vs measured, per kind and family summaries):
// text and JSON (DESIGN.md's stable `validate --json` keys). Computes nothing new.

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "xpusim/report/json_convention.h"
#include "xpusim/validation/summary.h"
#include "xpusim/validation/trust.h"

namespace xpusim::report {

const char* status_name(validation::Status s);
/// Per result row: whether its measured value lies inside its uncertainty band (nullopt: no
/// band, or not predicted).
using InBand = std::vector<std::optional<bool>>;
/// The leave-one-source-out summaries per kind, "kind/family" and "kind/source" of the CV
/// predictions (empty, and `given` false, without `cv`): what every validation renderer shows
/// beside the in-sample figures. With `cv_in_band` (whether each measured value lies inside the
/// band around its out-of-fold prediction) they carry the out-of-fold band coverage.
struct CvSummaries {
  CvSummaries(const std::vector<validation::RowResult>* cv, const hw::Catalog& catalog,
              const InBand* cv_in_band = nullptr);
  const std::map<std::string, validation::KindSummary>* kinds_or_null() const { return given ? &kinds : nullptr; }
  const std::map<std::string, validation::KindSummary>* families_or_null() const { return given ? &families : nullptr; }
  bool given;
  std::map<std::string, validation::KindSummary> kinds, families, sources;
};
/// `summary`: per kind, and under "by_family" per family and kind, the counts and |error|
/// statistics; with `cv` (leave-one-source-out predictions of the same rows) also
/// cv_median_abs_error_pct and cv_p90_abs_error_pct, and "by_source": per source (one fold's
/// held-out rows) and kind, the in-sample and CV statistics.
/// InBand of `results` under `trust` (the bands add_row_trust writes).
InBand rows_in_band(const std::vector<validation::RowResult>& results, const validation::TrustData& trust,
                    const hw::Catalog& catalog, const std::string& models_dir);
/// With `in_band`, every group also carries band_rows and band_coverage_pct; "by_source" (per
/// source, with the CV figures when given) and "by_framework_metric" are always there.
Json summary_json(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                  const std::vector<validation::RowResult>* cv = nullptr, const InBand* in_band = nullptr,
                  const InBand* cv_in_band = nullptr);
/// The summary table (per kind, then per kind/family; CV columns with `cv`, then a table per
/// held-out source).
std::string summary_text(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                         const std::vector<validation::RowResult>* cv = nullptr, const InBand* in_band = nullptr,
                         const InBand* cv_in_band = nullptr);
/// The whole `validate --json` document; `file` is echoed under inputs, and `row_ids` (the
/// globs of `validate --rows`) when the rows were selected. With `explain` each row also carries
/// "explain": {name: value} of what the twin simulated (validation::ExplainItem).
Json validation_document(const Provenance& provenance, const std::string& file,
                         const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                         const std::vector<validation::RowResult>* cv = nullptr, bool explain = false,
                         const std::string& row_ids = "", const InBand* in_band = nullptr,
                         const InBand* cv_in_band = nullptr);
/// The table, the summaries (per kind and per kind/family) and the rows not predicted; with
/// `explain` a line under each row with what the twin simulated.
std::string validation_text(const std::vector<validation::RowResult>& results, const hw::Catalog& catalog,
                            const std::vector<validation::RowResult>* cv = nullptr, bool explain = false,
                            const InBand* in_band = nullptr, const InBand* cv_in_band = nullptr);

/// `validate` without --cv or --html, one batch of rows at a time: each row is written as it
/// arrives and only its error is kept, for the summary at the end (docs/validation.md,
/// "Streaming"). The JSON is byte-identical to validation_document with add_row_trust, the text
/// to validation_text.
class ValidationStream {
 public:
  ValidationStream(std::ostream& out, bool json, const Provenance& provenance, const std::string& file,
                   const hw::Catalog& catalog, const validation::TrustData& trust, std::string models_dir,
                   bool explain = false, const std::string& row_ids = "");
  void add(const std::vector<validation::RowResult>& batch);
  /// The summaries (and, in text, the rows not predicted); the document is complete after it.
  void finish();

  /// The JSON document with placeholders for the rows and the summary, split around them.
  struct Frame {
    std::string head;  ///< up to and including `"rows": `
    std::string tail;  ///< after the rows' closing bracket, with the summary placeholder
  };

 private:
  std::ostream& out_;
  bool json_;
  bool explain_;  ///< each row's explanation (validate --explain)
  Provenance provenance_;
  std::string file_;
  const hw::Catalog& catalog_;
  const validation::TrustData& trust_;
  std::string models_dir_;
  validation::SummaryBuilder summary_;
  long long rows_ = 0;
  Frame frame_;                                       ///< JSON: built once
  std::vector<validation::RowResult> not_predicted_;  ///< text: the first 1,000, listed after the summary
  long long more_not_predicted_ = 0;                  ///< text: counted beyond them
};

}  // namespace xpusim::report
