#pragma once
// Fitting the `fitted` parameters of data/calibration/ to measurements (xpusim calibrate), and
// leave-one-source-out cross-validation. docs/calibration.md describes the objective (soft-L1
// over ln(predicted / measured), trust-C rows down-weighted, a log-normal prior around the
// shipped value), the optimiser (cyclic coordinate descent until converged, line searches in log
// space that bracket from the current value and narrow by golden sections, fixed rules and order:
// deterministic) and the speed-ups (sensitive rows per parameter, analytical training executor
// inside the optimiser).

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "xpusim/calib/params.h"
#include "xpusim/core/parallel.h"
#include "xpusim/validation/source.h"
#include "xpusim/validation/summary.h"

namespace xpusim::validation {

/// The `fitted` parameters whose key matches `glob` ('*' any run of characters, '?' one; a
/// comma-separated list matches a key any of its globs matches); an empty glob matches every
/// key. Sorted by key.
std::vector<std::string> fitted_keys(const calib::Params& params, const std::string& glob);

/// `p` with a new value in base units, written in the unit of its current text ("600 us" →
/// "612.5 us"); the basis is kept.
calib::Parameter with_value(const calib::Parameter& p, double base_value);

/// How cross-validation holds rows out: each source in turn; or each source in turn except that
/// a large source of several models (FitOptions::model_fold_min_rows) holds out one model at a
/// time, the rest of its own rows staying in the fit.
enum class Folds { BySource, ByModelWithinLargeSource };

struct FitOptions {
  std::vector<std::string> keys;   ///< parameters to fit (fitted kind; empty = none)
  /// Coordinate-descent sweeps over `keys`, in key order, at most: the sweeps stop once one
  /// moves no key by line_tolerance or more (converged).
  int sweeps = 3;
  /// Sweeps of a cross-validation fold's fit, at most (0: `sweeps`). A fold starts from the keys'
  /// prior centres (the fit on every row) and moves them by what its held-out rows took away, the
  /// first sweep nearly all of it (docs/calibration.md); validate --cv-sweeps.
  int fold_sweeps = 1;
  int line_evaluations = 16;       ///< trials per line search, at most
  /// A line search's first step from the current value, in ln (0.03: 3 %); the step grows by the
  /// golden ratio while the loss falls, and the bracket found is then narrowed by golden sections.
  double line_step = 0.03;
  /// A line search stops once its bracket is narrower than this, in ln (0.03: 3 %); a sweep that
  /// moves no key by as much ends the fit.
  double line_tolerance = 0.03;
  /// Rows a line search evaluates: a key that moves more is searched on about this many of
  /// them, as whole configurations (a TTFT and a TPOT row share one run) evenly spaced over its
  /// rows (in file order, so across systems, models and stacks); its other rows are predicted
  /// again at the value kept when a later search (or the final loss) reads them. 0: every row.
  /// 512 rows are about 256 serving configurations.
  int line_rows = 512;
  double soft_l1_scale = 0.10;     ///< soft-L1 transition, in ln(pred/measured)
  double trust_c_weight = 0.5;     ///< weight of a row with trust C (A and B: 1)
  double search_factor = 10.0;     ///< search within [shipped/f, shipped·f] ∩ range
  double prior_weight = 1.0;       ///< 0 = no prior (tests of the optimiser alone)
  /// Requests per infer row inside the optimiser (Context::serving_request_cap): MLPerf's
  /// minimum query count. A run it shortens is scaled by full / shortened, both simulated at each
  /// sweep's start (docs/calibration.md). The reported figures simulate every request.
  long long inner_request_cap = 24576;
  int threads = core::default_threads();  ///< rows predicted in parallel (results do not depend on it)
  /// Predict every row at the values kept, for FitResult::loss_end. A cross-validation fold's
  /// fit, whose loss nothing reads, skips it (its loss_end is then NaN).
  bool final_loss = true;
  Folds folds = Folds::BySource;   ///< cross_validate's folds
  /// A source of at least this many rows, over two or more models, folds by model
  /// (Folds::ByModelWithinLargeSource).
  int model_fold_min_rows = 200;
  /// A fold re-fits a key only when the held-out rows are at least this share of the rows the
  /// key moves; a key they make up less of keeps its value from the fit on every row, which they
  /// can have moved by about that share of their pull. 0: every key that moves a held-out row.
  double refit_min_share = 0.0;
  /// Called after each line search with the key and its rows (progress on a terminal); may be empty.
  std::function<void(const std::string& key, int rows)> progress;
  /// Called after each cross-validation fold with its label, its place and the folds in all, and
  /// the keys it re-fitted; may be empty.
  std::function<void(const std::string& fold, int done, int folds, int refitted)> fold_progress;
};

/// What one parameter's fit did.
struct FittedValue {
  std::string key;
  /// Base units: the documented value (the prior's centre), the active value the fit started
  /// from (differs with --calibration), and the fitted value.
  double start = 0, fitted = 0;
  std::string fitted_text;       ///< as written to the override file
  int sensitive_rows = 0;        ///< rows (in the fitted set) whose prediction moves with it
  double active = 0;
};

struct FitResult {
  calib::Params params;             ///< the start parameters with the fitted values
  std::vector<FittedValue> values;  ///< in key order
  double loss_start = 0, loss_end = 0;  ///< loss_end: NaN without FitOptions::final_loss
  int rows_used = 0;                ///< rows predicted (status ok) at the start
  /// Row predictions the fit made (the start, every trial, the rows predicted again): its work,
  /// which unlike its seconds does not depend on the machine.
  long long predictions = 0;
};

/// One leave-one-source-out fold: the source it held out and the keys it re-fitted (those that
/// move a held-out row), each with its value in the full fit (`start`) and in the fold
/// (`fitted`; a stack key no other source informs holds its sibling stacks' median).
struct FoldFit {
  std::string source;
  std::vector<FittedValue> values;  ///< in key order
  long long predictions = 0;        ///< row predictions of the fold's fit (FitResult::predictions)
};

/// The row predictions of the folds' fits together (the work of a cross-validation).
long long fold_predictions(const std::vector<FoldFit>& fits);

/// Which rows each parameter moves: every row is predicted once with the start values and once
/// per key with that key moved by 10 % in log space; key → row indices (into `rows`).
using Sensitivity = std::map<std::string, std::vector<int>>;
Sensitivity find_sensitive_rows(const std::vector<Row>& rows, const Context& ctx, const std::vector<std::string>& keys,
                                int threads = core::default_threads());

/// The default parameter set: every key of `sensitivity` that moves at least one row.
std::vector<std::string> keys_with_rows(const Sensitivity& sensitivity);

/// Fits `opt.keys` on `rows[i]` for i in `use` (all rows when empty), starting from
/// *ctx.calibration. `sensitivity` from find_sensitive_rows over the same rows.
FitResult fit(const std::vector<Row>& rows, const std::vector<int>& use, const Context& ctx,
              const Sensitivity& sensitivity, const FitOptions& opt);

/// Leave-one-source-out (or one model of a large source: `opt.folds`), taking *ctx.calibration
/// as the fit on every row. For each fold, the keys of `opt.keys` that move one of its rows (and
/// of which its rows are at least `opt.refit_min_share`) are reset to their prior and re-fitted
/// on the other rows; the keys that move none of its rows cannot change its predictions and keep their
/// values (their fit saw the held-out rows only through the coupling with re-fitted keys:
/// docs/calibration.md). The held-out rows are then predicted with the event-driven executor.
/// Returns one RowResult per row (in row order) holding the out-of-fold prediction. `folds`
/// receives the label of each fold in order (fold_labels), `fold_fits` what each fold re-fitted. Only the
/// rows `report` keeps are predicted, and only their sources' folds run, each fitted as in the
/// whole run (every row of the source held out); the other rows are left empty (an empty row id).
std::vector<RowResult> cross_validate(const std::vector<Row>& rows, const Context& ctx, const Sensitivity& sensitivity,
                                      const FitOptions& opt, std::vector<std::string>* folds = nullptr,
                                      std::vector<FoldFit>* fold_fits = nullptr, const RowSelection& report = {});

/// The fold that holds each row out under `opt.folds` (RowResult::fold), in row order.
std::vector<std::string> fold_labels(const std::vector<Row>& rows, const FitOptions& opt);

/// The `--out` file: only the fitted keys, nested by their dotted components, each a mapping
/// with value and basis (`basis_text`). YAML text, deterministic.
std::string override_yaml(const FitResult& fit, const std::string& basis_text);

}  // namespace xpusim::validation
