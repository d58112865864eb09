#pragma once
// Scratch files and directories the tests write under the temp directory, named per process
// (ctest runs the tests in parallel processes) and removed when the test process exits, so test
// runs leave nothing behind.

#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace xpusim::test {

class ScratchPaths {
 public:
  static ScratchPaths& instance() {
    static ScratchPaths paths;
    return paths;
  }
  /// `<temp dir>/<stem>_<pid><suffix>`, removed (recursively) at exit.
  std::string path(const std::string& stem, const std::string& suffix) {
    std::string p = ::testing::TempDir() + stem + "_" + std::to_string(::getpid()) + suffix;
    const std::lock_guard<std::mutex> lock(mutex_);
    paths_.insert(p);
    return p;
  }
  ~ScratchPaths() {
    std::error_code ec;
    for (const auto& p : paths_) std::filesystem::remove_all(p, ec);
  }

 private:
  std::mutex mutex_;
  std::set<std::string> paths_;
};

/// A per-process scratch path `<temp dir>/<stem>_<pid><suffix>`, removed when the process exits.
inline std::string scratch_path(const std::string& stem, const std::string& suffix) {
  return ScratchPaths::instance().path(stem, suffix);
}

}  // namespace xpusim::test
