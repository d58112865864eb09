#include "xpusim/core/file_write.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "xpusim/core/diagnostics.h"

namespace xpusim::core {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void cannot(const std::string& flag, const std::string& what, const std::string& path, int err) {
  fail(flag, what + (err != 0 ? std::string(" (") + std::strerror(err) + ")" : std::string()), path,
       "a writable path with room for the output");
}

// Writes, flushes and closes `path`; false (errno kept) on any failure.
bool write_whole(const std::string& path, std::string_view bytes, int& err) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    err = errno;
    return false;
  }
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  const bool written = static_cast<bool>(out);
  err = errno;
  out.close();
  if (!out && err == 0) err = errno;
  return written && static_cast<bool>(out);
}

}  // namespace

void write_output_file(const std::string& flag, const std::string& path, std::string_view bytes) {
  if (path.empty()) fail(flag, "empty output path", path, "a writable path with room for the output");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  int err = 0;
  if (fs::exists(st) && fs::is_directory(st)) fail(flag, "the output path is a directory", path, "a file path");
  if (fs::exists(st) && !fs::is_regular_file(st)) {  // a device or FIFO: in place
    if (!write_whole(path, bytes, err)) cannot(flag, "cannot write the output", path, err);
    return;
  }
  const fs::path target(path);
  const fs::path temp = target.parent_path() /
                        ("." + target.filename().string() + ".xpusim-" + std::to_string(::getpid()) + ".tmp");
  if (!write_whole(temp.string(), bytes, err)) {
    fs::remove(temp, ec);
    cannot(flag, "cannot write the output", path, err);
  }
  fs::rename(temp, target, ec);
  if (ec) {
    const int rename_err = ec.value();
    fs::remove(temp, ec);
    cannot(flag, "cannot replace the output file", path, rename_err);
  }
}

}  // namespace xpusim::core
