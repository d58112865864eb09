#pragma once
// A sweep: one train or serve scenario (`base`) and a grid of values for some of its keys. The
// points are the Cartesian product of the grid's lists, in a fixed order: the grid keys in the
// order written, the last key fastest (an odometer). Keys are the command's scenario keys
// (docs/scenarios.md), written flat (`precision`) or nested (`plan: {precision: fp8}`,
// `plan.precision`); every value is judged by the scenario reader, the one validation path.
//
//   command: train
//   base: {system: h100-sxm-dgx, model: llama3.1-8b}
//   grid: {chips: [8, 16], precision: [bf16, fp8]}     # 4 points: (8,bf16) (8,fp8) (16,bf16) ...

#include <nlohmann/json.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "xpusim/config/document.h"
#include "xpusim/core/diagnostics.h"

namespace xpusim::scenario {

/// The scenario keys of a command by section: top level, `plan:`, `workload:`.
struct ScenarioKeys {
  std::vector<std::string> top, plan, workload;
};
/// The keys of `train` or `serve` (the readers of train_inputs.h and serve_inputs.h).
const ScenarioKeys& scenario_keys(const std::string& command);

/// Flat (`tp`), dotted (`plan.tp`) or nested (`plan: {tp: 8}`) keys in the scenario file's nested
/// shape. An unknown key is a diagnostic at `where`.KEY with the closest known key.
config::Json nest_scenario_keys(const std::string& command, const config::Json& keys, const std::string& where,
                                core::Diagnostics& d);

struct SweepAxis {
  std::string key;                  ///< as written in the grid (flat or dotted)
  std::vector<config::Json> values; ///< at least one
};

struct SweepGrid {
  std::string command;          ///< train or serve
  config::Json base;            ///< nested scenario keys shared by every point
  std::vector<SweepAxis> axes;  ///< in the order written; the last varies fastest
  std::string source;           ///< the grid file, or empty (diagnostics)
};

/// Most points one grid may have (a typo such as a 10⁶-long list is a diagnostic, not a day).
inline constexpr std::size_t kMaxSweepPoints = 100000;

/// Reads a grid file (YAML or JSON); InputError naming the key for anything wrong: an unknown
/// command, key or value, an empty or non-list grid entry, too many points.
SweepGrid read_sweep_file(const std::string& path);
/// The same from a document already read; `source` names it in diagnostics.
SweepGrid sweep_grid_from_json(const config::Json& doc, const std::string& source);

std::size_t point_count(const SweepGrid& g);
/// The grid values of point `index` (one per axis, in axis order): mixed radix, last axis fastest.
std::vector<config::Json> point_values(const SweepGrid& g, std::size_t index);
/// The nested scenario keys of point `index`: the base with the point's values over it.
config::Json point_keys(const SweepGrid& g, std::size_t index);

}  // namespace xpusim::scenario
