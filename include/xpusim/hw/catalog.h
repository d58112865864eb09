#pragma once
// The hardware catalog: data/catalog/chips/*.json and data/catalog/systems/*.json.

#include <map>
#include <string>
#include <vector>

#include "xpusim/core/diagnostics.h"
#include "xpusim/core/registry.h"
#include "xpusim/hw/spec.h"

namespace xpusim::hw {

/// A catalog entry that came from a user's directory (--catalog-dir), not the shipped one.
struct UserEntry {
  std::string kind;       ///< "chip" or "system"
  std::string id;
  std::string file;       ///< the file it was read from
  bool replaces_shipped;  ///< true: it overrides a shipped entry of the same id
};

class Catalog {
 public:
  /// Loads every chip and system file under `dir` (data/catalog). Every problem in every file
  /// is collected; InputError lists them all.
  static Catalog load(const std::string& dir);

  /// The shipped catalog `shipped_dir` with the user's directories layered over it, in order.
  /// A user directory holds `chips/*.json` and/or `systems/*.json` in the shipped schema
  /// (docs/catalog.md); an entry whose id exists already replaces it (a shipped system whose
  /// chip a user replaces uses the user's chip), a new id is added. Every problem in every file
  /// is collected; InputError lists them all.
  static Catalog load(const std::string& shipped_dir, const std::vector<std::string>& user_dirs);

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

  /// The entries read from user directories, in load order (empty for the shipped catalog).
  const std::vector<UserEntry>& user_entries() const { return user_entries_; }

 private:
  struct Layer;
  void load_chips(const Layer& layer, core::Diagnostics& diags);
  void load_systems(const Layer& layer, core::Diagnostics& diags);

  std::map<std::string, ChipSpec> chips_;
  std::map<std::string, SystemSpec> systems_;
  std::vector<UserEntry> user_entries_;
};

/// Parses one chip file / system file (already loaded JSON text) — exposed for tests.
ChipSpec parse_chip(const std::string& path);
SystemSpec parse_system(const std::string& path);

}  // namespace xpusim::hw
