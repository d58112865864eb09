#include "cli_util.h"

#include "xpusim/api/api.h"

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
  return api::load_trust_data(data_dir());
}

report::Provenance provenance(bool uses_catalog, bool uses_calibration, const std::string& calibration_file) {
  return report::provenance(uses_catalog ? data_dir() + "/catalog" : "",
                            uses_calibration ? data_dir() + "/calibration" : "",
                            uses_calibration ? calibration_file : "");
}

}  // namespace xpusim::cli
