#pragma once
// Runs build/xpusim with arguments and captures exit code, stdout and stderr.

#include <string>

namespace xpusim::test {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs the CLI with `args` (a shell-quoted string appended after the binary path).
CliRun run_cli(const std::string& args);

/// The repository's data directory and the shared/ directory next to the checkout.
std::string data_dir();

}  // namespace xpusim::test
