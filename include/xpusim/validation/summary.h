#pragma once
// Running every row of a validation file and summarising the errors per kind.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "xpusim/validation/row.h"

namespace xpusim::validation {

struct RowResult {
  Row row;
  Prediction prediction;
  double error_pct = 0.0;  ///< signed: (predicted − measured) / measured × 100
  /// Cross-validation only: the fold that held the row out ("lmsys.org", or
  /// "github.com/ai-dynamo/aiconfigurator / deepseek-v3" for a model fold); empty otherwise.
  std::string fold;
};

struct KindSummary {
  int n = 0, ok = 0, unsupported = 0, errors = 0;
  double median_abs_error_pct = 0.0;
  double p90_abs_error_pct = 0.0;
  double mean_abs_error_pct = 0.0;
  /// Ok rows with an uncertainty band, and those whose measured value lies inside it.
  int banded = 0, in_band = 0;
  /// Ok rows run beyond their model config's context, as their source states (Prediction::beyond_context).
  int beyond_context = 0;
};

/// Predicts one row (train rows with predict_train, infer rows with predict_infer); an
/// InputError becomes status Error with its message.
RowResult predict_row(const Row& row, const Context& ctx);
/// The columns that set a row's run (kind, system, model, precision, chips, layout, lengths,
/// load): a configuration's TTFT and TPOT rows share one key, and one serve run.
std::string configuration_key(const Row& row);
/// Indices into `keys` (configuration_key of each row) with the first row of each configuration
/// ahead of the rest: parallel threads start distinct runs, and the rows that share one find it
/// done rather than wait for it side by side.
std::vector<size_t> first_of_each_configuration(const std::vector<std::string>& keys);
/// Predicts every row (train rows with predict_train, infer rows with predict_infer).
std::vector<RowResult> run_all(const std::vector<Row>& rows, const Context& ctx);
/// Streams `path` (check_csv_stream first, then RowStream) and predicts the rows `keep` keeps
/// `batch` at a time (in parallel within a batch), handing each batch to `sink` in file order:
/// memory flat in the rows of the file.
void stream_rows(const std::string& path, const Context& ctx, std::size_t batch,
                 const std::function<void(const std::vector<RowResult>&)>& sink, const RowSelection& keep = {});

/// The summaries of rows added one at a time: counts and the errors of the ok rows (8 bytes a
/// row, for the exact percentiles) per kind and per "kind/family". summarize and
/// summarize_by_family are this over a vector.
class SummaryBuilder {
 public:
  explicit SummaryBuilder(const hw::Catalog* catalog) : catalog_(catalog) {}
  /// `in_band`: whether the measured value lies inside the row's band (nullopt: no band).
  void add(const RowResult& r, std::optional<bool> in_band = std::nullopt);
  std::map<std::string, KindSummary> kinds() const;
  /// Empty without a catalog.
  std::map<std::string, KindSummary> families() const;
  /// Per "kind/source" (source_of the row's URL).
  std::map<std::string, KindSummary> sources() const;
  /// Per "kind/framework/metric" (the framework the prediction ran; "unknown" when none ran).
  std::map<std::string, KindSummary> cells() const;

  /// One group's counts and the errors of its ok rows; finish turns groups into summaries
  /// (summarize_by_source groups by another key with the same two steps).
  struct Group {
    KindSummary counts;
    std::vector<double> errors;
  };
  static void count(Group& g, const RowResult& r, std::optional<bool> in_band = std::nullopt);
  static std::map<std::string, KindSummary> finish(const std::map<std::string, Group>& groups);

 private:
  const hw::Catalog* catalog_;
  std::map<std::string, Group> kinds_, families_, sources_, cells_;
};

/// Per kind ("train", "infer"): counts and |error| statistics over the ok rows.
std::map<std::string, KindSummary> summarize(const std::vector<RowResult>& results);
/// Per "kind/family" (family from compute::family_of of the row's chip; "unknown" when the
/// system is not in the catalog): the same statistics as summarize.
std::map<std::string, KindSummary> summarize_by_family(const std::vector<RowResult>& results,
                                                       const hw::Catalog& catalog);
/// Per "kind/source" (source_of the row's URL: the unit a leave-one-source-out fold holds out):
/// the same statistics as summarize. With cross-validated results, each group is one fold's
/// rows of that kind predicted out of fold.
std::map<std::string, KindSummary> summarize_by_source(const std::vector<RowResult>& results);
/// The project's own copy of the public validation set (a copy of ../shared/validation/public.csv).
std::string default_public_file(const std::string& data_dir);

}  // namespace xpusim::validation
