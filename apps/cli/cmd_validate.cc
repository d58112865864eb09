// xpusim validate FILE.csv [--json]: predicted vs measured for every row of a validation file.
// Parses flags and calls the library (validation/ predicts, report/ renders).

#include <nlohmann/json.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>

#include "cli_util.h"
#include "xpusim/core/format.h"
#include "xpusim/report/html_report.h"
#include "xpusim/report/validation_report.h"
#include "xpusim/validation/fit.h"
#include "xpusim/report/trust_report.h"
#include "xpusim/validation/trust.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/suggest.h"

namespace xpusim::cli {

namespace {
// Rows predicted (in parallel) and written per batch when validate streams. A batch keeps the
// serve runs its rows share until it is written, and its threads idle while its last rows run:
// with runs of quiet steps interpolated, both files take 2.3 s at 256 and 2.5 s at 64 (142 and
// 121 MB; docs/performance.md, "Runs of quiet steps from a line").
constexpr std::size_t kStreamBatch = 256;

struct ValidateOptions {
  std::vector<std::string> files;
  std::string file;  ///< the files as the report names them ("a.csv, b.csv")
  std::string bands_file, calibration_file, html, rows, cv_folds = "source";
  bool json = false, cv = false, explain = false, progress = false;
  std::optional<int> cv_sweeps;  ///< a fold fit's coordinate-descent sweeps (unset: FitOptions::fold_sweeps)
  validation::RowSelection selection;  ///< from `rows`
};

void add_validate_flags(CLI::App& app, ValidateOptions& o) {
  app.add_option("FILE", o.files,
                 "validation CSVs, predicted as one set (default: the project's copy of the public set, "
                 "data/validation/public.csv); a row's model is read from its file's ../models/<model>.json when there, "
                 "else from the project's models");
  app.add_flag("--json", o.json, "print one JSON document");
  app.add_flag("--cv", o.cv,
               "add leave-one-source-out figures (a fit of the default parameter set per fold, on the first FILE's "
               "rows; further files are held out whole)");
  app.add_option("--cv-folds", o.cv_folds,
                 "with --cv: 'source' (default) holds out one source at a time, fitting on the first FILE's rows; "
                 "'model' fits on every FILE's rows and holds out one source at a time, except that a source of 200 "
                 "or more rows over several models holds out one model at a time (a fold re-fits the keys of which "
                 "its rows are 5% or more)")
      ->check(CLI::IsMember({"source", "model"}));
  add_cv_sweeps_option(app, o.cv_sweeps);
  app.add_flag("--progress", o.progress, "with --cv: a line per fold to stderr (fold, keys re-fitted, elapsed seconds)");
  app.add_flag("--explain", o.explain,
               "under each row, what the twin simulated: the plan that ran and where the time went (JSON: rows[].explain)");
  app.add_option("--rows", o.rows,
                 "only the rows whose id matches one of these comma-separated globs ('*' any run, '?' one character), "
                 "e.g. 'in-mlpi51-*'; the summary covers them, and with --cv only their sources' folds run");
  app.add_option("--write-bands", o.bands_file,
                 "with --cv: write the uncertainty bands and coverage (data/validation/uncertainty.json) to FILE");
  add_calibration_option(app, o.calibration_file);
  add_catalog_option(app);
  add_html_option(app, o.html);
}

/// Every row predicted and written out as it is read (memory flat in the rows).
void stream_validation(const ValidateOptions& o, const validation::Context& ctx, const hw::Catalog& cat) {
  const validation::TrustData trust = load_trust_data();
  report::ValidationStream out(std::cout, o.json, provenance(true, true, o.calibration_file), o.file, cat, trust,
                               data_dir() + "/models", o.explain, o.selection.text());
  for (const auto& file : o.files)
    validation::stream_rows(
        file, ctx, kStreamBatch, [&](const auto& batch) { out.add(batch); }, o.selection);
  out.finish();
}

/// Out-of-fold predictions of every row (a fit of the parameters that move its rows per fold);
/// the timing goes to stderr. With --cv-folds source the parameters are fitted on the first
/// file's rows (the first `fitted` rows): the other files' rows never enter a fit, so each of
/// their sources is predicted with the fit on the first file. With --cv-folds model every file's
/// rows are fitted, and a large source of several models holds out one model per fold.
std::vector<validation::RowResult> cross_validate_rows(const std::vector<validation::Row>& rows, std::size_t fitted,
                                                       const validation::Context& ctx, const calib::Params& params,
                                                       const ValidateOptions& o) {
  validation::FitOptions opt;
  opt.fold_sweeps = cv_sweeps(o.cv_sweeps, true, "--cv");
  if (o.cv_folds == "model") {
    fitted = rows.size();
    opt.folds = validation::Folds::ByModelWithinLargeSource;
    opt.refit_min_share = 0.05;
  }
  const std::vector<validation::Row> fit_rows(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(fitted));
  const auto sensitivity = validation::find_sensitive_rows(fit_rows, ctx, validation::fitted_keys(params, ""));
  opt.keys = validation::keys_with_rows(sensitivity);
  const auto started = std::chrono::steady_clock::now();
  if (o.progress)
    opt.fold_progress = [started](const std::string& fold, int done, int folds, int refitted) {
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
      std::cerr << core::strformat("validate: %8.1f s  fold %d/%d %s (%d keys re-fitted)\n", took.count(), done, folds,
                                   fold.c_str(), refitted);
    };
  std::vector<std::string> folds;
  std::vector<validation::FoldFit> fits;
  auto out = validation::cross_validate(rows, ctx, sensitivity, opt, &folds, &fits, o.selection);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
  std::cerr << "xpusim validate: " << folds.size() << " folds (" << o.cv_folds << ") of " << opt.keys.size()
            << " parameters in " << took.count() << " s (" << validation::fold_predictions(fits)
            << " row predictions in their fits)\n";
  return out;
}

/// The held rows' outputs: the bands file, the HTML page and the text or JSON report.
void write_validation(const ValidateOptions& o, const validation::Context& ctx, const hw::Catalog& cat,
                      const std::vector<validation::RowResult>& results,
                      const std::vector<validation::RowResult>* cv_results) {
  std::optional<validation::TrustData> written;
  if (!o.bands_file.empty()) {
    const bool by_model = o.cv_folds == "model";
    written = validation::trust_from(
        *cv_results, ctx,
        std::string(by_model ? "out-of-fold residuals (one source, or one model of a large source, held out) of "
                             : "leave-one-source-out residuals of ") +
            std::to_string(results.size()) + " rows (xpusim validate --cv" + (by_model ? " --cv-folds model" : "") + ")");
    write_text_file("--write-bands", o.bands_file, validation::trust_json_text(*written));
  }
  const auto prov = provenance(true, true, o.calibration_file);
  if (!o.html.empty()) {
    const auto bands = report::row_bands(results, load_trust_data(), cat, data_dir() + "/models");
    write_html(o.html, report::validation_html(prov, o.file, results, bands, cat, cv_results));
  }
  const auto trust = load_trust_data();
  const report::InBand in_band = report::rows_in_band(results, trust, cat, data_dir() + "/models");
  // Out-of-fold coverage: each out-of-fold prediction under the bands just written, else the shipped ones.
  std::optional<report::InBand> cv_in_band;
  if (cv_results) cv_in_band = report::rows_in_band(*cv_results, written ? *written : trust, cat, data_dir() + "/models");
  const report::InBand* cv_band = cv_in_band ? &*cv_in_band : nullptr;
  if (o.json) {
    report::Json doc = report::validation_document(prov, o.file, results, cat, cv_results, o.explain,
                                                   o.selection.text(), &in_band, cv_band);
    report::add_row_trust(doc, results, trust, cat, data_dir() + "/models");
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << report::validation_text(results, cat, cv_results, o.explain, &in_band, cv_band);
  }
}

/// `--rows`: the globs, refused when they name nothing or come with --write-bands (the bands are
/// the residuals of every row); a selection that keeps no row is refused where the rows are read.
void select_rows(ValidateOptions& o) {
  if (o.rows.empty()) return;
  o.selection = validation::RowSelection::parse(o.rows);
  if (o.selection.all()) validation::refuse_selection(o.file, "--rows", o.rows, o.selection);
  if (!o.bands_file.empty())
    throw core::InputError(core::Diagnostic{"", 0, "--rows", "cannot be used with --write-bands (the bands are the "
                                            "cross-validated residuals of every row)", o.rows, "--rows or --write-bands", ""});
}

/// The results of the rows `keep` keeps (`results[i]` belongs to `rows[i]`), in file order.
std::vector<validation::RowResult> kept(std::vector<validation::RowResult> results,
                                        const std::vector<validation::Row>& rows, const validation::RowSelection& keep) {
  std::vector<validation::RowResult> out;
  for (size_t i = 0; i < results.size() && i < rows.size(); ++i)
    if (keep.keeps(rows[i])) out.push_back(std::move(results[i]));
  return out;
}

}  // namespace

int run_validate(const Args& args) {
  CLI::App app{"Predict every row of a validation CSV (schema: shared/validation/README.md) and report errors",
               "xpusim validate"};
  ValidateOptions o;
  add_validate_flags(app, o);
  if (int rc = parse(app, args); rc >= 0) return rc;

  if (o.files.empty()) o.files.push_back(validation::default_public_file(data_dir()));
  o.file = core::join(o.files, ", ");
  if (!o.bands_file.empty() && !o.cv)
    throw core::InputError(core::Diagnostic{"", 0, "--write-bands", "needs --cv", o.bands_file, "--cv", ""});
  if (o.progress && !o.cv)
    throw core::InputError(core::Diagnostic{"", 0, "--progress", "needs --cv", "", "--cv", ""});
  cv_sweeps(o.cv_sweeps, o.cv, "--cv");
  if (o.cv_folds != "source" && !o.cv)
    throw core::InputError(core::Diagnostic{"", 0, "--cv-folds", "needs --cv", o.cv_folds, "--cv", ""});
  select_rows(o);
  const hw::Catalog cat = load_catalog();
  const calib::Params params = load_calibration(o.calibration_file);
  const validation::Context ctx{&cat, data_dir() + "/models", &params};
  // Cross-validation and the charts hold every row; otherwise the rows stream.
  if (!o.cv && o.html.empty()) {
    // Checked before the stream starts, which prints as it predicts.
    long long selected = 0;
    for (const auto& file : o.files) validation::check_has_rows(file);
    for (const auto& file : o.files) selected += o.selection.all() ? 1 : validation::check_csv_stream(file, o.selection);
    if (selected == 0) validation::refuse_selection(o.file, "--rows", o.rows, o.selection);
    stream_validation(o, ctx, cat);
    return 0;
  }
  std::vector<validation::Row> rows;
  std::size_t fitted = 0;  // the first file's rows: the set the parameters are fitted on
  for (const auto& file : o.files) {
    auto more = validation::read_csv(file);
    rows.insert(rows.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    if (fitted == 0) fitted = rows.size();
  }
  const auto selected = validation::kept_rows(rows, o.selection);
  if (selected.empty() && !o.selection.all()) validation::refuse_selection(o.file, "--rows", o.rows, o.selection);
  const auto results = validation::run_all(selected, ctx);
  std::vector<validation::RowResult> cv_results;
  if (o.cv) cv_results = kept(cross_validate_rows(rows, fitted, ctx, params, o), rows, o.selection);
  write_validation(o, ctx, cat, results, o.cv ? &cv_results : nullptr);
  return 0;
}

}  // namespace xpusim::cli
