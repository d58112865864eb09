#pragma once
// The HTML pages of `train`, `serve`, `validate`, `claims` and `sweep` (`--html FILE`, docs/html.md):
// self-contained documents with a summary table, inline SVG charts and the provenance.
// Computes nothing new: every number comes from the result handed in.

#include <string>
#include <utility>
#include <vector>

#include "xpusim/report/json_convention.h"
#include "xpusim/report/sweep_report.h"
#include "xpusim/scenario/claims.h"
#include "xpusim/scenario/rate_curve.h"
#include "xpusim/scenario/train_inputs.h"
#include "xpusim/scenario/train_page.h"
#include "xpusim/serve/trace_stats.h"
#include "xpusim/validation/summary.h"

namespace xpusim::report {

/// Step timeline (the event executor's trace, else the breakdown laid end to end), step-time
/// breakdown, memory per chip of each stage against HBM capacity (the most loaded chip only when
/// `page.stage_memory` is empty), roofline with the step's achieved point and one layer's ops.
std::string train_html(const Provenance& provenance, const scenario::TrainRun& run,
                       const scenario::TrainPageData& page);

/// A run with prefix caching: the same run with the cache off, and its trace replayed alone
/// through LRU caches of several capacities (serve::trace_stats; unbounded first).
struct PrefixCachePage {
  const serve::ServeReport* uncached = nullptr;
  std::vector<serve::CacheReplay> replays;
  long long engines = 1;  ///< the run's (prefill) engines: each holds its own cache
};

/// Latency CDFs (TTFT, TPOT, end-to-end), throughput and p90 latency against the offered rate;
/// with `prefix`, the TTFT CDFs with and without the cache and the hit rate against capacity.
std::string serve_html(const Provenance& provenance, const serve::ServeReport& rep,
                       const scenario::RateCurve& curve, const PrefixCachePage* prefix = nullptr);

/// The uncertainty band of each row's prediction (low, high); {0, 0} where the row has none.
using Bands = std::vector<std::pair<double, double>>;

/// Predicted vs measured per family (log-log, y = x, ±10 % and ±25 % guides, bands as error
/// bars), the summary per kind and family, and the error table. With `cv` (the leave-one-source-out
/// predictions of the same rows) the summary adds the CV figures, a table per held-out source
/// follows it, and each row shows its out-of-fold prediction and error.
std::string validation_html(const Provenance& provenance, const std::string& file,
                            const std::vector<validation::RowResult>& results, const Bands& bands,
                            const hw::Catalog& catalog, const std::vector<validation::RowResult>* cv = nullptr);

/// Each claim: published against xpusim's ratio with its range, and the verdicts.
std::string claims_html(const Provenance& provenance, const scenario::ClaimsReport& rep);

/// The sweep's points on the command's trade-off with their Pareto front (train: cost per
/// million tokens against tokens/s; serve: TPOT p90 against output tokens/s per chip), and
/// every point in a table with its grid values, status and reason.
std::string sweep_html(const Provenance& provenance, const std::string& command, const std::vector<std::string>& keys,
                       const std::vector<SweepPoint>& points);

}  // namespace xpusim::report
