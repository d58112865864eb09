#include "fuzz_input.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace xpusim::fuzz {

std::string input_file(const uint8_t* data, size_t size, const std::string& ext) {
  const std::string path = "/tmp/xpusim_fuzz_" + std::to_string(::getpid()) + ext;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

std::string data_dir() { return XS_DATA_DIR; }

}  // namespace xpusim::fuzz
