#include "cli_util.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "xpusim/api/api.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/file_write.h"

namespace xpusim::cli {

namespace {

/// The catalog choice of this process (one command per process): the --catalog-dir values
/// given, and the user entries of the catalog loaded from them.
struct CatalogChoice {
  std::vector<std::string> user_dirs;
  std::vector<hw::UserEntry> user_entries;
};

CatalogChoice& catalog_choice() {
  static CatalogChoice choice;
  return choice;
}

}  // namespace

std::string data_dir() { return api::default_data_dir(); }

int parse(CLI::App& app, const Args& args) {
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
  } catch (const CLI::CallForHelp& e) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << app.get_name() << ": " << core::shown_value(core::shown_message(e.what()), 8 * core::kShownValueChars) << "\n"
              << "run '" << app.get_name() << " --help' for usage\n";
    return 2;
  }
  return -1;
}

void add_catalog_option(CLI::App& app) {
  app.add_option("--catalog-dir", catalog_choice().user_dirs,
                 "directory of your own chips/*.json and systems/*.json over the shipped catalog "
                 "(same schema; an existing id is replaced); repeatable");
}

hw::Catalog load_catalog() {
  CatalogChoice& choice = catalog_choice();
  hw::Catalog cat = hw::Catalog::load(data_dir() + "/catalog", choice.user_dirs);
  choice.user_entries = cat.user_entries();
  for (const auto& e : choice.user_entries) {  // stderr: the mark stays out of JSON/CSV on stdout
    std::cerr << "note: catalog " << e.kind << " '" << e.id << "' from " << e.file
              << (e.replaces_shipped ? " (yours, replaces the shipped entry)\n" : " (yours)\n");
  }
  return cat;
}

const std::vector<std::string>& user_catalog_dirs() { return catalog_choice().user_dirs; }

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
  report::Provenance p = report::provenance(uses_catalog ? data_dir() + "/catalog" : "",
                                            uses_calibration ? data_dir() + "/calibration" : "",
                                            uses_calibration ? calibration_file : "");
  const CatalogChoice& choice = catalog_choice();
  if (uses_catalog) report::set_user_catalog(p, data_dir() + "/catalog", choice.user_dirs, choice.user_entries);
  return p;
}

void add_html_option(CLI::App& app, std::string& file) {
  app.add_option("--html", file, "write a self-contained HTML report with charts to FILE (docs/html.md)");
}

void write_html(const std::string& path, const std::string& page) { write_text_file("--html", path, page); }

void write_text_file(const std::string& flag, const std::string& path, const std::string& text) {
  core::write_output_file(flag, path, text);
}

}  // namespace xpusim::cli
