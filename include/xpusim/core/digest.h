#pragma once
// Content digests for provenance: FNV-1a 64 over file names and contents, so that a JSON
// document names the exact catalog and calibration it was computed from.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xpusim::core {

/// FNV-1a 64 of `data`, continuing from `state` (the offset basis by default).
std::uint64_t fnv1a64(std::string_view data, std::uint64_t state = 0xcbf29ce484222325ULL);

/// FNV-1a 64 over every regular file under each root (a directory, searched recursively, or a
/// single file): for each root in the given order, its files sorted by their path relative to
/// the root, each hashed as `relative path, '\0', contents, '\0'`. Printed "fnv1a64:" + 16 hex
/// digits. A root that does not exist hashes as its name alone.
std::string files_digest(const std::vector<std::string>& roots);

}  // namespace xpusim::core
