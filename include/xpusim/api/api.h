#pragma once
// The library's front door: one function per command that turns the command's keys (a JSON
// object in the scenario file's shape, docs/scenarios.md; flat keys such as `tp` are accepted
// too) into the command's JSON document (docs/json.md), the very document `xpusim CMD --json`
// prints. The CLI's --json paths, `xpusim sweep` and the Python module call these, so the three
// cannot drift. Bad input throws core::InputError; an infeasible plan is a document, not an error.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "xpusim/calib/params.h"
#include "xpusim/core/data_dir.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/report/collective_report.h"
#include "xpusim/report/json_convention.h"
#include "xpusim/scenario/serve_inputs.h"
#include "xpusim/scenario/solver.h"
#include "xpusim/scenario/train_inputs.h"
#include "xpusim/serve/scenario.h"
#include "xpusim/validation/trust.h"

namespace xpusim::api {

using Json = nlohmann::ordered_json;

/// The data directory in use (core::find_data_dir: --data-dir, $XPUSIM_DATA_DIR, beside the
/// binary or module, else the source tree's data/ as configured by CMake).
std::string default_data_dir();
/// The same, with where the choice came from (`xpusim --version`).
core::DataDir data_dir_in_use();

/// What every call reads, loaded once: the catalog (shipped, then the user's directories as
/// --catalog-dir), the calibration (shipped, then the override file when given), the
/// uncertainty bands, and the provenance of the documents.
struct Session {
  explicit Session(std::string data_dir = default_data_dir(), std::string calibration_file = "",
                   std::vector<std::string> catalog_dirs = {});
  std::string data_dir;
  std::string calibration_file;         ///< --calibration; empty: none
  std::vector<std::string> catalog_dirs;  ///< --catalog-dir, in order; empty: the shipped catalog only
  hw::Catalog catalog;
  calib::Params params;
  validation::TrustData trust;
  std::string models_dir() const { return data_dir + "/models"; }
  report::Provenance provenance(bool uses_catalog, bool uses_calibration) const;
};

/// The shipped uncertainty bands (data/validation/uncertainty.json); without the file, none and
/// every input extrapolating, said in the basis.
validation::TrustData load_trust_data(const std::string& data_dir);

/// `train --json`: scenario keys → the document (fits false and the reason when it does not fit).
/// With `deadline` or `budget_usd` (and `train_tokens`), the solver's document (train_solver_document).
Json train(const Json& keys, const Session& s);
/// `serve --json`: one serving run (serve_infeasible_document when it cannot run).
/// `with_software_range`: a Trainium run also runs the ends of its software range (four more
/// runs; serve/software_range.h); a sweep's points leave it out.
Json serve(const Json& keys, const Session& s, bool with_software_range = true);
/// `collective --json`: keys system, chips, op, bytes (a count or "1 GiB"), algorithm.
Json collective(const Json& keys, const Session& s);
/// `validate --json`: key file (default: the shipped public set).
Json validate(const Json& keys, const Session& s);
/// `catalog list --json` without keys; `catalog show ID --json` with key id.
Json catalog(const Json& keys, const Session& s);
/// `model list --json` without keys; `model show --json` with keys model, seq, context.
Json model(const Json& keys, const Session& s);

/// The documents of a run already made (the CLI's --json paths): the report plus the trust bands.
Json train_document(const report::Provenance& prov, const validation::TrustData& trust,
                    const scenario::TrainInputs& in, const scenario::TrainRun& run);
/// `train --deadline/--budget --json`: the chosen count's train document (its `chips` the answer)
/// plus `solver` (report::solver_json); `solver.met` false when no count meets the target.
Json train_solver_document(const report::Provenance& prov, const validation::TrustData& trust,
                           const scenario::TrainInputs& in, const scenario::SolverResult& result);
Json serve_document(const report::Provenance& prov, const validation::TrustData& trust, const hw::Catalog& cat,
                    const std::string& models_dir, const scenario::ServeInputs& in, const serve::ServeReport& rep);

/// `collective`'s inputs judged as its flags are; `path` names the flag or key in diagnostics.
net::CollectiveKind parse_collective_op(const std::string& op, const std::string& path);
/// A per-chip buffer: a plain byte count or a size with a unit ("1 GiB"), finite and ≥ 1 B.
core::Bytes parse_collective_bytes(const std::string& text, const std::string& path);
/// The cost of a collective already judged over all `q.chips` chips of `sys` (stride 1).
net::CollectiveCost collective_cost(const hw::SystemSpec& sys, const calib::Params& params,
                                    const report::CollectiveQuery& q);

}  // namespace xpusim::api
