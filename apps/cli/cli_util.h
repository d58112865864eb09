#pragma once
// Helpers shared by the sub-commands: CLI11 parsing with our exit codes.

#include <CLI/CLI.hpp>

#include "commands.h"

namespace xpusim::cli {

/// Parses `args` with `app`. Returns -1 when parsing succeeded and the command should run,
/// otherwise the exit code (0 for --help, 2 for a usage error, message on stderr).
int parse(CLI::App& app, const Args& args);

}  // namespace xpusim::cli
