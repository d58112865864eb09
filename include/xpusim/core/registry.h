#pragma once
// Explicit registries for extension points (topologies, collective algorithms, chips...).
// Filled by explicit calls; an unknown name lists the valid ones and the closest match.

#include <map>
#include <string>
#include <vector>

#include "xpusim/core/diagnostics.h"
#include "xpusim/core/suggest.h"

namespace xpusim::core {

template <typename T>
class Registry {
 public:
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  void add(const std::string& name, std::string description, T value) {
    entries_.insert_or_assign(name, Entry{std::move(description), std::move(value)});
  }
  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  /// The entry for `name`; an unknown name throws InputError naming the field `path`.
  const T& get(const std::string& name, const std::string& path) const {
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      fail(path, "unknown " + kind_ + " '" + name + "'", name, "one of: " + join(names()),
           did_you_mean(name, names()));
    }
    return it->second.value;
  }
  const std::string& description(const std::string& name) const {
    return entries_.at(name).description;
  }
  /// Names in sorted order (deterministic output).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : entries_) out.push_back(k);
    return out;
  }
  const std::string& kind() const { return kind_; }

 private:
  struct Entry {
    std::string description;
    T value;
  };
  std::string kind_;
  std::map<std::string, Entry> entries_;
};

}  // namespace xpusim::core
