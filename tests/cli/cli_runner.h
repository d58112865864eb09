#pragma once
// Runs build/xpusim with arguments and captures exit code, stdout and stderr.

#include <string>
#include <vector>

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

/// A validation CSV in the test's temp dir named `name`: the public file's header, its rows
/// whose ids start with one of `prefixes` (in file order), then the `extra` lines.
std::string write_public_rows(const std::string& name, const std::vector<std::string>& prefixes,
                              const std::vector<std::string>& extra = {});

}  // namespace xpusim::test
