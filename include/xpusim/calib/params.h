#pragma once
// Fitted and assumed parameters as data. Every number of the models that is not physics (an
// efficiency, an overhead, an overlap share, an energy per bit…) lives in
// data/calibration/<layer>.yaml with its unit, meaning, basis and kind, and reaches the code as a
// Params value passed explicitly (compute::calibration_for, engine::framework_params,
// serve::framework_profile, net::network_params). Schema and override rules: docs/calibration.md.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "xpusim/core/version.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/unit_parse.h"
#include "xpusim/core/units.h"

namespace xpusim::calib {

/// How a value was obtained: fitted on measurements, or assumed from a paper, a vendor
/// default or engineering judgement.
enum class Kind { Fitted, Assumed };
std::string kind_name(Kind k);

/// A value as written ("0.75", "4 us", "true") with its parsed form: base units and dimension
/// for quantities and plain numbers, 0/1 for flags.
struct Value {
  std::string text;
  core::ParsedQuantity quantity;
  bool is_flag = false;
};

struct Parameter {
  std::string key;      ///< "<file stem>.<section>….<name>", e.g. "compute.nvidia-hopper.gemm_efficiency"
  Value value;
  /// The documented value of the shipped file, before any fit or override: the centre of the
  /// fit's prior (docs/calibration.md). Overrides change `value`, never `prior`.
  Value prior;
  std::string meaning;  ///< what the value stands for
  std::string basis;    ///< paper, measurement, or "fitted on rows …"
  Kind kind = Kind::Assumed;
  std::optional<Value> range_low, range_high;  ///< plausible range, enforced on overrides
  std::string source;   ///< the file the value came from (shipped file or override)
  /// Taken from a section's `_defaults` (this key, e.g. "serving.frameworks._defaults.block_size"):
  /// an override of that key changes this value too, until this key is overridden itself.
  std::string inherited_from;
};

/// "a plain number", "a time", "a flag"… for messages and `calibration show`.
std::string unit_kind(const Value& v);

/// How an output names the parameter an answer assumed: "<key>, assumed, range <low>..<high>"
/// (the kind, and the range when the parameter has one).
std::string as_stated(const Parameter& p);

// Versioned software stacks as data (data/calibration/stacks/<layer>.yaml): for each stack (a
// serving framework), the version ranges that behave alike, what each range does (its
// documented behaviour, topic by topic), the settings in which it differs from the stack's
// parameters (defaults plus overrides: a range holds only what changes), whether measurements
// stand behind it, and the range a run that states no version gets. docs/calibration.md,
// "Software stacks".

/// The topics every range states, in this order (issue 50's version-effects table).
const std::vector<std::string>& stack_effect_topics();

struct StackRange {
  core::VersionRange versions;
  /// Measurements in the shipped validation files were taken on this range.
  bool validated = false;
  std::string validation;  ///< which measurements (or why none)
  std::vector<std::pair<std::string, std::string>> effects;  ///< topic → what the range does
  /// Parameter name (under the stack's parameter section) → the range's value (its basis in
  /// Parameter::basis; key, meaning, kind and range are the stack parameter's).
  std::map<std::string, Parameter> settings;
};

struct Stack {
  std::string name;            ///< "trtllm"
  std::string parameter_section;  ///< "serving.frameworks.trtllm": what `settings` override
  std::string default_versions;   ///< the text of the range a run without a version gets
  std::vector<StackRange> ranges;
  const StackRange* range_of(const core::Version& v) const;
  const StackRange& default_range() const;
  /// "<0.7; >=0.7,<1.0rc0; >=1.0rc0,<2" for messages.
  std::string known_ranges() const;
};

/// A run's stack: the version it states (empty: none) and the range that applies.
struct StackChoice {
  const Stack* stack = nullptr;
  const StackRange* range = nullptr;
  std::string version;  ///< as stated, normalised ("1.0.0rc3"); empty when unstated
};

/// While alive, records on the constructing thread every key a Params is asked for: the
/// parameters one prediction reads. The fit's sensitivity pass perturbs a key only on the rows
/// that read it (validation/fit.cc). Nests: an inner log hides the outer one until it ends.
class ReadLog {
 public:
  ReadLog();
  ~ReadLog();
  ReadLog(const ReadLog&) = delete;
  ReadLog& operator=(const ReadLog&) = delete;
  const std::set<std::string>& keys() const { return keys_; }
  /// Records `key` in the thread's active log, if any (called by Params::get).
  static void note(const std::string& key);

 private:
  std::set<std::string> keys_;
  ReadLog* outer_ = nullptr;
};

/// The set of parameters, keyed by dotted key (ordered: output is deterministic).
class Params {
 public:
  bool has(const std::string& key) const { return by_key_.count(key) > 0; }
  /// InputError naming the key when it is missing (the shipped data lacks a required parameter).
  const Parameter& get(const std::string& key) const;
  /// A plain number (fraction, count, ratio); InputError naming key, value and expected unit
  /// when the data carries a unit or a flag.
  double number(const std::string& key) const;
  bool flag(const std::string& key) const;
  core::Seconds seconds(const std::string& key) const;
  core::Bytes bytes(const std::string& key) const;
  core::ByteRate byte_rate(const std::string& key) const;
  core::FlopRate flop_rate(const std::string& key) const;
  core::JoulesPerByte joules_per_byte(const std::string& key) const;
  /// Sub-section names directly under `prefix` ("training.frameworks" → "deepseek", …); a
  /// `_defaults` section is not one of them.
  std::vector<std::string> sections(const std::string& prefix) const;
  const std::map<std::string, Parameter>& all() const { return by_key_; }
  void set(Parameter p) { by_key_[p.key] = std::move(p); }

  /// The versioned stack "<layer>.<name>" ("serving.trtllm"), or null when it has no table.
  const Stack* stack(const std::string& key) const;
  const std::map<std::string, Stack>& stacks() const { return stacks_; }
  void set_stack(const std::string& key, Stack s) { stacks_[key] = std::move(s); }

 private:
  const Parameter& get_dim(const std::string& key, int t, int b, int f, int d, int e) const;
  std::map<std::string, Parameter> by_key_;
  std::map<std::string, Stack> stacks_;
};

/// The stack's range for `version` ("1.0.0rc3"; empty: the default range). A version that is not
/// PEP 440, or that no range holds, is an InputError on `field` naming the known ranges.
StackChoice choose_stack(const Stack& stack, const std::string& version, const std::string& field);
/// The value of parameter `name` of the stack's section under the chosen range: the range's
/// setting when it has one, else the parameter's (its key: section + "." + name).
const Value& stack_value(const Params& params, const StackChoice& choice, const std::string& name);

/// Loads every *.yaml file in `dir` (data/calibration): each file's stem is the first component
/// of its keys; nested mappings are sections; a mapping with `value` is a parameter with the
/// required fields value, meaning, basis, kind (fitted|assumed) and optional range [low, high].
/// Unknown fields, malformed values and values outside their range are InputErrors. Then the
/// version tables of dir/stacks/*.yaml (stacks.h), whose settings must name parameters of the
/// stack's section, in their unit and range.
Params load_directory(const std::string& dir);

/// The shipped calibration: load_directory(data_dir + "/calibration"), then the fitted values
/// that `xpusim calibrate` produced from the project's copy of the public file
/// (shipped_fit_file(data_dir)), when that file exists.
Params load_shipped(const std::string& data_dir);

/// data_dir + "/calibration/fitted/public.yaml".
std::string shipped_fit_file(const std::string& data_dir);

/// Overrides any subset of `base` from one file whose top-level keys are the shipped files'
/// stems (compute, training, serving, network, …) and whose nesting is theirs. A parameter is
/// either a mapping with `value` (and optionally the other fields) or a bare value. Unknown keys
/// (with the closest known key), a unit of another kind than the shipped value's, and values
/// outside the range are InputErrors naming the file and key.
void apply_override(Params& base, const std::string& path);

}  // namespace xpusim::calib
