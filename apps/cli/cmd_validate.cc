// xpusim validate FILE.csv [--json]: predicted vs measured for every row of a validation file.
// Parses flags and calls the library (validation/ predicts, report/ renders).

#include <iostream>

#include "cli_util.h"
#include "xpusim/report/validation_report.h"

namespace xpusim::cli {

int run_validate(const Args& args) {
  CLI::App app{"Predict every row of a validation CSV (schema: shared/validation/README.md) and report errors",
               "xpusim validate"};
  std::string file;
  bool json = false;
  app.add_option("FILE", file, "validation CSV (default: the project's copy of the public set, data/validation/public.csv)");
  app.add_flag("--json", json, "print one JSON document");
  std::string calibration_file;
  add_calibration_option(app, calibration_file);
  if (int rc = parse(app, args); rc >= 0) return rc;

  if (file.empty()) file = validation::default_public_file(data_dir());
  const auto rows = validation::read_csv(file);
  const hw::Catalog cat = hw::Catalog::load(data_dir() + "/catalog");
  const calib::Params params = load_calibration(calibration_file);
  const validation::Context ctx{&cat, data_dir() + "/models", &params};
  const auto results = validation::run_all(rows, ctx);
  if (json) std::cout << report::validation_document(provenance(true, true, calibration_file), file, results).dump(2) << "\n";
  else std::cout << report::validation_text(results, cat);
  return 0;
}

}  // namespace xpusim::cli
