// xpusim calibrate MEASUREMENTS.csv [--params GLOB|@FILE] [--out FILE] [--json] [--folds loso|model|none]:
// fits the `fitted` parameters of data/calibration/ to measured rows (validation CSV schema) and
// reports the fit and its leave-one-source-out cross-validated error (docs/calibration.md).
// Parses flags, calls validation/ (fit) and report/ (render); timings go to stderr.

#include <nlohmann/json.hpp>
#include <chrono>
#include <optional>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "cli_util.h"
#include "xpusim/config/document.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/format.h"
#include "xpusim/core/suggest.h"
#include "xpusim/report/calibrate_report.h"

namespace xpusim::cli {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// `--params @FILE`: the globs of FILE, one or more per line (comma-separated), '#' to the end
/// of a line a comment, joined with commas; any other value is the glob list itself.
std::string params_globs(const std::string& value) {
  if (value.empty() || value[0] != '@') return value;
  const std::string path = value.substr(1);
  std::istringstream text(config::read_text_file(path, "parameter list (--params @FILE)"));
  std::string globs;
  for (std::string line; std::getline(text, line);) {
    line = line.substr(0, line.find('#'));
    std::stringstream items(line);
    for (std::string item; std::getline(items, item, ',');)
      if (item = core::trim(item); !item.empty()) globs += (globs.empty() ? "" : ",") + item;
  }
  if (globs.empty())
    throw core::InputError(core::Diagnostic{path, 0, "--params", "the parameter list names no glob", value,
                                            "one or more globs over the fitted keys, one per line", ""});
  return globs;
}


}  // namespace

int run_calibrate(const Args& args) {
  CLI::App app{"Fit the fitted parameters (data/calibration) to measurements, with leave-one-source-out CV",
               "xpusim calibrate"};
  std::vector<std::string> files;
  std::string glob, out_file, folds = "loso", calibration_file;
  bool json = false;
  app.add_option("MEASUREMENTS", files,
                 "measurements CSVs (schema: data/validation/README.md); several files are one set (their rows "
                 "together, each row's source its own)")
      ->required();
  app.add_option("--params", glob, "fitted keys to fit, globs over dotted keys, comma-separated (e.g. 'compute.*,training.*'), "
                                   "or @FILE with one glob per line; default: every fitted parameter some row is sensitive to");
  app.add_option("--out", out_file, "write the fitted values as a file --calibration accepts");
  app.add_option("--folds", folds,
                 "cross-validation: loso (leave one source out), model (one source out, except that a source of 200 "
                 "or more rows over several models holds out one model at a time; a fold re-fits the keys of which "
                 "its rows are 5% or more) or none")
      ->check(CLI::IsMember({"loso", "model", "none"}));
  app.add_flag("--json", json, "print one JSON document");
  std::optional<int> sweeps;
  add_cv_sweeps_option(app, sweeps);
  bool progress = false;
  app.add_flag("--progress", progress, "print a line per line search to stderr (key, rows, elapsed seconds)");
  add_calibration_option(app, calibration_file);
  add_catalog_option(app);
  if (int rc = parse(app, args); rc >= 0) return rc;
  glob = params_globs(glob);
  const int fold_sweeps = cv_sweeps(sweeps, folds != "none", "--folds loso or model");

  std::vector<validation::Row> rows;
  for (const auto& f : files) {
    auto more = validation::read_csv(f);
    rows.insert(rows.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  const std::string file = core::join(files, " + ");
  const hw::Catalog cat = load_catalog();
  const calib::Params params = load_calibration(calibration_file);
  const validation::Context ctx{&cat, data_dir() + "/models", &params};
  const auto candidates = validation::fitted_keys(params, glob);
  if (candidates.empty())
    throw core::InputError(core::Diagnostic{"", 0, "--params", "matches no fitted parameter", glob,
                                            "a glob over the fitted keys of 'xpusim calibration show'", ""});
  auto t0 = std::chrono::steady_clock::now();
  const auto sensitivity = validation::find_sensitive_rows(rows, ctx, candidates);
  const double t_sensitivity = seconds_since(t0);

  validation::FitOptions opt;
  opt.fold_sweeps = fold_sweeps;
  if (folds == "model") {
    opt.folds = validation::Folds::ByModelWithinLargeSource;
    opt.refit_min_share = 0.05;
  }
  // The glob's keys, or (no glob) every fitted key some row moves.
  opt.keys = glob.empty() ? validation::keys_with_rows(sensitivity) : candidates;
  const auto started = std::chrono::steady_clock::now();
  if (progress) {
    opt.progress = [started](const std::string& key, int n) {
      std::cerr << core::strformat("calibrate: %8.1f s  %s (%d rows)\n", seconds_since(started), key.c_str(), n);
    };
    opt.fold_progress = [started](const std::string& fold, int done, int count, int refitted) {
      std::cerr << core::strformat("calibrate: %8.1f s  fold %d/%d %s (%d keys re-fitted)\n", seconds_since(started),
                                   done, count, fold.c_str(), refitted);
    };
  }
  report::CalibrateRun run{file, glob, folds, {}, {}, {}, {}, {}};
  t0 = std::chrono::steady_clock::now();
  run.fit = validation::fit(rows, {}, ctx, sensitivity, opt);
  const double t_fit = seconds_since(t0);
  const validation::Context fitted_ctx{&cat, data_dir() + "/models", &run.fit.params};
  run.in_sample = validation::run_all(rows, fitted_ctx);
  t0 = std::chrono::steady_clock::now();
  if (folds != "none") run.cv = validation::cross_validate(rows, fitted_ctx, sensitivity, opt, &run.folds, &run.fold_fits);
  if (run.folds.empty()) run.cv.clear();  // one source: no fold ran, so there are no CV figures
  const double t_cv = seconds_since(t0);
  std::cerr << core::strformat(
      "calibrate: %zu rows, %zu parameters; sensitivity %.1f s, fit %.1f s (%lld row predictions), %zu folds %.1f s "
      "(%lld row predictions in their fits)\n",
      rows.size(), opt.keys.size(), t_sensitivity, t_fit, run.fit.predictions, run.folds.size(), t_cv,
      validation::fold_predictions(run.fold_fits));

  if (!out_file.empty()) {
    const std::string command = "xpusim calibrate" + (glob.empty() ? "" : " --params '" + glob + "'");
    write_text_file("--out", out_file, validation::override_yaml(run.fit, "fitted by " + command + " on " +
                                                                std::to_string(run.fit.rows_used) + " rows of " + file));
  }
  if (json) std::cout << report::calibrate_document(provenance(true, true, calibration_file), run, cat).dump(2) << "\n";
  else std::cout << report::calibrate_text(run, cat);
  return 0;
}

}  // namespace xpusim::cli
