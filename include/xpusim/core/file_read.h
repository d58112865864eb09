#pragma once
// Reading a whole input file with the checks every reader needs: a directory, a device
// (/dev/zero), a FIFO or a missing file is a diagnostic, and a file over the reader's size
// limit is refused before any byte is read (docs/errors.md, "Limits").

#include <fstream>
#include <string>
#include <string_view>

namespace xpusim::core {

/// The regular file `path` opened for reading (binary); throws InputError for a directory, a
/// device, a FIFO or a missing or unreadable file. `what` as for read_regular_file.
std::ifstream open_regular_file(const std::string& path, const std::string& what);

/// open_regular_file, and the file refused before a byte is read when it is over `max_bytes`
/// (readers that stream it: the arrivals CSV).
std::ifstream open_regular_file_within(const std::string& path, const std::string& what, long long max_bytes);

/// The bytes of the regular file `path` of at most `max_bytes` bytes; throws InputError
/// otherwise. `what` names the kind of file expected ("an existing, readable <what>").
std::string read_regular_file(const std::string& path, const std::string& what, long long max_bytes);

/// The regular file at the relative path `relative` from the folder of `anchor_file`, lexically
/// normalised; empty when there is none, or when `relative` is empty or absolute. How an input
/// file finds the files it names in its own layout (a measurement file's models, a scenario's
/// model config).
std::string file_beside(const std::string& anchor_file, const std::string& relative);

/// The deepest nesting of arrays and objects in JSON text, the root being depth 0 (brackets
/// inside strings skipped): a
/// linear pre-scan, so that a reader can refuse a deep document before parsing it (nlohmann's
/// depth callback makes parsing quadratic in the size of an object).
int json_nesting_depth(std::string_view text);

/// Throws InputError "FILE: WHAT exceeds the limit (got 'FOUND'; expected at most LIMIT …)".
[[noreturn]] void fail_limit(const std::string& file, const std::string& what, long long found, long long limit);

}  // namespace xpusim::core
