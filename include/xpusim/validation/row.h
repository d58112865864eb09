#pragma once
// One row of a validation CSV (schema: ../shared/validation/README.md) and the prediction made
// for it. Empty cells are std::nullopt: the simulator then applies the default a user of that
// framework would get, and says which in Prediction::assumptions.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xpusim/calib/params.h"
#include "xpusim/hw/catalog.h"

namespace xpusim::validation {

struct Row {
  std::string id, kind, system, model, precision, fsdp_or_zero, recompute, mode, metric;
  std::string trust, source_url, notes;
  long long chips = 0;
  std::optional<long long> seq_len, global_batch_seqs, micro_batch, tp, pp, dp, cp, ep, vpp;
  /// Mean input and output tokens per request (dataset means may be non-integers, e.g. 684.7).
  std::optional<double> in_len, out_len;
  std::optional<long long> batch_or_concurrency;
  double value = 0.0;  ///< measured
  int line = 0;        ///< line in the CSV file
  /// The config.json the measurement file ships for `model`, in its own layout
  /// (`<file's folder>/../models/<model>.json`, as ../shared/validation/README.md defines the
  /// column); empty when it ships none, and `model` is then looked up in the project's models.
  std::string model_file;

  /// What to load for the row's model: the file's own config when it ships one, else the id.
  const std::string& model_ref() const { return model_file.empty() ? model : model_file; }
};

enum class Status { Ok, Unsupported, Error };

/// One figure of what the twin simulated for a row (`validate --explain`): the plan it ran and
/// where the time went, so that a miss can be traced to a part of the model.
struct ExplainItem {
  std::string_view name;  ///< a literal, with its unit: "step_time_s", "decode_attention_ms", "tp"
  double value = 0.0;
};

struct Prediction {
  Status status = Status::Ok;
  double predicted = 0.0;
  std::string reason;                    ///< why unsupported / error
  std::vector<std::string> assumptions;  ///< defaults chosen for empty cells, etc.
  /// Why the configuration as stated does not fit in memory (empty when it fits): predicted
  /// anyway, since the measurement says it ran, and flagged (issue 45, case 10).
  std::string does_not_fit;
  /// Why the row's stated prompt + output exceed its model config's context (empty when they
  /// fit): run as the source states (its deployment extended the context), flagged and counted
  /// (issue 45, item 5).
  std::string beyond_context;
  /// A serving run shortened to Context::serving_request_cap: it simulated fewer requests than
  /// the row's benchmark holds (the calibrator's inner loop scales it, validation/fit.h).
  bool run_shortened = false;
  std::string framework;                 ///< training preset or serving framework that ran
  std::vector<ExplainItem> explain;      ///< the plan and the time breakdown behind `predicted`
};

/// What a predictor needs besides the row.
class ServeRunCache;  // validation/row_scenario.h

struct Context {
  const hw::Catalog* catalog = nullptr;
  std::string models_dir;
  const calib::Params* calibration = nullptr;  ///< fitted and assumed parameters; must be set
  /// Train rows run the analytical executor (Tier A, the closed form) instead of the
  /// event-driven one: the calibrator's inner loop (validation/fit.h).
  bool analytical_train = false;
  /// Infer rows simulate at most this many requests (0: the benchmark's count). The calibrator's
  /// inner loop uses the MLPerf minimum query count (FitOptions::inner_request_cap): only the
  /// MLPerf offline rows of whole NVL72 racks ask for more (3,000 per chip).
  long long serving_request_cap = 0;
  /// Infer rows whose scenarios are equal share one serve run (run_all sets it for its rows).
  ServeRunCache* serve_runs = nullptr;
};

/// Reads a validation CSV; malformed rows/unknown columns are InputError diagnostics with line.
/// At most core::limits::kValidationRows rows in a file of at most the config file size
/// (cross-validation and calibration hold every row).
std::vector<Row> read_csv(const std::string& path);

/// Throws the InputError of a measurement file without rows (read_csv's, for a header alone).
[[noreturn]] void refuse_empty(const std::string& path);
/// Throws refuse_empty's error unless `path` has a row (it reads the header and one row): what a
/// streamed validation checks before it prints.
void check_has_rows(const std::string& path);

/// A validation CSV read row by row with read_csv's checks and memory flat in the rows (at most
/// core::limits::kValidationStreamRows rows of at most kCsvRecordBytes each; no file size
/// limit): `validate` without --cv or --html streams through it (docs/validation.md, "Streaming").
class RowStream {
 public:
  /// Opens `path` (a regular file) and reads its header; InputError on a bad header.
  explicit RowStream(const std::string& path);
  ~RowStream();
  RowStream(const RowStream&) = delete;
  RowStream& operator=(const RowStream&) = delete;
  /// The next row; false at the end. A malformed record or bad cells are an InputError with
  /// the file and line.
  bool next(Row& row);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The rows a report keeps (`validate --rows`): comma-separated globs over the row id
/// (core::glob_match: '*' any run, '?' one character). No glob keeps every row.
struct RowSelection {
  std::vector<std::string> globs;

  /// "a*, b" → {"a*", "b"}: items trimmed, empty items dropped.
  static RowSelection parse(const std::string& text);
  bool all() const { return globs.empty(); }
  bool keeps(const Row& row) const;
  /// The globs joined with commas, as a report states them.
  std::string text() const;
};

/// The rows `keep` keeps, in order.
std::vector<Row> kept_rows(const std::vector<Row>& rows, const RowSelection& keep);
/// Refuses a selection (`field` as written, `text`) that names no glob, or that keeps no row of
/// `file` (exit 2, naming what is expected).
[[noreturn]] void refuse_selection(const std::string& file, const std::string& field, const std::string& text,
                                   const RowSelection& keep);

/// Reads every row of `path` as RowStream does without keeping any, and throws one InputError
/// with the diagnostics found (the first 100), so that a stream starts only on a clean file.
/// Returns the rows `keep` keeps.
std::size_t check_csv_stream(const std::string& path, const RowSelection& keep = {});

/// A number as a row's notes write it, with optional thousands separators ("1,200.5").
double number_in_notes(std::string digits);

/// Train rows (engine/), infer rows (serve/).
Prediction predict_train(const Row& row, const Context& ctx);
Prediction predict_infer(const Row& row, const Context& ctx);

}  // namespace xpusim::validation
