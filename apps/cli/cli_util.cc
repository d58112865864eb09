#include "cli_util.h"

#include <filesystem>
#include <fstream>

namespace xpusim::cli {

void add_calibration_option(CLI::App& app, std::string& file) {
  app.add_option("--calibration", file,
                 "YAML file overriding any subset of the fitted/assumed parameters (xpusim calibration show)");
}

calib::Params load_calibration(const std::string& override_file) {
  calib::Params params = calib::load_shipped(data_dir());
  if (!override_file.empty()) calib::apply_override(params, override_file);
  return params;
}

validation::TrustData load_trust_data() {
  const std::string file = validation::default_trust_file(data_dir());
  if (std::filesystem::exists(file)) return validation::load_trust(file);
  validation::TrustData none;
  none.basis = "no uncertainty data: " + file + " is missing (xpusim validate --cv --write-bands)";
  return none;
}

report::Provenance provenance(bool uses_catalog, bool uses_calibration, const std::string& calibration_file) {
  return report::provenance(uses_catalog ? data_dir() + "/catalog" : "",
                            uses_calibration ? data_dir() + "/calibration" : "",
                            uses_calibration ? calibration_file : "");
}

void add_html_option(CLI::App& app, std::string& file) {
  app.add_option("--html", file, "write a self-contained HTML report with charts to FILE (docs/html.md)");
}

void write_html(const std::string& path, const std::string& page) {
  std::ofstream out(path, std::ios::binary);
  if (!out || !(out << page)) core::fail("--html", "cannot write file", path, "a writable path");
}

}  // namespace xpusim::cli
