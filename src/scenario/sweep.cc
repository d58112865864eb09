#include "xpusim/scenario/sweep.h"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <optional>
#include <set>

#include "file_fields.h"
#include "xpusim/core/suggest.h"
#include "xpusim/scenario/serve_inputs.h"
#include "xpusim/scenario/train_inputs.h"

namespace xpusim::scenario {

namespace {

using config::Json;

const std::vector<std::string> kCommands = {"train", "serve"};

bool contains(const std::vector<std::string>& list, const std::string& key) {
  return std::find(list.begin(), list.end(), key) != list.end();
}

std::vector<std::string> all_names(const ScenarioKeys& k) {
  std::vector<std::string> names = k.top;
  names.insert(names.end(), k.plan.begin(), k.plan.end());
  names.insert(names.end(), k.workload.begin(), k.workload.end());
  names.insert(names.end(), {"plan", "workload"});
  return names;
}

const std::vector<std::string>& section_keys(const ScenarioKeys& k, const std::string& section) {
  return section == "plan" ? k.plan : k.workload;
}

// One key of a section (`plan` or `workload`) into `out`, or an unknown-key diagnostic.
// One key into its place, once: the same key given flat and nested (`tp` and `plan.tp`, or
// `plan: {tp}`) is an error, not a silent choice of one.
void put_once(Json& parent, const std::string& key, const Json& v, const std::string& path, core::Diagnostics& d) {
  if (parent.is_object() && parent.contains(key)) {
    d.error(path, "given twice (flat and nested)", config::brief(v),
            "the key once, flat or in its section (the other value is " + config::brief(parent[key]) + ")");
    return;
  }
  parent[key] = v;
}

void put_section_key(const ScenarioKeys& k, const std::string& section, const std::string& key, const Json& v,
                     const std::string& path, Json& out, core::Diagnostics& d) {
  const auto& names = section_keys(k, section);
  if (contains(names, key)) put_once(out[section], key, v, path, d);
  else d.error(path, "unknown key", key, "one of: " + core::join(names), core::did_you_mean(key, names));
}

// One key as written (flat, dotted or a nested section) into the nested shape.
void put_key(const ScenarioKeys& k, const std::string& key, const Json& v, const std::string& where, Json& out,
             core::Diagnostics& d) {
  const std::string path = where.empty() ? key : where + "." + key;
  const auto dot = key.find('.');
  const std::string head = key.substr(0, dot);
  if ((head == "plan" || head == "workload") && dot != std::string::npos) {
    put_section_key(k, head, key.substr(dot + 1), v, path, out, d);
  } else if (key == "plan" || key == "workload") {
    if (!v.is_object()) {
      d.error(path, "must be a mapping of keys", config::brief(v), "keys such as " + core::join(section_keys(k, key)));
      return;
    }
    for (const auto& [sub, sv] : v.items()) put_section_key(k, key, sub, sv, path + "." + sub, out, d);
  } else if (contains(k.top, key)) {
    put_once(out, key, v, path, d);
  } else if (contains(k.plan, key)) {
    put_once(out["plan"], key, v, path, d);
  } else if (contains(k.workload, key)) {
    put_once(out["workload"], key, v, path, d);
  } else {
    const auto names = all_names(k);
    d.error(path, "unknown key", key, "a scenario key of this command (docs/scenarios.md)",
            core::did_you_mean(key, names));
  }
}

// `over`'s keys replace `base`'s, section by section.
void merge_into(Json& base, const Json& over) {
  for (const auto& [key, v] : over.items()) {
    if (v.is_object() && base.contains(key) && base[key].is_object())
      for (const auto& [sub, sv] : v.items()) base[key][sub] = sv;
    else base[key] = v;
  }
}

// The dotted nested path of a grid key (`precision` → `plan.precision`), for diagnostics.
std::string nested_path(const std::string& command, const std::string& key) {
  core::Diagnostics ignored;
  const Json one = nest_scenario_keys(command, Json{{key, nullptr}}, "", ignored);
  if (!ignored.empty() || one.empty()) return key;
  const auto it = one.begin();
  return it->is_object() && !it->empty() ? it.key() + "." + it->begin().key() : it.key();
}

// The scenario reader's verdict on a point's keys; `rename` maps a diagnostic's path to where
// the user wrote the value (empty: drop it, the base check reports it).
template <typename Rename>
void check_keys(const std::string& command, const Json& keys, core::Diagnostics& d, Rename rename) {
  try {
    if (command == "train") (void)train_inputs_from_json(keys, "");
    else (void)serve_inputs_from_json(keys, "");
  } catch (const core::InputError& e) {
    for (core::Diagnostic x : e.diagnostics()) {
      x.path = rename(x.path);
      if (!x.path.empty()) d.add(x);
    }
  }
}

// Every value judged once: the base alone, then each grid value over the base.
void check_values(const SweepGrid& g, core::Diagnostics& d) {
  check_keys(g.command, g.base, d, [](const std::string& p) { return "base." + p; });
  for (const auto& axis : g.axes) {
    const std::string nested = nested_path(g.command, axis.key);
    for (std::size_t j = 0; j < axis.values.size(); ++j) {
      Json keys = g.base;
      core::Diagnostics ignored;
      merge_into(keys, nest_scenario_keys(g.command, Json{{axis.key, axis.values[j]}}, "", ignored));
      const std::string at = "grid." + axis.key + "[" + std::to_string(j) + "]";
      check_keys(g.command, keys, d, [&](const std::string& p) { return p == nested ? at : std::string(); });
    }
  }
}

void read_axes(const Json& grid, SweepGrid& g, core::Diagnostics& d) {
  std::set<std::string> seen;
  for (const auto& [key, v] : grid.items()) {
    const std::string path = "grid." + key;
    core::Diagnostics keyd;
    (void)nest_scenario_keys(g.command, Json{{key, nullptr}}, "grid", keyd);
    d.append(keyd);
    if (!keyd.empty()) continue;
    if (!v.is_array() || v.empty()) {
      d.error(path, v.is_array() ? "empty list" : "not a list", config::brief(v),
              "a non-empty list of values, e.g. [8, 16]");
      continue;
    }
    if (!seen.insert(nested_path(g.command, key)).second)
      d.error(path, "the same scenario key twice in the grid", key, "each key once");
    g.axes.push_back({key, std::vector<Json>(v.begin(), v.end())});
  }
  double points = 1;
  for (const auto& a : g.axes) points *= static_cast<double>(a.values.size());
  if (points > static_cast<double>(kMaxSweepPoints))
    d.error("grid", "too many points", std::to_string(static_cast<long long>(points)),
            "at most " + std::to_string(kMaxSweepPoints) + " (split the sweep)");
}

}  // namespace

const ScenarioKeys& scenario_keys(const std::string& command) {
  static const ScenarioKeys train{
      {"system", "model", "chips", "executor", "framework", "description"},
      {"tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch", "precision", "zero", "recompute", "schedule",
       "allow_fallback", "async_tp", "lora_rank", "lora_targets", "mtp_layers", "moe_load_imbalance",
       "moe_capacity_factor", "moe_pad_to_capacity", "expert_tp", "recompute_layers"},
      {"global_batch", "max_global_batch_tokens", "seq_len", "train_tokens", "deadline", "budget_usd"}};
  static const ScenarioKeys serve{
      {"system", "model", "chips", "framework", "description"},
      {"tp", "pp", "ep", "attention_dp", "precision", "allow_fallback", "weight_precision", "kv_precision", "state_precision", "scheduler", "max_num_seqs",
       "max_batched_tokens", "static_batch", "block_size", "chunked_prefill", "compiled_seq_len", "prefill_chips", "draft_len",
       "acceptance", "draft_model", "moe_load_imbalance", "prefix_cache", "prefix_cache_tokens", "kv_tier", "kv_pool"},
      {"in_len", "out_len", "requests", "seed", "rate", "concurrency", "offline", "arrivals", "arrivals_block_tokens",
       "arrivals_window", "arrivals_sample", "arrivals_speedup",
       "timeout", "ttft_slo", "tpot_slo"}};
  if (command == "train") return train;
  if (command == "serve") return serve;
  core::fail("command", "unknown command", command, "one of: " + core::join(kCommands),
             core::did_you_mean(command, kCommands));
}

Json nest_scenario_keys(const std::string& command, const Json& keys, const std::string& where,
                        core::Diagnostics& d) {
  const ScenarioKeys& k = scenario_keys(command);
  Json out = Json::object();
  if (!keys.is_object()) {
    d.error(where, "must be a mapping of keys", config::brief(keys), "scenario keys such as system, model, chips");
    return out;
  }
  for (const auto& [key, v] : keys.items()) put_key(k, key, v, where, out, d);
  return out;
}

namespace {

// A file value (model config, draft model, arrivals trace) the grid names by a relative path is
// read from the grid file's folder when there, as in a scenario file (file_fields.h).
void resolve_value_beside(const std::string& path, Json& value, bool always_a_path) {
  if (!value.is_string()) return;
  std::optional<std::string> ref = value.get<std::string>();
  resolve_beside(path, ref, always_a_path);
  value = *ref;
}

void resolve_files_beside(const std::string& path, SweepGrid& g) {
  struct FileKey {
    const char* section;  ///< "" = top level
    const char* key;
    bool always_a_path;
  };
  static constexpr FileKey kFiles[] = {{"", "model", false}, {"plan", "draft_model", false}, {"workload", "arrivals", true}};
  for (const FileKey& f : kFiles) {
    Json* section = *f.section ? (g.base.contains(f.section) ? &g.base[f.section] : nullptr) : &g.base;
    if (section && section->is_object() && section->contains(f.key)) resolve_value_beside(path, (*section)[f.key], f.always_a_path);
    const std::string dotted = *f.section ? std::string(f.section) + "." + f.key : std::string(f.key);
    for (auto& axis : g.axes)
      if (axis.key == f.key || axis.key == dotted)
        for (auto& v : axis.values) resolve_value_beside(path, v, f.always_a_path);
  }
}

}  // namespace

SweepGrid read_sweep_file(const std::string& path) {
  config::Json doc;
  try {
    doc = load_scenario_document(path);
  } catch (const core::InputError& e) {  // the reader names --scenario; here the file is the grid
    std::vector<core::Diagnostic> ds = e.diagnostics();
    for (auto& x : ds)
      if (x.path == "--scenario") x.path = "GRID";
    throw core::InputError(ds);
  }
  SweepGrid g = sweep_grid_from_json(doc, path);
  resolve_files_beside(path, g);
  return g;
}

SweepGrid sweep_grid_from_json(const Json& doc, const std::string& source) {
  core::Diagnostics d;
  SweepGrid g;
  g.source = source;
  if (!doc.is_object())
    core::fail(source, "a sweep must be a mapping of keys", config::brief(doc), "command, base, grid");
  config::FieldReader r(doc, "", d);
  g.command = r.str("command");
  const Json* base = r.object("base", false);
  const Json* grid = r.object("grid", true);
  r.ignore("description");
  r.finish();
  if (d.empty() && !contains(kCommands, g.command))
    d.error("command", "unknown command", g.command, "one of: " + core::join(kCommands),
            core::did_you_mean(g.command, kCommands));
  d.set_file(source);
  d.throw_if_any();
  g.base = base ? nest_scenario_keys(g.command, *base, "base", d) : Json::object();
  if (grid) read_axes(*grid, g, d);
  if (d.empty()) check_values(g, d);
  d.set_file(source);
  d.throw_if_any();
  return g;
}

std::size_t point_count(const SweepGrid& g) {
  std::size_t n = 1;
  for (const auto& a : g.axes) n *= a.values.size();
  return n;
}

std::vector<Json> point_values(const SweepGrid& g, std::size_t index) {
  std::vector<Json> values(g.axes.size());
  for (std::size_t a = g.axes.size(); a-- > 0;) {
    const std::size_t n = g.axes[a].values.size();
    values[a] = g.axes[a].values[index % n];
    index /= n;
  }
  return values;
}

Json point_keys(const SweepGrid& g, std::size_t index) {
  Json keys = g.base;
  const std::vector<Json> values = point_values(g, index);
  for (std::size_t a = 0; a < g.axes.size(); ++a) {
    core::Diagnostics d;
    merge_into(keys, nest_scenario_keys(g.command, Json{{g.axes[a].key, values[a]}}, "", d));
  }
  return keys;
}

}  // namespace xpusim::scenario
