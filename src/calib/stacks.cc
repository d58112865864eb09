// Versioned software stacks: reading data/calibration/stacks/*.yaml and choosing a range.
#include <nlohmann/json.hpp>
#include <filesystem>

#include "values.h"
#include "xpusim/config/document.h"
#include "xpusim/core/suggest.h"

namespace xpusim::calib {

const std::vector<std::string>& stack_effect_topics() {
  static const std::vector<std::string> topics = {"overlap_scheduler", "cuda_graphs", "chunked_prefill", "moe_kernels",
                                                  "attention",         "speculative_decoding", "fp4"};
  return topics;
}

const StackRange* Stack::range_of(const core::Version& v) const {
  for (const auto& r : ranges)
    if (r.versions.contains(v)) return &r;
  return nullptr;
}

const StackRange& Stack::default_range() const {
  for (const auto& r : ranges)
    if (r.versions.text == default_versions) return r;
  XS_CHECK(false, "stack without its default range (checked at load)");
  return ranges.front();
}

std::string Stack::known_ranges() const {
  std::string out;
  for (const auto& r : ranges) out += (out.empty() ? "" : "; ") + r.versions.text;
  return out;
}

const Stack* Params::stack(const std::string& key) const {
  const auto it = stacks_.find(key);
  return it == stacks_.end() ? nullptr : &it->second;
}

StackChoice choose_stack(const Stack& stack, const std::string& version, const std::string& field) {
  StackChoice c{&stack, &stack.default_range(), ""};
  if (version.empty()) return c;
  auto v = core::parse_version(version);
  if (!v) core::fail(field, stack.name + " version: " + v.error(), version, "a PEP 440 version");
  c.range = stack.range_of(*v);
  if (!c.range)
    core::fail(field, "no " + stack.name + " version range holds " + v->text, version,
               "a version in one of " + stack.name + "'s known ranges: " + stack.known_ranges() +
                   " (data/calibration/stacks/)");
  c.version = v->text;
  return c;
}

const Value& stack_value(const Params& params, const StackChoice& choice, const std::string& name) {
  XS_CHECK(choice.stack != nullptr && choice.range != nullptr, "stack_value: no stack chosen");
  const auto it = choice.range->settings.find(name);
  if (it != choice.range->settings.end()) return it->second.value;
  return params.get(choice.stack->parameter_section + "." + name).value;
}

namespace detail {

namespace {

using config::Json;

void read_effects(config::FieldReader& r, const std::string& at, StackRange& range, core::Diagnostics& diags) {
  const Json* effects = r.object("effects");
  if (!effects) return;
  config::FieldReader e(*effects, at + ".effects", diags);
  for (const auto& topic : stack_effect_topics()) range.effects.emplace_back(topic, e.str(topic));
  e.finish();
}

/// A setting names a parameter of the stack's section and holds a value in its unit and range.
void read_settings(config::FieldReader& r, const std::string& at, const Stack& stack, const Params& params,
                   StackRange& range, core::Diagnostics& diags) {
  const Json* settings = r.object("settings", false);
  if (!settings) return;
  std::vector<std::string> names;
  for (const auto& [key, p] : params.all())
    if (key.rfind(stack.parameter_section + ".", 0) == 0) names.push_back(key.substr(stack.parameter_section.size() + 1));
  for (const auto& [name, node] : settings->items()) {
    const std::string path = at + ".settings." + name;
    const std::string key = stack.parameter_section + "." + name;
    if (!params.has(key)) {
      diags.error(path, "not a parameter of " + stack.parameter_section, name, core::join(names),
                  core::did_you_mean(name, names));
      continue;
    }
    config::FieldReader s(node, path, diags);
    Parameter p = params.get(key);
    if (s.has("value")) {
      s.ignore("value");
      if (auto v = parse_value(node.at("value"), path + ".value", diags)) p.value = *v;
    } else {
      diags.error(path + ".value", "missing", {}, "the range's value");
    }
    p.basis = s.str("basis");
    s.finish();
    if (!same_unit(p.value, params.get(key).value))
      diags.error(path, "not in the unit of " + key, p.value.text, unit_kind(params.get(key).value));
    else
      check_range(p, path, diags);
    range.settings[name] = std::move(p);
  }
}

StackRange read_range(const Json& node, const std::string& at, const Stack& stack, const Params& params,
                      core::Diagnostics& diags) {
  StackRange range;
  config::FieldReader r(node, at, diags);
  const std::string text = r.str("versions");
  auto parsed = core::parse_version_range(text);
  if (parsed) range.versions = *parsed;
  else diags.error(at + ".versions", parsed.error(), text, "a range such as \">=1.0,<2\"");
  range.validated = r.boolean_or("validated", false);
  range.validation = r.str("validation");
  read_effects(r, at, range, diags);
  read_settings(r, at, stack, params, range, diags);
  r.finish();
  return range;
}

/// Ranges of a stack must not overlap: a version picks one. Checked at each range's bounds.
void check_disjoint(const Stack& stack, const std::string& at, core::Diagnostics& diags) {
  for (size_t i = 0; i < stack.ranges.size(); ++i)
    for (const auto& clause : stack.ranges[i].versions.clauses)
      for (size_t j = 0; j < stack.ranges.size(); ++j)
        if (i != j && stack.ranges[i].versions.contains(clause.version) &&
            stack.ranges[j].versions.contains(clause.version))
          diags.error(at + ".ranges", "ranges overlap", stack.ranges[i].versions.text + " and " +
                      stack.ranges[j].versions.text + " both hold " + clause.version.text,
                      "disjoint ranges, one per behaviour");
}

Stack read_stack(const std::string& name, const Json& node, const std::string& section, const Params& params,
                 core::Diagnostics& diags) {
  Stack stack;
  stack.name = name;
  stack.parameter_section = section + "." + name;
  const std::string at = "stacks." + name;
  config::FieldReader r(node, at, diags);
  stack.default_versions = r.str("default");
  if (const Json* ranges = r.array("ranges"))
    for (size_t i = 0; i < ranges->size(); ++i)
      stack.ranges.push_back(read_range((*ranges)[i], at + ".ranges[" + std::to_string(i) + "]", stack, params, diags));
  r.finish();
  check_disjoint(stack, at, diags);
  bool has_default = false;
  for (const auto& range : stack.ranges) has_default = has_default || range.versions.text == stack.default_versions;
  if (!has_default)
    diags.error(at + ".default", "not one of the stack's ranges", stack.default_versions, stack.known_ranges());
  return stack;
}

}  // namespace

void load_stacks(const std::string& dir, Params& params) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) return;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    core::Diagnostics diags;
    const Json doc = config::load_yaml_file(f.string());
    config::FieldReader r(doc, "", diags);
    const std::string section = r.str("parameters");
    if (const Json* stacks = r.object("stacks"))
      for (const auto& [name, node] : stacks->items())
        params.set_stack(f.stem().string() + "." + name, read_stack(name, node, section, params, diags));
    r.finish();
    diags.set_file(f.string());
    diags.throw_if_any();
  }
}

}  // namespace detail

}  // namespace xpusim::calib
