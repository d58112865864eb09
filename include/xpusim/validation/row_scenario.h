#pragma once
// From a validation row (../shared/validation/README.md) to a serving scenario: the framework
// the notes name (or the chip's default), the layout and scheduler a user of that framework
// would get when the row leaves them empty, the benchmark's load (static batch, single stream,
// offline queue, MLPerf server Poisson, closed-loop concurrency), and the statistic the row
// reports. validation::predict_infer is a thin adapter over predict_infer_row. The mapping
// of a validation row to a scenario lives here, in validation/, above serve/.

#include <future>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "xpusim/core/result.h"
#include "xpusim/serve/scenario.h"
#include "xpusim/validation/row.h"

namespace xpusim::validation {

/// What the row measures, read from the scenario's result.
enum class RowMetric {
  OutputTokensPerS, OutputTokensPerSPerChip, InputTokensPerSPerChip,
  TtftMean, TtftP50, TpotMean, TpotP50, E2eMean, RequestsPerS,
  TtftP90, TtftP99, TpotP90, TpotP99
};

struct RowScenario {
  serve::ServeScenario scenario;
  RowMetric metric = RowMetric::OutputTokensPerS;
  std::vector<std::string> assumptions;
  /// A closed-loop benchmark row: the run holds as many requests per client as the benchmark's
  /// (serving.closed_loop.benchmark_requests_per_client plus the warm-up), set by
  /// size_benchmark_loop, since the clients' drift apart grows with the run's length.
  bool benchmark_loop = false;
};

/// The scenario for an infer row; an error (reason) when the row cannot be simulated.
core::Result<RowScenario> scenario_for_row(const Row& row, const hw::Catalog& catalog);

/// A closed-loop benchmark row's request count from the calibration: concurrency x (measured
/// requests per client + warm-up requests per client), with the assumption stated; no-op for
/// other rows. Throws core::InputError when the calibration asks for fewer than one measured
/// request per client.
void size_benchmark_loop(const calib::Params& params, RowScenario& rs);

/// The figure the row's metric names, from a report.
double metric_value(const serve::ServeReport& rep, RowMetric m);

/// The serve runs of one validation pass: rows whose scenarios are equal (a configuration's TTFT
/// and TPOT rows) simulate once. Thread-safe: the first row to ask runs the scenario, the others
/// wait for its report (or its InputError).
class ServeRunCache {
 public:
  core::Result<serve::ServeReport> run(const serve::ServeScenario& sc, const serve::ServeEnv& env);
  /// Distinct scenarios run so far.
  std::size_t runs();

 private:
  struct Entry {
    serve::ServeScenario scenario;
    std::shared_future<core::Result<serve::ServeReport>> report;
  };
  std::mutex mutex_;
  std::map<std::string, std::vector<Entry>> by_key_;  ///< system, model, chips and lengths → runs
};

/// Predicts an infer row (status Unsupported with the reason when it cannot); with `runs`, a run
/// another row of the pass already made is reused.
Prediction predict_infer_row(const Row& row, const serve::ServeEnv& env, long long request_cap = 0,
                             ServeRunCache* runs = nullptr);

}  // namespace xpusim::validation
