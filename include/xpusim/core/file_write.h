#pragma once
// Writing an output file so that a failure is never silent and never leaves a truncated file in
// place of a good one (docs/errors.md, "Output"): the bytes go to a temporary file beside the
// target, which is flushed, closed with its error checked and renamed over the target. A target
// that exists and is not a regular file (/dev/null, /dev/stdout, a FIFO) is written in place,
// with the same checks.

#include <string>
#include <string_view>

namespace xpusim::core {

/// Writes `bytes` to `path`; throws InputError naming `flag` (the option that named the file),
/// the path and the system's reason when the file cannot be created, written or renamed.
void write_output_file(const std::string& flag, const std::string& path, std::string_view bytes);

}  // namespace xpusim::core
