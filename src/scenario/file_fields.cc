#include "file_fields.h"

#include <nlohmann/json.hpp>
#include <filesystem>
#include <vector>

#include "xpusim/config/values.h"
#include "xpusim/core/file_read.h"

namespace xpusim::scenario {

namespace fs = std::filesystem;

void resolve_beside(const std::string& scenario_path, std::optional<std::string>& ref, bool always_a_path) {
  if (!ref || scenario_path.empty()) return;
  const bool a_path = always_a_path || ref->find('/') != std::string::npos || fs::path(*ref).extension() == ".json";
  if (!a_path) return;
  if (std::string beside = core::file_beside(scenario_path, *ref); !beside.empty()) *ref = std::move(beside);
}

config::Json load_scenario_document(const std::string& path) {
  config::Json doc;
  try {
    doc = config::load_document(path);
  } catch (const core::InputError& e) {
    std::vector<core::Diagnostic> ds = e.diagnostics();
    for (auto& x : ds)
      if (x.file.empty() && x.path.empty()) x.path = "--scenario";
    throw core::InputError(ds);
  }
  if (!doc.is_object()) {
    core::Diagnostics d;
    d.error("", "a scenario must be a mapping of keys", doc.is_null() ? "an empty document" : config::brief(doc),
            "keys such as system, model, chips, plan, workload, description");
    d.set_file(path);
    d.throw_if_any();
  }
  return doc;
}

// An absent key is still a known key: it is listed in "unknown key" diagnostics and matched by
// their "did you mean".
bool present(config::FieldReader& r, const std::string& key) {
  if (r.has(key)) return true;
  r.ignore(key);
  return false;
}

void read_text(config::FieldReader& r, const std::string& key, std::optional<std::string>& out) {
  if (present(r, key)) out = r.str(key);
}

// Reads with `read`, then judges with `check` only when the read itself found nothing wrong
// (a wrong type is one diagnostic, not two).
template <typename T, typename Read, typename Check>
void read_checked(config::FieldReader& r, const std::string& key, std::optional<T>& out, Read read, Check check) {
  if (!present(r, key)) return;
  const std::size_t before = r.diagnostics().items().size();
  const T value = read();
  if (r.diagnostics().items().size() != before) return;
  out = value;
  check(r.diagnostics(), r.path_of(key), value);
}

void read_count(config::FieldReader& r, const std::string& key, std::optional<long long>& out) {
  read_checked(r, key, out, [&] { return r.integer(key); },
               [](core::Diagnostics& d, const std::string& p, long long v) { config::check_positive_count(d, p, v); });
}

void read_non_negative_count(config::FieldReader& r, const std::string& key, std::optional<long long>& out) {
  read_checked(r, key, out, [&] { return r.integer(key); }, [](core::Diagnostics& d, const std::string& p, long long v) {
    config::check_non_negative_count(d, p, v);
  });
}

void read_positive_number(config::FieldReader& r, const std::string& key, std::optional<double>& out) {
  read_checked(r, key, out, [&] { return r.number(key); },
               [](core::Diagnostics& d, const std::string& p, double v) { config::check_positive_number(d, p, v); });
}

void read_fraction(config::FieldReader& r, const std::string& key, std::optional<double>& out) {
  read_checked(r, key, out, [&] { return r.number(key); },
               [](core::Diagnostics& d, const std::string& p, double v) { config::check_fraction(d, p, v); });
}

void read_duration(config::FieldReader& r, const std::string& key, std::optional<core::Seconds>& out) {
  read_checked(r, key, out, [&] { return r.quantity<core::Seconds>(key, false); },
               [&](core::Diagnostics& d, const std::string& p, core::Seconds v) {
                 config::check_positive_duration(d, p, v, r.str(key));
               });
}

void read_flag(config::FieldReader& r, const std::string& key, std::optional<bool>& out) {
  if (present(r, key)) out = r.boolean_or(key, false);
}

void moved_to_workload(config::FieldReader& r, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    if (!r.has(key)) continue;
    r.ignore(key);
    r.diagnostics().error(r.path_of(key), "belongs under workload:", "", std::string("workload.") + key);
  }
}

}  // namespace xpusim::scenario
