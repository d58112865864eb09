// xpusim calibration show [--json] [--calibration FILE]: every fitted or assumed parameter of the
// models (data/calibration/*.yaml) with its value, unit, meaning, basis, kind and range.

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "xpusim/core/diagnostics.h"

namespace xpusim::cli {

namespace {

nlohmann::ordered_json parameter_json(const calib::Parameter& p) {
  nlohmann::ordered_json j = {{"key", p.key},
                              {"value", p.value.text},
                              {"unit", calib::unit_kind(p.value)},
                              {"meaning", p.meaning},
                              {"basis", p.basis},
                              {"kind", calib::kind_name(p.kind)}};
  j["range"] = p.range_low && p.range_high ? nlohmann::ordered_json::array({p.range_low->text, p.range_high->text})
                                           : nlohmann::ordered_json(nullptr);
  j["source"] = p.source;
  return j;
}

void print_text(const calib::Params& params) {
  for (const auto& [key, p] : params.all()) {
    std::cout << key << " = " << p.value.text << "  (" << calib::kind_name(p.kind) << ", "
              << calib::unit_kind(p.value);
    if (p.range_low && p.range_high) std::cout << ", range [" << p.range_low->text << ", " << p.range_high->text << "]";
    std::cout << ")\n    meaning: " << p.meaning << "\n    basis:   " << p.basis << "\n";
  }
  std::cout << "\n" << params.all().size()
            << " parameters from data/calibration/; override any subset with --calibration FILE\n";
}

}  // namespace

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
  if (!json) {
    print_text(params);
    return 0;
  }
  nlohmann::ordered_json j;
  j["parameters"] = nlohmann::ordered_json::array();
  for (const auto& [key, p] : params.all()) j["parameters"].push_back(parameter_json(p));
  std::cout << j.dump(2) << "\n";
  return 0;
}

}  // namespace xpusim::cli
