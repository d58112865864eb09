#include "xpusim/api/sweep.h"

#include <nlohmann/json.hpp>

#include "xpusim/core/dtype.h"
#include "xpusim/core/suggest.h"
#include "xpusim/workload/hf_config.h"

namespace xpusim::api {

namespace {

// Diagnostics of a library call without a path get `path` (where the user wrote the value).
template <typename F>
void named(const std::string& path, F&& call) {
  try {
    call();
  } catch (const core::InputError& e) {
    std::vector<core::Diagnostic> ds = e.diagnostics();
    for (auto& x : ds) x.path = path;
    throw core::InputError(ds);
  }
}

// One name-valued key (system, model, plan.precision) judged where it was written.
void check_name(const std::string& key, const Json& v, const std::string& path, const Session& s) {
  if (!v.is_string()) return;  // a wrong type was reported by the scenario reader
  const std::string name = v.get<std::string>();
  if (key == "system") named(path, [&] { (void)s.catalog.system(name, path); });
  if (key == "model") named(path, [&] { (void)workload::load_model(name, s.models_dir()); });
  if (key == "plan.precision" && !core::parse_dtype(name))
    core::fail(path, "unknown precision", name, "one of: " + core::join(core::all_dtype_names()),
               core::did_you_mean(name, core::all_dtype_names()));
}

void check_nested(const Json& nested, const std::string& where, const Session& s) {
  for (const auto& [key, v] : nested.items()) {
    if (v.is_object()) {
      for (const auto& [sub, sv] : v.items()) check_name(key + "." + sub, sv, where + key + "." + sub, s);
    } else {
      check_name(key, v, where + key, s);
    }
  }
}

void check_grid_names(const scenario::SweepGrid& g, const Session& s) {
  check_nested(g.base, "base.", s);
  for (const auto& axis : g.axes) {
    for (std::size_t j = 0; j < axis.values.size(); ++j) {
      core::Diagnostics d;
      const Json one = scenario::nest_scenario_keys(g.command, Json{{axis.key, axis.values[j]}}, "", d);
      const std::string at = "grid." + axis.key + "[" + std::to_string(j) + "]";
      for (const auto& [key, v] : one.items()) {
        const std::string full = v.is_object() ? key + "." + v.begin().key() : key;
        check_name(full, v.is_object() ? v.begin().value() : v, at, s);
      }
    }
  }
}

}  // namespace

void check_sweep_names(const scenario::SweepGrid& g, const Session& s) {
  try {
    check_grid_names(g, s);
  } catch (const core::InputError& e) {
    core::Diagnostics d;
    for (const auto& x : e.diagnostics()) d.add(x);
    d.set_file(g.source);
    d.throw_if_any();
  }
}

report::SweepPoint run_point(const scenario::SweepGrid& g, std::size_t index, const Session& s) {
  report::SweepPoint p;
  p.index = index;
  p.values = scenario::point_values(g, index);
  const Json keys = scenario::point_keys(g, index);
  try {
    // A point is one run: a Trainium point's software range would run four more (serve --json has it).
    p.result = g.command == "train" ? train(keys, s) : serve(keys, s, false);
  } catch (const core::InputError& e) {
    p.result = nullptr;
    for (const auto& d : e.diagnostics()) p.reason += (p.reason.empty() ? "" : "; ") + d.to_string();
  }
  report::judge_point(p);
  return p;
}

std::vector<std::string> grid_keys(const scenario::SweepGrid& g) {
  std::vector<std::string> keys;
  for (const auto& a : g.axes) keys.push_back(a.key);
  return keys;
}

std::string sweep_csv(const scenario::SweepGrid& g, const std::vector<report::SweepPoint>& points) {
  return report::sweep_csv(g.command, grid_keys(g), points);
}

Json sweep_document(const scenario::SweepGrid& g, const std::vector<report::SweepPoint>& points, const Session& s) {
  Json grid = Json::object();
  for (const auto& a : g.axes) grid[a.key] = a.values;
  const Json inputs{{"command", g.command}, {"base", g.base}, {"grid", grid}};
  return report::sweep_document(s.provenance(true, true), inputs, grid_keys(g), points);
}

SweepRun run_sweep(const Json& grid_or_path, const Session& s) {
  SweepRun run;
  run.grid = grid_or_path.is_string() ? scenario::read_sweep_file(grid_or_path.get<std::string>())
                                      : scenario::sweep_grid_from_json(grid_or_path, "");
  check_sweep_names(run.grid, s);
  for (std::size_t i = 0; i < scenario::point_count(run.grid); ++i) run.points.push_back(run_point(run.grid, i, s));
  return run;
}

Json sweep(const Json& grid_or_path, const Session& s) {
  const SweepRun run = run_sweep(grid_or_path, s);
  return sweep_document(run.grid, run.points, s);
}

}  // namespace xpusim::api
