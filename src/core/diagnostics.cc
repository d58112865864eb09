#include "xpusim/core/diagnostics.h"

#include <string_view>

namespace xpusim::core {

namespace {

// Bytes in a well-formed UTF-8 character starting at text[i] (1..4), or 0 when it is not one.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

std::string printable(std::string_view text) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = utf8_length(text, i);
    if (n > 1) out.append(text.substr(i, n));
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (n == 0 || c < 0x20 || c == 0x7f) out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
    else out += static_cast<char>(c);
    i += n > 1 ? n : 1;
  }
  return out;
}

std::string shown_value(std::string_view value, std::size_t max_chars) {
  if (value.size() <= max_chars) return printable(value);
  std::size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return printable(value.substr(0, cut)) + "\u2026(" + std::to_string(value.size()) + " bytes)";
}

std::string shown_message(std::string_view message) {
  std::string out;
  std::size_t at = 0;
  while (at < message.size()) {
    const std::size_t open = message.find('\'', at);
    const std::size_t close = open == std::string_view::npos ? open : message.find('\'', open + 1);
    if (close == std::string_view::npos) break;
    out += printable(message.substr(at, open + 1 - at));
    out += shown_value(message.substr(open + 1, close - open - 1));
    out += '\'';
    at = close + 1;
  }
  if (at < message.size()) out += printable(message.substr(at));
  return out;
}

std::string Diagnostic::to_string() const {
  std::string s;
  if (!file.empty()) {
    s += shown_value(file, 4 * kShownValueChars);
    if (line > 0) s += ":" + std::to_string(line);
    s += ": ";
  }
  if (!path.empty()) s += shown_value(path, 4 * kShownValueChars) + ": ";
  s += shown_message(message);
  std::string extra;
  if (!value.empty()) extra += "got '" + shown_value(value, kShownValueChars) + "'";
  if (!expected.empty()) extra += (extra.empty() ? "" : "; ") + std::string("expected ") + printable(expected);
  if (!hint.empty()) extra += (extra.empty() ? "" : "; ") + printable(hint);
  if (!extra.empty()) s += " (" + extra + ")";
  return s;
}

void Diagnostics::error(std::string path, std::string message, std::string value,
                        std::string expected, std::string hint) {
  items_.push_back(Diagnostic{"", 0, std::move(path), std::move(message), std::move(value),
                              std::move(expected), std::move(hint)});
}

void Diagnostics::set_file(const std::string& file) {
  for (auto& d : items_)
    if (d.file.empty()) d.file = file;
}

void Diagnostics::append(const Diagnostics& other) {
  items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

void Diagnostics::throw_if_any() const {
  if (!items_.empty()) throw InputError(items_);
}

static std::string join_diagnostics(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (size_t i = 0; i < ds.size(); ++i) {
    if (i) s += "\n";
    s += ds[i].to_string();
  }
  return s;
}

InputError::InputError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join_diagnostics(diagnostics)), diagnostics_(std::move(diagnostics)) {}

InputError::InputError(Diagnostic diagnostic)
    : InputError(std::vector<Diagnostic>{std::move(diagnostic)}) {}

void fail(std::string path, std::string message, std::string value, std::string expected,
          std::string hint) {
  throw InputError(Diagnostic{"", 0, std::move(path), std::move(message), std::move(value),
                              std::move(expected), std::move(hint)});
}

}  // namespace xpusim::core
