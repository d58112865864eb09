#include "xpusim/core/digest.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace xpusim::core {

namespace fs = std::filesystem;

std::uint64_t fnv1a64(std::string_view data, std::uint64_t state) {
  constexpr std::uint64_t kPrime = 0x100000001b3ULL;
  for (unsigned char c : data) {
    state ^= c;
    state *= kPrime;
  }
  return state;
}

namespace {

std::string file_contents(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// (relative name, path) of every regular file under `root`, sorted by name.
std::vector<std::pair<std::string, fs::path>> sorted_files(const fs::path& root) {
  std::vector<std::pair<std::string, fs::path>> files;
  std::error_code ec;
  if (fs::is_regular_file(root, ec)) return {{root.filename().string(), root}};
  if (!fs::is_directory(root, ec)) return files;
  for (const auto& e : fs::recursive_directory_iterator(root, ec))
    if (e.is_regular_file()) files.emplace_back(fs::relative(e.path(), root).generic_string(), e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::string files_digest(const std::vector<std::string>& roots) {
  std::uint64_t h = fnv1a64("");
  for (const auto& root : roots) {
    const auto files = sorted_files(root);
    if (files.empty()) h = fnv1a64(std::string_view(root.c_str(), root.size() + 1), h);
    for (const auto& [name, path] : files) {
      h = fnv1a64(std::string_view(name.c_str(), name.size() + 1), h);
      const std::string contents = file_contents(path);
      h = fnv1a64(std::string_view(contents.c_str(), contents.size() + 1), h);
    }
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace xpusim::core
