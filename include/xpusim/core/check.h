#pragma once
// Programmer errors: XS_CHECK throws core::InternalError with file, line and message in every
// build type; the CLI reports it and exits with code 3. Never use it for user input (that is a
// Diagnostic) or for expected infeasibility (a returned value).

#include <stdexcept>
#include <string>

namespace xpusim::core {

/// A violated invariant: a bug in xpusim, not in the user's input.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] inline void check_failed(const char* file, int line, const char* cond, const char* msg) {
  throw InternalError(std::string(file) + ":" + std::to_string(line) + ": check '" + cond +
                      "' failed: " + msg);
}

}  // namespace xpusim::core

#define XS_CHECK(cond, msg)                                               \
  do {                                                                    \
    if (!(cond)) ::xpusim::core::check_failed(__FILE__, __LINE__, #cond, msg); \
  } while (0)
