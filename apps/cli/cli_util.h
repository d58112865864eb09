#pragma once
// Helpers shared by the sub-commands: CLI11 parsing with our exit codes, the catalog (shipped plus
// --catalog-dir) and the calibration (data/calibration/ plus an optional --calibration file).

#include <CLI/CLI.hpp>
#include <optional>

#include "commands.h"
#include "xpusim/calib/params.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/report/json_convention.h"
#include "xpusim/validation/trust.h"

namespace xpusim::cli {

/// Parses `args` with `app`. Returns -1 when parsing succeeded and the command should run,
/// otherwise the exit code (0 for --help, 2 for a usage error, message on stderr).
int parse(CLI::App& app, const Args& args);

/// Adds `--catalog-dir DIR` (repeatable) to a command: a user's chips/ and systems/ files layered
/// over the shipped catalog for this run (docs/catalog.md, "Your own systems").
void add_catalog_option(CLI::App& app);
/// The shipped catalog with this run's --catalog-dir directories over it; provenance() then
/// names the user's entries and digests every directory.
hw::Catalog load_catalog();
/// This run's --catalog-dir directories, in order (for an api::Session).
const std::vector<std::string>& user_catalog_dirs();

/// Adds `--calibration FILE` to a command.
void add_calibration_option(CLI::App& app, std::string& file);
/// The shipped calibration with `override_file`'s values applied (none when empty).
calib::Params load_calibration(const std::string& override_file);

/// The shipped uncertainty bands and coverage (data/validation/uncertainty.json); without the
/// file, no bands and every input extrapolating, said in the basis.
validation::TrustData load_trust_data();

/// What a command's JSON names as its data: the catalog (when `uses_catalog`) and the
/// calibration (when `uses_calibration`: data/calibration plus `calibration_file` if given).
report::Provenance provenance(bool uses_catalog, bool uses_calibration, const std::string& calibration_file = "");

/// Adds `--cv-sweeps N` (the coordinate-descent sweeps of each cross-validation fold's fit) to a
/// command that cross-validates.
void add_cv_sweeps_option(CLI::App& app, std::optional<int>& sweeps);
/// The sweeps a fold's fit runs: the flag's, checked (1 to the fit's sweeps), else the folds'
/// default (FitOptions::fold_sweeps);
/// InputError naming --cv-sweeps when it is out of range or given where no fold runs (`folds`
/// false, `needs` the flag that would run them).
int cv_sweeps(const std::optional<int>& sweeps, bool folds, const std::string& needs);

/// Adds `--html FILE` (a self-contained HTML report with charts, docs/html.md) to a command.
void add_html_option(CLI::App& app, std::string& file);
/// Writes an HTML page to `path`; InputError naming --html when it cannot.
void write_html(const std::string& path, const std::string& page);
/// Writes `text` to `path` as is; InputError naming `flag` when it cannot.
void write_text_file(const std::string& flag, const std::string& path, const std::string& text);

}  // namespace xpusim::cli
