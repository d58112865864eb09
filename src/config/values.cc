#include "xpusim/config/values.h"

#include <cmath>
#include <cstdint>
#include <utility>

#include "xpusim/core/limits.h"
#include "xpusim/core/format.h"
#include "xpusim/core/unit_parse.h"

namespace xpusim::config {

namespace {

std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return core::fmt_num(v, 6);
}

/// "--max-num-seqs", "plan.tp", "row.in_len" → "max_num_seqs", "tp", "in_len".
std::string field_name(const std::string& path) {
  std::string name = path.substr(path.find_last_of('.') + 1);
  name.erase(0, name.find_first_not_of('-'));
  for (char& c : name) c = c == '-' ? '_' : c;
  return name;
}

}  // namespace

long long count_limit(const std::string& path) {
  namespace limits = core::limits;
  static const std::pair<const char*, long long> kTable[] = {
      {"chips", limits::kChips},           {"tp", limits::kChips},
      {"pp", limits::kChips},              {"dp", limits::kChips},
      {"cp", limits::kChips},              {"ep", limits::kChips},
      {"vpp", limits::kChips},             {"prefill_chips", limits::kChips},
      {"spares", limits::kChips},          {"micro_batch", limits::kBatch},
      {"global_batch", limits::kBatch},    {"max_num_seqs", limits::kBatch},
      {"static_batch", limits::kBatch},    {"concurrency", limits::kBatch},
      {"seq_len", limits::kSequence},      {"in_len", limits::kSequence},
      {"out_len", limits::kSequence},      {"max_batched_tokens", limits::kSequence},
      {"block_size", limits::kSequence},   {"draft_len", limits::kSequence},
      {"compiled_seq_len", limits::kSequence},
      {"requests", limits::kRequests},     {"runs", limits::kRequests},
      {"seq", limits::kSequence},         {"context", limits::kSequence},
      {"batch", limits::kBatch},           {"global_batch_seqs", limits::kBatch},
      {"batch_or_concurrency", limits::kBatch},           {"seed", INT64_MAX}};
  const std::string name = field_name(path);
  for (const auto& [key, max] : kTable)
    if (name == key) return max;
  return limits::kBatch;
}

void check_positive_count(core::Diagnostics& d, const std::string& path, long long value) {
  if (value < 1)
    d.error(path, "must be a positive integer", std::to_string(value), "an integer ≥ 1 (leave it out for the default)");
  else if (value > count_limit(path))
    d.error(path, "exceeds the limit", std::to_string(value), "at most " + std::to_string(count_limit(path)));
}

void check_non_negative_count(core::Diagnostics& d, const std::string& path, long long value) {
  if (value < 0) d.error(path, "must not be negative", std::to_string(value), "an integer ≥ 0");
  else if (value > count_limit(path))
    d.error(path, "exceeds the limit", std::to_string(value), "at most " + std::to_string(count_limit(path)));
}

void check_positive_number(core::Diagnostics& d, const std::string& path, double value) {
  if (!std::isfinite(value) || !(value > 0))
    d.error(path, "must be a finite positive number", number_text(value), "a number > 0");
}

void check_positive_number_at_most(core::Diagnostics& d, const std::string& path, const std::optional<double>& value,
                                   double limit) {
  if (!value) return;
  if (!std::isfinite(*value) || !(*value > 0) || *value > limit)
    d.error(path, "must be a finite positive number within the limit", number_text(*value),
            "a number > 0 and at most " + number_text(limit) + " (docs/errors.md, \"Limits\")");
}

void check_fraction(core::Diagnostics& d, const std::string& path, double value) {
  if (!std::isfinite(value) || value < 0 || value >= 1)
    d.error(path, "must be a fraction in [0, 1)", number_text(value), "a number ≥ 0 and < 1, e.g. 0.7");
}

void check_positive_duration(core::Diagnostics& d, const std::string& path, core::Seconds value,
                             const std::string& text) {
  if (!std::isfinite(value.base()) || !(value.base() > 0))
    d.error(path, "must be a finite positive duration", text, core::UnitExample<core::Seconds>::get());
}

std::optional<core::Seconds> parse_positive_duration(core::Diagnostics& d, const std::string& path,
                                                     const std::string& text) {
  auto r = core::parse_quantity<core::Seconds>(text);
  if (!r) {
    d.error(path, r.error(), text, core::UnitExample<core::Seconds>::get());
    return std::nullopt;
  }
  const std::size_t before = d.items().size();
  check_positive_duration(d, path, *r, text);
  if (d.items().size() != before) return std::nullopt;
  return *r;
}

void check_positive_count(core::Diagnostics& d, const std::string& path, const std::optional<long long>& value) {
  if (value) check_positive_count(d, path, *value);
}
void check_non_negative_count(core::Diagnostics& d, const std::string& path,
                              const std::optional<long long>& value) {
  if (value) check_non_negative_count(d, path, *value);
}
void check_positive_number(core::Diagnostics& d, const std::string& path, const std::optional<double>& value) {
  if (value) check_positive_number(d, path, *value);
}
void check_fraction(core::Diagnostics& d, const std::string& path, const std::optional<double>& value) {
  if (value) check_fraction(d, path, *value);
}

}  // namespace xpusim::config
