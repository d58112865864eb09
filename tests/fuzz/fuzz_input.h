#pragma once
// Shared by the libFuzzer harnesses (docs/fuzzing.md). A harness feeds its input to one reader
// and accepts exactly two outcomes: the reader returns, or it throws core::InputError (the
// user's diagnostic, exit 2). Anything else escapes: another exception (exit 3 in the CLI, an
// internal error) aborts and libFuzzer reports it, like a crash, a hang, a leak or UB.

#include <cstddef>
#include <cstdint>
#include <string>

#include "xpusim/core/diagnostics.h"

namespace xpusim::fuzz {

/// Writes the input to a file of this process with extension `ext` (".json", ".csv", ...) for
/// the readers that take a path; returns the path. The same path is rewritten by each input.
std::string input_file(const uint8_t* data, size_t size, const std::string& ext);

/// The shipped data directory (catalog, models, calibration) the readers resolve ids against.
std::string data_dir();

/// Runs `read`; an InputError is an accepted outcome.
template <typename F>
void accept_diagnostics(F&& read) {
  try {
    read();
  } catch (const core::InputError&) {
  }
}

}  // namespace xpusim::fuzz
