#include "xpusim/core/file_read.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "xpusim/core/diagnostics.h"

namespace xpusim::core {

void fail_limit(const std::string& file, const std::string& what, long long found, long long limit) {
  Diagnostic d;
  d.file = file;
  d.message = what + " exceeds the limit";
  d.value = std::to_string(found);
  d.expected = "at most " + std::to_string(limit) + " (docs/errors.md, \"Limits\")";
  throw InputError(d);
}

std::string file_beside(const std::string& anchor_file, const std::string& relative) {
  namespace fs = std::filesystem;
  if (relative.empty() || fs::path(relative).is_absolute()) return {};
  const fs::path candidate = fs::path(anchor_file).parent_path() / relative;
  std::error_code ec;
  return fs::is_regular_file(candidate, ec) ? candidate.lexically_normal().string() : std::string();
}

int json_nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::max(0, deepest - 1);  // the root container is depth 0 (as nlohmann counts)
}

std::ifstream open_regular_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    fail("", "'" + path + "' is a directory, not a file", path, "an existing, readable " + what);
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    fail("", "'" + path + "' is not a regular file", path, "an existing, readable " + what);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("", "cannot open file '" + path + "'", path, "an existing, readable " + what);
  return in;
}

std::ifstream open_regular_file_within(const std::string& path, const std::string& what, long long max_bytes) {
  std::error_code ec;
  std::ifstream in = open_regular_file(path, what);
  const auto size = static_cast<long long>(std::filesystem::file_size(path, ec));
  if (!ec && size > max_bytes) fail_limit(path, "file size in bytes", size, max_bytes);
  return in;
}

std::string read_regular_file(const std::string& path, const std::string& what, long long max_bytes) {
  std::ifstream in = open_regular_file_within(path, what, max_bytes);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace xpusim::core
