#include "xpusim/calib/params.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "values.h"
#include "xpusim/config/document.h"
#include "xpusim/core/suggest.h"

namespace xpusim::calib {

namespace detail {

using config::Json;

bool same_unit(const Value& a, const Value& b) {
  const auto& x = a.quantity;
  const auto& y = b.quantity;
  return a.is_flag == b.is_flag && x.t == y.t && x.b == y.b && x.f == y.f && x.d == y.d && x.e == y.e;
}

std::optional<double> plain_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return std::nullopt;
  while (*end == ' ') ++end;
  if (*end != '\0') return std::nullopt;
  return v;
}

/// Parses a value node: a YAML bool is a flag, a number or a numeric string a plain number,
/// any other string a quantity with a unit.
std::optional<Value> parse_value(const Json& node, const std::string& path, core::Diagnostics& diags) {
  Value v;
  if (node.is_boolean()) {
    v.is_flag = true;
    v.text = node.get<bool>() ? "true" : "false";
    v.quantity.value = node.get<bool>() ? 1.0 : 0.0;
    return v;
  }
  if (node.is_number()) {
    v.text = node.dump();
    v.quantity.value = node.get<double>();
    return v;
  }
  if (!node.is_string()) {
    diags.error(path, "wrong type", config::brief(node), "a value such as \"0.75\", \"4 us\" or true");
    return std::nullopt;
  }
  v.text = node.get<std::string>();
  if (auto n = plain_number(v.text)) {
    if (!std::isfinite(*n)) {
      diags.error(path, "not a finite number", v.text, "a finite value such as \"0.75\"");
      return std::nullopt;
    }
    v.quantity.value = *n;
    return v;
  }
  auto q = core::parse_quantity_any(v.text);
  if (!q) {
    diags.error(path, q.error(), v.text, "a plain number (\"0.75\") or a quantity with a unit (\"4 us\")");
    return std::nullopt;
  }
  if (!std::isfinite(q->value)) {
    diags.error(path, "not a finite quantity", v.text, "a finite value such as \"4 us\"");
    return std::nullopt;
  }
  v.quantity = *q;
  return v;
}

void check_range(const Parameter& p, const std::string& path, core::Diagnostics& diags) {
  if (!p.range_low || !p.range_high) return;
  if (!same_unit(*p.range_low, p.value) || !same_unit(*p.range_high, p.value)) {
    diags.error(path + ".range", "range is not in the value's unit", p.range_low->text + ", " + p.range_high->text,
                unit_kind(p.value));
    return;
  }
  const double v = p.value.quantity.value;
  if (!(v >= p.range_low->quantity.value && v <= p.range_high->quantity.value))  // NaN is outside
    diags.error(path, "value outside the parameter's range", p.value.text,
                "[" + p.range_low->text + ", " + p.range_high->text + "]");
}

}  // namespace detail

namespace {

using config::Json;
using detail::check_range;
using detail::parse_value;
using detail::same_unit;

std::optional<Kind> parse_kind(const std::string& s) {
  if (s == "fitted") return Kind::Fitted;
  if (s == "assumed") return Kind::Assumed;
  return std::nullopt;
}

/// Reads the fields of one parameter mapping into `p`; `complete` requires every field.
void read_fields(const Json& node, const std::string& path, bool complete, Parameter& p, core::Diagnostics& diags) {
  config::FieldReader r(node, path, diags);
  if (r.has("value")) {
    r.ignore("value");
    if (auto v = parse_value(node.at("value"), path + ".value", diags)) p.value = *v;
  } else {
    diags.error(path + ".value", "missing", {}, "the parameter's value");
  }
  if (complete || r.has("meaning")) p.meaning = r.str("meaning");
  if (complete || r.has("basis")) p.basis = r.str("basis");
  if (complete || r.has("kind")) {
    const std::string k = r.str("kind");
    if (auto kind = parse_kind(k)) p.kind = *kind;
    else if (!k.empty()) diags.error(path + ".kind", "unknown kind", k, "fitted or assumed",
                                     core::did_you_mean(k, {"fitted", "assumed"}));
  }
  if (const Json* range = r.array("range", false)) {
    if (range->size() != 2) {
      diags.error(path + ".range", "a range has two bounds", config::brief(*range), "[low, high]");
    } else {
      p.range_low = parse_value((*range)[0], path + ".range[0]", diags);
      p.range_high = parse_value((*range)[1], path + ".range[1]", diags);
    }
  }
  r.finish();
}

void walk_shipped(const Json& node, const std::string& key, const std::string& file, Params& out,
                  core::Diagnostics& diags) {
  if (!node.is_object()) {
    diags.error(key, "expected a section or a parameter (a mapping with value, meaning, basis, kind)",
                config::brief(node), "a mapping");
    return;
  }
  if (node.contains("value")) {
    Parameter p;
    p.key = key;
    p.source = file;
    read_fields(node, key, true, p, diags);
    p.prior = p.value;
    check_range(p, key, diags);
    out.set(std::move(p));
    return;
  }
  for (const auto& [name, child] : node.items()) walk_shipped(child, key + "." + name, file, out, diags);
}

constexpr const char* kDefaults = "_defaults";

/// A section's `_defaults` fill its sibling sections: a parameter a sibling lacks is the
/// default's (recorded in `inherited`, key → default key), and a sibling's own entry may give only
/// `value` and `basis`, taking meaning, kind and range from the default. A sibling's value that
/// differs from the default's needs its own basis.
void expand_defaults(Json& node, const std::string& key, std::map<std::string, std::string>& inherited,
                     core::Diagnostics& diags) {
  if (!node.is_object() || node.contains("value")) return;
  if (node.contains(kDefaults) && node[kDefaults].is_object()) {
    const Json& defaults = node[kDefaults];
    for (auto& [name, section] : node.items()) {
      if (name == kDefaults || !section.is_object() || section.contains("value")) continue;
      for (const auto& [param, entry] : defaults.items()) {
        const std::string at = key + "." + name + "." + param;
        if (!section.contains(param)) {
          section[param] = entry;
          if (entry.is_object() && entry.contains("basis") && entry["basis"].is_string())
            section[param]["basis"] = "the default of every section here (" + key + "." + kDefaults + "." + param +
                                      "): " + entry["basis"].get<std::string>();
          inherited[at] = key + "." + kDefaults + "." + param;
          continue;
        }
        Json& own = section[param];
        if (!own.is_object() || !entry.is_object()) continue;
        if (own.contains("value") && !own.contains("basis") && own["value"] != entry.value("value", Json()))
          diags.error(at, "a value other than the default's needs its own basis", config::brief(own["value"]),
                      "a basis beside the value");
        for (const auto& [field, v] : entry.items())
          if (!own.contains(field)) own[field] = v;
      }
    }
  }
  for (auto& [name, child] : node.items()) expand_defaults(child, key + "." + name, inherited, diags);
}

/// Names one level below `prefix` ("" → the file stems).
std::vector<std::string> children(const Params& params, const std::string& prefix) {
  std::vector<std::string> names;
  const std::string head = prefix.empty() ? "" : prefix + ".";
  for (const auto& [key, p] : params.all()) {
    if (key.compare(0, head.size(), head) != 0) continue;
    const std::string rest = key.substr(head.size());
    const std::string name = rest.substr(0, rest.find('.'));
    if (names.empty() || names.back() != name) names.push_back(name);
  }
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

/// An override of a `_defaults` parameter reaches the parameters that inherited it.
void propagate_default(const Parameter& d, Params& base) {
  std::vector<Parameter> heirs;
  for (const auto& [k, p] : base.all())
    if (p.inherited_from == d.key) heirs.push_back(p);
  for (auto& p : heirs) {
    p.value = d.value;
    p.source = d.source;
    base.set(std::move(p));
  }
}

void override_parameter(const Json& node, const std::string& key, const std::string& file, Params& base,
                        core::Diagnostics& diags) {
  Parameter p = base.get(key);
  p.inherited_from.clear();  // its own value now
  const Value shipped = p.value;
  if (node.is_object()) {
    read_fields(node, key, false, p, diags);
  } else if (auto v = parse_value(node, key, diags)) {
    p.value = *v;
  }
  if (!same_unit(p.value, shipped)) {
    diags.error(key, "wrong unit: " + unit_kind(p.value), p.value.text,
                unit_kind(shipped) + " like the shipped \"" + shipped.text + "\"");
    return;
  }
  p.source = file;
  check_range(p, key, diags);
  const Parameter set = p;
  base.set(std::move(p));
  if (key.find(std::string(".") + kDefaults + ".") != std::string::npos) propagate_default(set, base);
}

void walk_override(const Json& node, const std::string& prefix, const std::string& file, Params& base,
                   core::Diagnostics& diags) {
  if (!node.is_object()) {
    diags.error(prefix.empty() ? "calibration" : prefix, "expected a section", config::brief(node), "a mapping");
    return;
  }
  const std::vector<std::string> known = children(base, prefix);
  for (const auto& [name, child] : node.items()) {
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    if (base.has(key)) {
      override_parameter(child, key, file, base, diags);
    } else if (std::find(known.begin(), known.end(), name) != known.end()) {
      walk_override(child, key, file, base, diags);
    } else {
      diags.error(key, "unknown calibration key", name, "one of: " + core::join(known),
                  core::did_you_mean(name, known));
    }
  }
}

}  // namespace

std::string kind_name(Kind k) { return k == Kind::Fitted ? "fitted" : "assumed"; }

std::string as_stated(const Parameter& p) {
  std::string out = p.key + ", " + kind_name(p.kind);
  if (p.range_low && p.range_high) out += ", range " + p.range_low->text + ".." + p.range_high->text;
  return out;
}

std::string unit_kind(const Value& v) {
  if (v.is_flag) return "a flag";
  const auto& q = v.quantity;
  return core::dimension_name(q.t, q.b, q.f, q.d, q.e);
}

namespace {
thread_local ReadLog* active_read_log = nullptr;
}  // namespace

ReadLog::ReadLog() : outer_(active_read_log) { active_read_log = this; }
ReadLog::~ReadLog() { active_read_log = outer_; }

void ReadLog::note(const std::string& key) {
  if (active_read_log) active_read_log->keys_.insert(key);
}

const Parameter& Params::get(const std::string& key) const {
  ReadLog::note(key);
  auto it = by_key_.find(key);
  if (it == by_key_.end()) {
    const std::string file = key.substr(0, key.find('.'));
    core::fail(key, "calibration parameter missing", {}, "an entry in data/calibration/" + file + ".yaml");
  }
  return it->second;
}

const Parameter& Params::get_dim(const std::string& key, int t, int b, int f, int d, int e) const {
  const Parameter& p = get(key);
  const auto& q = p.value.quantity;
  if (p.value.is_flag || q.t != t || q.b != b || q.f != f || q.d != d || q.e != e) {
    core::fail(key, "wrong unit: " + unit_kind(p.value) + " (from " + p.source + ")", p.value.text,
               core::unit_example(t, b, f, d, e));
  }
  return p;
}

double Params::number(const std::string& key) const { return get_dim(key, 0, 0, 0, 0, 0).value.quantity.value; }

bool Params::flag(const std::string& key) const {
  const Parameter& p = get(key);
  if (!p.value.is_flag) core::fail(key, "not a flag (from " + p.source + ")", p.value.text, "true or false");
  return p.value.quantity.value != 0.0;
}

core::Seconds Params::seconds(const std::string& key) const {
  return core::Seconds::from_base(get_dim(key, 1, 0, 0, 0, 0).value.quantity.value);
}

core::Bytes Params::bytes(const std::string& key) const {
  return core::Bytes::from_base(get_dim(key, 0, 1, 0, 0, 0).value.quantity.value);
}

core::ByteRate Params::byte_rate(const std::string& key) const {
  return core::ByteRate::from_base(get_dim(key, -1, 1, 0, 0, 0).value.quantity.value);
}

core::FlopRate Params::flop_rate(const std::string& key) const {
  return core::FlopRate::from_base(get_dim(key, -1, 0, 1, 0, 0).value.quantity.value);
}

core::JoulesPerByte Params::joules_per_byte(const std::string& key) const {
  return core::JoulesPerByte::from_base(get_dim(key, 0, -1, 0, 0, 1).value.quantity.value);
}

std::vector<std::string> Params::sections(const std::string& prefix) const {
  std::vector<std::string> out;
  for (const auto& name : children(*this, prefix))
    if (!has(prefix + "." + name) && name != kDefaults) out.push_back(name);
  return out;
}

Params load_directory(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) core::fail("calibration", "no calibration directory", dir, "data/calibration/");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  Params out;
  for (const auto& f : files) {
    core::Diagnostics diags;
    Json doc = config::load_yaml_file(f.string());
    std::map<std::string, std::string> inherited;
    expand_defaults(doc, f.stem().string(), inherited, diags);
    walk_shipped(doc, f.stem().string(), f.string(), out, diags);
    diags.set_file(f.string());
    diags.throw_if_any();
    for (const auto& [k, from] : inherited) {
      if (!out.has(k)) continue;
      Parameter p = out.get(k);
      p.inherited_from = from;
      out.set(std::move(p));
    }
  }
  detail::load_stacks(dir + "/stacks", out);
  return out;
}

std::string shipped_fit_file(const std::string& data_dir) { return data_dir + "/calibration/fitted/public.yaml"; }

Params load_shipped(const std::string& data_dir) {
  Params params = load_directory(data_dir + "/calibration");
  const std::string fit = shipped_fit_file(data_dir);
  if (std::filesystem::exists(fit)) apply_override(params, fit);
  return params;
}

void apply_override(Params& base, const std::string& path) {
  core::Diagnostics diags;
  walk_override(config::load_document(path), "", path, base, diags);
  diags.set_file(path);
  diags.throw_if_any();
}

}  // namespace xpusim::calib
