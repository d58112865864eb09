#pragma once
// The hardware catalog: data/catalog/chips/*.json and data/catalog/systems/*.json.

#include <map>
#include <string>
#include <vector>

#include "xpusim/core/registry.h"
#include "xpusim/hw/spec.h"

namespace xpusim::hw {

class Catalog {
 public:
  /// Loads every chip and system file under `dir` (data/catalog). Every problem in every file
  /// is collected; InputError lists them all.
  static Catalog load(const std::string& dir);

  /// The system with this id; an unknown id throws InputError with the closest match.
  const SystemSpec& system(const std::string& id, const std::string& path = "system") const;
  const ChipSpec& chip(const std::string& id, const std::string& path = "chip") const;
  bool has_system(const std::string& id) const { return systems_.count(id) > 0; }
  std::vector<std::string> system_ids() const;
  std::vector<std::string> chip_ids() const;

  void add_chip(ChipSpec c);
  void add_system(SystemSpec s);  ///< resolves s.chip from chip_id
  /// Replaces a system by `s` as given, its chip copy included (a user's overrides of one
  /// system's estimates: --price, --tdp); the chip entry and other systems are unchanged.
  void replace_system(SystemSpec s);

 private:
  std::map<std::string, ChipSpec> chips_;
  std::map<std::string, SystemSpec> systems_;
};

/// Parses one chip file / system file (already loaded JSON text) — exposed for tests.
ChipSpec parse_chip(const std::string& path);
SystemSpec parse_system(const std::string& path);

}  // namespace xpusim::hw
