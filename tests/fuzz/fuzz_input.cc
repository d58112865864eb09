#include "fuzz_input.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>

namespace xpusim::fuzz {

namespace {

/// The input files written by this process (one per extension), removed at exit.
std::set<std::string>& written() {
  static std::set<std::string> paths;
  return paths;
}

void remove_written() {
  for (const auto& p : written()) std::remove(p.c_str());
}

}  // namespace

std::string input_file(const uint8_t* data, size_t size, const std::string& ext) {
  const std::string path = "/tmp/xpusim_fuzz_" + std::to_string(::getpid()) + ext;
  if (written().empty()) std::atexit(remove_written);
  written().insert(path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

std::string data_dir() { return XS_DATA_DIR; }

}  // namespace xpusim::fuzz
