#pragma once
// Running a sweep's points (scenario/sweep.h) through the command's one library function
// (api.h): each point gives the document `xpusim CMD --json` prints for its keys. A point whose
// keys make a bad plan for its model and chips (a diagnostic at run time) is a row with the
// diagnostic as its reason, not an abort; names every point shares (system, model, precision)
// are judged before any point runs, as bad input.

#include <cstddef>
#include <string>
#include <vector>

#include "xpusim/api/api.h"
#include "xpusim/report/sweep_report.h"
#include "xpusim/scenario/sweep.h"

namespace xpusim::api {

/// InputError naming the key when a system, model or precision of the grid is unknown.
void check_sweep_names(const scenario::SweepGrid& g, const Session& s);

/// Point `index` of the grid: its values, status and document.
report::SweepPoint run_point(const scenario::SweepGrid& g, std::size_t index, const Session& s);

/// The grid's keys in order (the CSV's first columns).
std::vector<std::string> grid_keys(const scenario::SweepGrid& g);
/// The CSV and the `sweep --json` document of points run (in index order).
std::string sweep_csv(const scenario::SweepGrid& g, const std::vector<report::SweepPoint>& points);
Json sweep_document(const scenario::SweepGrid& g, const std::vector<report::SweepPoint>& points, const Session& s);

/// A grid and its points, run in index order in this process.
struct SweepRun {
  scenario::SweepGrid grid;
  std::vector<report::SweepPoint> points;
};
/// The grid as a path (YAML/JSON file) or as a document; names checked; every point run.
SweepRun run_sweep(const Json& grid_or_path, const Session& s);
/// run_sweep's `sweep --json` document.
Json sweep(const Json& grid_or_path, const Session& s);

}  // namespace xpusim::api
