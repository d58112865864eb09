#pragma once
// The one JSON convention of every command (docs/json.md): a `schema_version`, the command, the
// inputs echoed under `inputs`, units as key suffixes, counts as integers.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "xpusim/hw/catalog.h"

#include "xpusim/scenario/serve_inputs.h"
#include "xpusim/scenario/train_inputs.h"

namespace xpusim::report {

using Json = nlohmann::ordered_json;

/// Bumped when a key is renamed or removed (adding keys does not bump it).
inline constexpr int kSchemaVersion = 1;

/// Where a document comes from: the build and the data it was computed from (docs/json.md).
struct Provenance {
  std::string catalog_digest;      ///< core::files_digest of the catalog; empty: none read (null)
  std::string calibration_digest;  ///< of data/calibration plus --calibration; empty: none (null)
  std::vector<hw::UserEntry> catalog_user;  ///< entries from --catalog-dir
};

/// `git describe` of the source tree at configure time, else the project version.
std::string xpusim_version();

/// The digests of a catalog directory and of the calibration files in use (the shipped
/// directory, then the override file when there is one); an empty path is "not in use".
Provenance provenance(const std::string& catalog_dir, const std::string& calibration_dir,
                      const std::string& calibration_override = "");

/// The catalog part of `p` for a shipped catalog with user directories layered over it: the
/// digest of all of them, and the user's entries (what the output marks as the user's).
void set_user_catalog(Provenance& p, const std::string& shipped_dir, const std::vector<std::string>& user_dirs,
                      const std::vector<hw::UserEntry>& entries);

/// {"schema_version", "command", "xpusim_version", "catalog_digest", "calibration_digest",
///  ["catalog_user" when a --catalog-dir is in use], "inputs", then the keys of `body` in order}.
Json document(const std::string& command, const Provenance& provenance, Json inputs, const Json& body);

/// The inputs as given, unset ones left out; durations in seconds (`timeout_s`, ...).
Json inputs_json(const scenario::TrainInputs& in);
Json inputs_json(const scenario::ServeInputs& in);
/// `overrides: {price_usd_per_chip_hour, tdp_w}` in an inputs echo when any is given.
void put_overrides(Json& inputs, const scenario::EstimateOverrides& o);

/// A count held in a double (e.g. tokens per step) printed as an integer.
long long as_count(double v);

}  // namespace xpusim::report
