#include "xpusim/core/suggest.h"

#include <algorithm>
#include <cctype>

namespace xpusim::core {

int edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest_match(std::string_view name,
                                         const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  int best_d = 1 << 30;
  for (const auto& c : candidates) {
    int d = edit_distance(name, c);
    // A candidate that contains the name (or the reverse) is a strong hint too.
    const bool contains = !name.empty() && (c.find(name) != std::string::npos ||
                                            std::string_view(name).find(c) != std::string::npos);
    if (contains) d = std::min(d, 1 + static_cast<int>(c.size() > name.size()
                                                           ? (c.size() - name.size()) / 4
                                                           : 0));
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  const int limit = std::max(2, static_cast<int>(name.size()) / 2);
  if (best && best_d <= limit) return best;
  return std::nullopt;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  auto m = closest_match(name, candidates);
  return m ? "did you mean '" + *m + "'?" : std::string();
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += sep;
    s += items[i];
  }
  return s;
}

}  // namespace xpusim::core
