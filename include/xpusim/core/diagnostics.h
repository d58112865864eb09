#pragma once
// User-input errors. Loaders collect every Diagnostic they find (with the dotted path of the
// offending field, the value, what was expected and the source location) and then throw one
// InputError at the edge. The CLI prints them all and exits with code 2.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace xpusim::core {

/// Characters of an offending value a message shows (docs/errors.md): a longer value is cut and
/// says its size, so that a 100 KB argument does not flood the terminal.
inline constexpr std::size_t kShownValueChars = 60;

/// `text` with control characters and bytes that are not UTF-8 escaped (\n, \t, \r, \xHH), so
/// that input bytes cannot move the cursor or recolour the user's terminal.
std::string printable(std::string_view text);

/// `value` as a message shows it: printable, cut after `max_chars` bytes (never inside a UTF-8
/// character) with "…(N bytes)".
std::string shown_value(std::string_view value, std::size_t max_chars = kShownValueChars);

/// A message as shown: printable, and each 'quoted' span in it shown as a value (a message that
/// quotes the value, "unknown system 'X'", cuts X as the value is cut).
std::string shown_message(std::string_view message);

struct Diagnostic {
  std::string file;      ///< source file, empty when the input came from flags
  int line = 0;          ///< 1-based line, 0 when unknown
  std::string path;      ///< dotted path of the field, e.g. "chip.hbm.bandwidth"
  std::string message;   ///< what is wrong, e.g. "number without a unit"
  std::string value;     ///< the offending value as written, may be empty
  std::string expected;  ///< what was expected, may be empty
  std::string hint;      ///< "did you mean ..." or other advice, may be empty

  /// One line: "FILE:LINE: PATH: MESSAGE (got 'VALUE'; expected EXPECTED; HINT)", every part
  /// printable, the value cut to kShownValueChars (file and path to four times that).
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
