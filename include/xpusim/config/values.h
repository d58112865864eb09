#pragma once
// One verdict per kind of input value, whatever its source: a command-line flag, a key of a
// YAML/JSON scenario or a cell of a validation CSV. Each check records at most one diagnostic
// under the caller's path ("--tp", "plan.tp", "tp" with the CSV line) with the same message,
// value text and expectation, so the same bad value reads the same everywhere (docs/errors.md).
//
// Zero never silently means "default": an input that is left out is unset (std::nullopt), and
// an explicit 0 is judged like any other value of its kind.

#include <optional>
#include <string>

#include "xpusim/core/diagnostics.h"
#include "xpusim/core/units.h"

namespace xpusim::config {

/// The largest count accepted for a field, from config/limits.h by the field's name (the last
/// component of `path`: "--max-num-seqs", "plan.tp", "tp" of a CSV row): chips and parallel
/// degrees kChips, batches kBatch, lengths and tokens kSequence, requests kRequests; another
/// name gets kBatch.
long long count_limit(const std::string& path);
/// A count that must be at least 1 and at most count_limit(path) (chips, parallel degrees, batch sizes, lengths, requests).
void check_positive_count(core::Diagnostics& d, const std::string& path, long long value);
/// A count that may be 0 where 0 is meaningful (speculative draft tokens: 0 = off).
void check_non_negative_count(core::Diagnostics& d, const std::string& path, long long value);
/// A finite number > 0 (arrival rates, token budgets).
void check_positive_number(core::Diagnostics& d, const std::string& path, double value);
/// A finite probability-like number in [0, 1) (per-token acceptance).
void check_fraction(core::Diagnostics& d, const std::string& path, double value);
/// A finite number > 0 and at most `limit` (core/limits.h), when given.
void check_positive_number_at_most(core::Diagnostics& d, const std::string& path, const std::optional<double>& value,
                                   double limit);
/// A duration finite and > 0 (timeouts, SLOs); `text` is the value as written.
void check_positive_duration(core::Diagnostics& d, const std::string& path, core::Seconds value,
                             const std::string& text);
/// A duration written with its unit ("60 s", "200 ms"), checked as above. Returns nullopt (with
/// a diagnostic, worded as config::FieldReader::quantity words it) when the text is not one.
std::optional<core::Seconds> parse_positive_duration(core::Diagnostics& d, const std::string& path,
                                                     const std::string& text);

/// The checks on optional inputs: an unset value is not judged.
void check_positive_count(core::Diagnostics& d, const std::string& path, const std::optional<long long>& value);
void check_non_negative_count(core::Diagnostics& d, const std::string& path,
                              const std::optional<long long>& value);
void check_positive_number(core::Diagnostics& d, const std::string& path, const std::optional<double>& value);
void check_fraction(core::Diagnostics& d, const std::string& path, const std::optional<double>& value);

}  // namespace xpusim::config
