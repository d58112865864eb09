#pragma once
// Rendering a sweep (docs/sweep.md): a CSV with one row per point (the grid values, the status,
// then the command's key results taken from the point's document) and the `sweep --json`
// document with every point's whole document. Computes nothing new.

#include <nlohmann/json.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "xpusim/report/json_convention.h"

namespace xpusim::report {

/// One point of a sweep as run.
struct SweepPoint {
  std::size_t index = 0;
  std::vector<Json> values;  ///< one per grid key, in the grid's order
  std::string status;        ///< ok, infeasible (the plan does not fit or cannot run), error (bad plan)
  std::string reason;        ///< why, when not ok
  Json result;               ///< the command's --json document; null on error
};

/// Sets status and reason from the point's document (train `fits`, serve `feasible`).
void judge_point(SweepPoint& p);

/// The result columns of `command` (train or serve): the CSV header after the grid keys.
std::vector<std::string> sweep_result_columns(const std::string& command);

/// The CSV: a header (the grid keys, `status`, `reason`, the result columns), then one line per
/// point in the order given. Numbers as `%.10g`, text quoted when it holds a comma, a quote or
/// a line break (RFC 4180).
std::string sweep_csv(const std::string& command, const std::vector<std::string>& grid_keys,
                      const std::vector<SweepPoint>& points);

/// The `sweep --json` document: the envelope, `grid` (the keys and their values), `points`
/// (`index`, `values`, `status`, `reason`, `result`).
Json sweep_document(const Provenance& provenance, const Json& inputs, const std::vector<std::string>& grid_keys,
                    const std::vector<SweepPoint>& points);

/// A point as one line of text and back (how MPI ranks send their points to rank 0); exact:
/// numbers survive the round trip bit for bit.
std::string point_to_wire(const SweepPoint& p);
SweepPoint point_from_wire(const std::string& text);

}  // namespace xpusim::report
