// xpusim calibration show [--json] [--calibration FILE]: every fitted or assumed parameter of the
// models (data/calibration/*.yaml) with its value, unit, meaning, basis, kind and range.

#include <nlohmann/json.hpp>
#include <iostream>

#include "cli_util.h"
#include "xpusim/report/calibration_report.h"

namespace xpusim::cli {

int run_calibration(const Args& args) {
  CLI::App app{"The fitted and assumed parameters of the models (data/calibration/*.yaml)", "xpusim calibration"};
  app.require_subcommand(1);
  CLI::App* show = app.add_subcommand("show", "list every parameter: value, unit, meaning, basis, kind, range");
  bool json = false;
  std::string calibration_file;
  show->add_flag("--json", json, "print one JSON document");
  add_calibration_option(*show, calibration_file);
  if (int rc = parse(app, args); rc >= 0) return rc;

  const calib::Params params = load_calibration(calibration_file);
  if (json)
    std::cout << report::calibration_document(provenance(false, true, calibration_file), params, calibration_file).dump(2)
              << "\n";
  else
    std::cout << report::calibration_text(params);
  return 0;
}

}  // namespace xpusim::cli
