#include "xpusim/core/data_dir.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <utility>

#include "xpusim/core/diagnostics.h"

namespace xpusim::core {

namespace {

namespace fs = std::filesystem;

std::string& data_dir_flag() {
  static std::string flag;
  return flag;
}

bool holds_catalog(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir / "catalog", ec);
}

std::string canonical_or_same(const fs::path& dir) {
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(dir, ec);
  return ec ? dir.string() : c.string();
}

/// A directory the user named: used as given when it holds a catalog, bad input otherwise.
DataDir named(const std::string& path, const std::string& origin) {
  if (!holds_catalog(path)) {
    fail(origin, "not an xpusim data directory", path,
         "a directory holding catalog/, models/ and calibration/ (the data/ of the source tree, or "
         "share/xpusim of an installation)");
  }
  return {path, origin};
}

}  // namespace

void set_data_dir_flag(std::string path) { data_dir_flag() = std::move(path); }

std::string this_object_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&this_object_dir), &info) == 0 || !info.dli_fname) return {};
  std::error_code ec;
  fs::path self = fs::canonical(info.dli_fname, ec);
  if (ec) return {};
  return self.parent_path().string();
}

DataDir find_data_dir(const std::string& compiled_in) {
  if (!data_dir_flag().empty()) return named(data_dir_flag(), "--data-dir");
  const char* env = std::getenv("XPUSIM_DATA_DIR");
  if (env && *env) return named(env, "XPUSIM_DATA_DIR");
  const std::string self = this_object_dir();
  if (!self.empty()) {
    const fs::path dir(self);
    for (const fs::path& rel : {fs::path("../share/xpusim"), fs::path("../../../share/xpusim"),
                                fs::path("../data"), fs::path("../../data")}) {
      if (holds_catalog(dir / rel)) return {canonical_or_same(dir / rel), "beside the binary"};
    }
  }
  return {compiled_in, "compiled in"};
}

}  // namespace xpusim::core
