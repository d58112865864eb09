// The flag-to-scenario path: command-line flags through CLI11 into the scenario layer's inputs,
// their resolution and the run, exactly as `xpusim <command> ...` does (apps/cli). The input is
// one argument per line, the first line the command: train, serve, collective, model, catalog or
// sessions.
// Flags that write files (--html, --trace) or add catalog directories for the rest of the process
// (--catalog-dir) are dropped; the harness runs in a directory of its own all the same.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "commands.h"
#include "fuzz_input.h"

namespace {

using xpusim::cli::Args;

struct Command {
  std::string_view name;
  int (*run)(const Args&);
};

constexpr Command kCommands[] = {
    {"train", xpusim::cli::run_train},           {"serve", xpusim::cli::run_serve},
    {"collective", xpusim::cli::run_collective}, {"model", xpusim::cli::run_model},
    {"catalog", xpusim::cli::run_catalog},       {"sessions", xpusim::cli::run_sessions},
};

bool writes_outside(std::string_view arg) {
  for (std::string_view flag : {"--html", "--trace", "--catalog-dir"})
    if (arg.substr(0, flag.size()) == flag) return true;
  return false;
}

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

}  // namespace

/// The fuzzer's working directory (the commands write their reports there), removed at exit.
static std::string& work_dir() {
  static std::string dir;
  return dir;
}

static void remove_work_dir() {
  std::error_code ec;
  if (!work_dir().empty()) std::filesystem::remove_all(work_dir(), ec);
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char dir[] = "/tmp/xpusim_fuzz_flags_XXXXXX";
  if (::mkdtemp(dir) == nullptr || ::chdir(dir) != 0) std::abort();
  work_dir() = dir;
  std::atexit(remove_work_dir);
  if (std::freopen("/dev/null", "w", stdout) == nullptr) std::abort();  // reports: not checked here
  ::setenv("XPUSIM_DATA_DIR", XS_DATA_DIR, 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> lines = lines_of(std::string_view(reinterpret_cast<const char*>(data), size));
  if (lines.empty()) return 0;
  for (const Command& c : kCommands) {
    if (lines.front() != c.name) continue;
    Args args;
    for (std::size_t i = 1; i < lines.size(); ++i)
      if (!writes_outside(lines[i])) args.push_back(lines[i]);
    xpusim::fuzz::accept_diagnostics([&] { (void)c.run(args); });
  }
  return 0;
}
