// xpusim validate FILE.csv [--json]: predicted vs measured for every row of a validation file.
// Parses flags and calls the library (validation/ predicts, report/ renders).

#include <chrono>
#include <fstream>
#include <iostream>

#include "cli_util.h"
#include "xpusim/report/html_report.h"
#include "xpusim/report/validation_report.h"
#include "xpusim/validation/fit.h"
#include "xpusim/report/trust_report.h"
#include "xpusim/validation/trust.h"
#include "xpusim/core/diagnostics.h"

namespace xpusim::cli {

namespace {
// Rows predicted (in parallel) and written per batch when validate streams.
constexpr std::size_t kStreamBatch = 256;
}  // namespace

int run_validate(const Args& args) {
  CLI::App app{"Predict every row of a validation CSV (schema: shared/validation/README.md) and report errors",
               "xpusim validate"};
  std::string file;
  bool json = false;
  app.add_option("FILE", file,
                 "validation CSV (default: the project's copy of the public set, data/validation/public.csv); a row's "
                 "model is read from FILE's ../models/<model>.json when there, else from the project's models");
  app.add_flag("--json", json, "print one JSON document");
  bool cv = false;
  app.add_flag("--cv", cv, "add leave-one-source-out figures (a fit of the default parameter set per fold)");
  bool explain = false;
  app.add_flag("--explain", explain,
               "under each row, what the twin simulated: the plan that ran and where the time went (JSON: rows[].explain)");
  std::string bands_file;
  app.add_option("--write-bands", bands_file,
                 "with --cv: write the uncertainty bands and coverage (data/validation/uncertainty.json) to FILE");
  std::string calibration_file;
  add_calibration_option(app, calibration_file);
  add_catalog_option(app);
  std::string html;
  add_html_option(app, html);
  if (int rc = parse(app, args); rc >= 0) return rc;

  if (file.empty()) file = validation::default_public_file(data_dir());
  if (!bands_file.empty() && !cv)
    throw core::InputError(core::Diagnostic{"", 0, "--write-bands", "needs --cv", bands_file, "--cv", ""});
  const hw::Catalog cat = load_catalog();
  const calib::Params params = load_calibration(calibration_file);
  const validation::Context ctx{&cat, data_dir() + "/models", &params};
  // Without --cv or --html every row is predicted and written out as it is read (memory flat in
  // the rows); cross-validation and the charts hold them all.
  if (!cv && html.empty()) {
    const validation::TrustData trust = load_trust_data();
    report::ValidationStream out(std::cout, json, provenance(true, true, calibration_file), file, cat, trust,
                                 data_dir() + "/models", explain);
    validation::stream_rows(file, ctx, kStreamBatch, [&](const auto& batch) { out.add(batch); });
    out.finish();
    return 0;
  }
  const auto rows = validation::read_csv(file);
  const auto results = validation::run_all(rows, ctx);
  std::vector<validation::RowResult> cv_results;
  if (cv) {
    const auto sensitivity = validation::find_sensitive_rows(rows, ctx, validation::fitted_keys(params, ""));
    validation::FitOptions opt;
    opt.keys = validation::keys_with_rows(sensitivity);
    const auto started = std::chrono::steady_clock::now();
    std::vector<std::string> folds;
    cv_results = validation::cross_validate(rows, ctx, sensitivity, opt, &folds);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    std::cerr << "xpusim validate: " << folds.size() << " leave-one-source-out folds of " << opt.keys.size()
              << " parameters in " << took.count() << " s\n";
  }
  if (!bands_file.empty()) {
    const auto data = validation::trust_from(
        cv_results, ctx, "leave-one-source-out residuals of " + std::to_string(rows.size()) + " rows (xpusim validate --cv)");
    std::ofstream(bands_file, std::ios::binary) << validation::trust_json_text(data);
  }
  const auto* cv_ptr = cv ? &cv_results : nullptr;
  if (!html.empty()) {
    const auto bands = report::row_bands(results, load_trust_data(), cat, data_dir() + "/models");
    write_html(html, report::validation_html(provenance(true, true, calibration_file), file, results, bands, cat, cv_ptr));
  }
  if (json) {
    report::Json doc =
        report::validation_document(provenance(true, true, calibration_file), file, results, cat, cv_ptr, explain);
    report::add_row_trust(doc, results, load_trust_data(), cat, data_dir() + "/models");
    std::cout << doc.dump(2) << "\n";
  }
  else std::cout << report::validation_text(results, cat, cv_ptr, explain);
  return 0;
}

}  // namespace xpusim::cli
