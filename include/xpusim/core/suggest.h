#pragma once
// "Did you mean": the closest name by edit distance, for unknown ids and keys.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xpusim::core {

/// Levenshtein distance (case-insensitive).
int edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `name` when it is close enough to be a plausible typo.
std::optional<std::string> closest_match(std::string_view name,
                                         const std::vector<std::string>& candidates);

/// "did you mean 'x'?" or an empty string.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

/// "a, b, c" (sorted as given).
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

}  // namespace xpusim::core
