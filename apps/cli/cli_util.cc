#include "cli_util.h"

#include <cstdlib>
#include <cstdint>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <utility>

#include "xpusim/api/api.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/file_write.h"
#include "xpusim/validation/fit.h"

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

/// What a flag of CLI11's type name takes, for a message: {what it is, its written form}.
std::pair<std::string, std::string> expected_form(const std::string& type_name) {
  if (type_name == "INT" || type_name == "UINT")
    return {"an integer", "a whole number in digits within the flag's range, e.g. 8"};
  if (type_name == "FLOAT") return {"a number", "a finite number, e.g. 2.5"};
  return {"a name, a path or a value", "a value the flag's help names"};
}

/// CLI11's parse errors, made to name the flag, the value and what was expected
/// (docs/errors.md): "Could not convert: --tp = abc" becomes "--tp: not an integer (got 'abc';
/// expected a whole number ...)"; a flag given twice says so. Others pass unchanged.
std::string clear_parse_message(const CLI::App& app, const CLI::ParseError& e) {
  const std::string what = e.what();
  const std::string convert = "Could not convert: ";
  if (what.rfind(convert, 0) == 0) {
    const auto eq = what.find(" = ", convert.size());
    if (eq != std::string::npos) {
      const std::string name = what.substr(convert.size(), eq - convert.size());
      const std::string value = what.substr(eq + 3);
      const CLI::Option* opt = nullptr;
      try {
        opt = app.get_option(name);
      } catch (const CLI::Error&) {
      }
      const auto [noun, form] = expected_form(opt ? opt->get_type_name() : "");
      return name + ": not " + noun + " (got '" + core::shown_value(value) + "'; expected " + form + ")";
    }
  }
  const std::string twice = "At Most 1 required but received ";
  const auto at = what.find(twice);
  if (at != std::string::npos)
    return what.substr(0, at) + "given " + what.substr(at + twice.size()) + " times (expected once)";
  return core::shown_value(core::shown_message(what), 8 * core::kShownValueChars);
}

/// Every flag that takes a value refuses an empty one (CLI11 leaves the default in place without
/// a word), naming what its type takes; integer flags refuse a value beyond 64 bits (CLI11 reads
/// "99999999999999999999" as 2^63 - 1).
void check_value_forms(CLI::App& app) {
  using Limits = std::numeric_limits<std::int64_t>;
  const CLI::Validator in_range(
      [](const std::string& v) {
        std::int64_t out = 0;
        const char* end = v.data() + v.size();
        const auto [ptr, ec] = std::from_chars(v.data() + (!v.empty() && v.front() == '+' ? 1 : 0), end, out);
        if (ec == std::errc::result_out_of_range)
          return "out of range (got '" + core::shown_value(v) + "'; expected an integer from " +
                 std::to_string(Limits::min()) + " to " + std::to_string(Limits::max()) + ")";
        return std::string();
      },
      "", "64-bit");
  for (CLI::Option* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    if (type.empty()) continue;  // a switch
    const std::string empty = "an empty value (expected " + expected_form(type).first + "; leave the flag out for the default)";
    opt->check(CLI::Validator([empty](const std::string& v) { return v.empty() ? empty : std::string(); }, "", "not empty"));
    if (type == "INT" || type == "UINT") opt->check(in_range);
  }
}

}  // namespace

std::string data_dir() { return api::default_data_dir(); }

int parse(CLI::App& app, const Args& args) {
  std::vector<std::string> rev(args.rbegin(), args.rend());
  check_value_forms(app);
  try {
    app.parse(rev);
  } catch (const CLI::CallForHelp& e) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << app.get_name() << ": " << clear_parse_message(app, e) << "\n"
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

void add_cv_sweeps_option(CLI::App& app, std::optional<int>& sweeps) {
  app.add_option("--cv-sweeps", sweeps,
                 "coordinate-descent sweeps of each cross-validation fold's fit, at most, 1 to " +
                     std::to_string(validation::FitOptions{}.sweeps) + " (default " +
                     std::to_string(validation::FitOptions{}.fold_sweeps) +
                     "); 3 ran about 2.7x longer on both files with the same out-of-fold medians within "
                     "half a point (docs/performance.md)");
}

int cv_sweeps(const std::optional<int>& sweeps, bool folds, const std::string& needs) {
  const int most = validation::FitOptions{}.sweeps;
  if (!sweeps) return validation::FitOptions{}.fold_sweeps;
  if (*sweeps < 1 || *sweeps > most)
    throw core::InputError(core::Diagnostic{"", 0, "--cv-sweeps", "out of range", std::to_string(*sweeps),
                                            "1 to " + std::to_string(most), ""});
  if (!folds) throw core::InputError(core::Diagnostic{"", 0, "--cv-sweeps", "needs " + needs, std::to_string(*sweeps), needs, ""});
  return *sweeps;
}

}  // namespace xpusim::cli
