#pragma once
// User-input errors. Loaders collect every Diagnostic they find (with the dotted path of the
// offending field, the value, what was expected and the source location) and then throw one
// InputError at the edge. The CLI prints them all and exits with code 2.

#include <stdexcept>
#include <string>
#include <vector>

namespace xpusim::core {

struct Diagnostic {
  std::string file;      ///< source file, empty when the input came from flags
  int line = 0;          ///< 1-based line, 0 when unknown
  std::string path;      ///< dotted path of the field, e.g. "chip.hbm.bandwidth"
  std::string message;   ///< what is wrong, e.g. "number without a unit"
  std::string value;     ///< the offending value as written, may be empty
  std::string expected;  ///< what was expected, may be empty
  std::string hint;      ///< "did you mean ..." or other advice, may be empty

  /// One line: "FILE:LINE: PATH: MESSAGE (got 'VALUE'; expected EXPECTED; HINT)".
  std::string to_string() const;
};

/// Collects diagnostics; throw_if_any() raises them together.
class Diagnostics {
 public:
  void add(Diagnostic d) { items_.push_back(std::move(d)); }
  void error(std::string path, std::string message, std::string value = {},
             std::string expected = {}, std::string hint = {});
  bool empty() const { return items_.empty(); }
  const std::vector<Diagnostic>& items() const { return items_; }
  /// Prefixes the file (and keeps lines) of every diagnostic that has none.
  void set_file(const std::string& file);
  void append(const Diagnostics& other);
  /// Throws InputError with every collected diagnostic when there is at least one.
  void throw_if_any() const;

 private:
  std::vector<Diagnostic> items_;
};

/// The one exception type a user sees: bad input, with every diagnostic found.
class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Diagnostic> diagnostics);
  explicit InputError(Diagnostic diagnostic);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

/// Throws an InputError with a single diagnostic.
[[noreturn]] void fail(std::string path, std::string message, std::string value = {},
                       std::string expected = {}, std::string hint = {});

}  // namespace xpusim::core
