#include "xpusim/core/diagnostics.h"

namespace xpusim::core {

std::string Diagnostic::to_string() const {
  std::string s;
  if (!file.empty()) {
    s += file;
    if (line > 0) s += ":" + std::to_string(line);
    s += ": ";
  }
  if (!path.empty()) s += path + ": ";
  s += message;
  std::string extra;
  if (!value.empty()) extra += "got '" + value + "'";
  if (!expected.empty()) extra += (extra.empty() ? "" : "; ") + std::string("expected ") + expected;
  if (!hint.empty()) extra += (extra.empty() ? "" : "; ") + hint;
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
