#include "xpusim/config/document.h"

#include <nlohmann/json.hpp>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "xpusim/core/file_read.h"
#include "xpusim/core/suggest.h"

namespace xpusim::config {

using core::fail_limit;

namespace {

/// Every string of a document comes from its text (YAML escapes of surrogates or past U+10FFFF
/// are malformed YAML), so a text that is UTF-8 gives strings that are.
[[noreturn]] void fail_utf8(const std::string& path, const std::string& text, std::size_t at) {
  core::Diagnostic d;
  d.file = path;
  d.line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
  d.message = "not valid UTF-8 (byte " + std::to_string(at + 1) + ")";
  d.expected = "UTF-8 text";
  throw core::InputError(d);
}

}  // namespace

/// Offset of the first byte that does not start a well-formed UTF-8 sequence (the Unicode
/// standard's table 3-7: no overlong forms, surrogates or code points past U+10FFFF), or npos.
/// Every text file is checked, so that writing one of its strings out (--json, a diagnostic)
/// can never fail.
std::size_t invalid_utf8_at(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t len = 1;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (b < 0x80) len = 1;
    else if (b >= 0xC2 && b <= 0xDF) len = 2;
    else if (b >= 0xE0 && b <= 0xEF) len = 3, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
    else if (b >= 0xF0 && b <= 0xF4) len = 4, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
    else return i;
    if (s.size() - i < len) return i;
    for (std::size_t k = 1; k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF)) return i;
    }
    i += len;
  }
  return std::string::npos;
}

std::string read_text_file(const std::string& path, const std::string& what) {
  std::string text = core::read_regular_file(path, what, DocumentLimits::kMaxBytes);
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);  // UTF-8 byte-order mark
  if (const std::size_t at = invalid_utf8_at(text); at != std::string::npos) fail_utf8(path, text, at);
  return text;
}

namespace {

/// Converts a YAML tree, counting depth and values so that nesting, alias cycles and alias
/// expansion ("billion laughs") stop at the documented limits instead of exhausting the stack
/// or memory.
class YamlConverter {
 public:
  explicit YamlConverter(std::string file) : file_(std::move(file)) {}
  Json convert(const YAML::Node& n, int depth = 0);

 private:
  void count(int depth);
  void count_text(const std::string& s);
  static Json scalar(const YAML::Node& n);
  std::string checked_text(const std::string& s, const YAML::Node& n);
  std::string file_;
  long long nodes_ = 0;
  long long bytes_ = 0;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void YamlConverter::count(int depth) {
  if (depth > DocumentLimits::kMaxNesting)
    fail_limit(file_, "nesting depth (lists and mappings inside each other, or an alias cycle)", depth,
               DocumentLimits::kMaxNesting);
  if (++nodes_ > DocumentLimits::kMaxNodes)
    fail_limit(file_, "number of values after alias expansion", nodes_, DocumentLimits::kMaxNodes);
}

void YamlConverter::count_text(const std::string& s) {
  bytes_ += static_cast<long long>(s.size());
  if (bytes_ > DocumentLimits::kMaxExpandedBytes)
    fail_limit(file_, "bytes of text after alias expansion", bytes_, DocumentLimits::kMaxExpandedBytes);
}

/// yaml-cpp turns some control bytes of a UTF-8 text into bytes that are not UTF-8 (a key
/// "a\x03\x00b" comes back with a stray byte: fuzz_config); such a string is refused here, so that
/// writing it out (a diagnostic, --json) cannot fail.
std::string YamlConverter::checked_text(const std::string& s, const YAML::Node& n) {
  count_text(s);
  if (invalid_utf8_at(s) == std::string::npos) return s;
  core::Diagnostic d;
  d.file = file_;
  d.line = n.Mark().line + 1;
  d.message = "a YAML string that does not decode to UTF-8 (control characters or escapes)";
  d.expected = "printable UTF-8 text";
  throw core::InputError(d);
}

Json YamlConverter::scalar(const YAML::Node& n) {
  const std::string s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted: keep as string
  if (s == "true" || s == "True") return true;
  if (s == "false" || s == "False") return false;
  if (s == "null" || s == "~") return nullptr;
  // Plain numbers become numbers so that a unit-less physical value is reported as such.
  char* end = nullptr;
  long long i = std::strtoll(s.c_str(), &end, 10);
  if (!s.empty() && *end == '\0') return i;
  double d = std::strtod(s.c_str(), &end);
  if (!s.empty() && *end == '\0') return d;
  return s;
}

Json YamlConverter::convert(const YAML::Node& n, int depth) {
  count(depth);
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Scalar:
      checked_text(n.Scalar(), n);
      return scalar(n);
    case YAML::NodeType::Sequence: {
      Json a = Json::array();
      for (const auto& e : n) a.push_back(convert(e, depth + 1));
      return a;
    }
    case YAML::NodeType::Map: {
      if (static_cast<long long>(n.size()) > DocumentLimits::kMaxMembers)
        fail_limit(file_, "keys in one mapping", static_cast<long long>(n.size()), DocumentLimits::kMaxMembers);
      Json o = Json::object();
      std::unordered_set<std::string> seen;
      for (const auto& kv : n) {
        const std::string key = checked_text(kv.first.as<std::string>(), kv.first);
        if (!seen.insert(key).second) {
          core::Diagnostic d{file_, kv.first.Mark().line + 1, key, "key given twice in one mapping", key,
                             "each key once (a later value would silently replace the first)", ""};
          throw core::InputError(d);
        }
        o[key] = convert(kv.second, depth + 1);
      }
      return o;
    }
  }
  return nullptr;
}

/// What a linear scan of JSON text finds before the parse: the most keys of one object, and the
/// first key an object repeats (with its line).
struct JsonKeys {
  long long most_members = 0;
  std::string repeated;
  int repeated_line = 0;
};

// Key strings are compared as written (escapes not decoded).
JsonKeys scan_json_keys(std::string_view text) {
  struct Level {
    bool object = false;
    long long members = 0;
    std::unordered_set<std::string_view> keys;
  };
  JsonKeys out;
  std::vector<Level> stack;
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (c == '{' || c == '[') stack.push_back(Level{c == '{', 0, {}});
    else if ((c == '}' || c == ']') && !stack.empty()) stack.pop_back();
    if (c != '"') continue;
    const std::size_t start = ++i;
    while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
    std::size_t next = i + 1;
    while (next < text.size() && (text[next] == ' ' || text[next] == '\t' || text[next] == '\r' || text[next] == '\n')) ++next;
    if (stack.empty() || !stack.back().object || next >= text.size() || text[next] != ':') continue;
    Level& top = stack.back();
    out.most_members = std::max(out.most_members, ++top.members);
    if (!top.keys.insert(text.substr(start, std::min(i, text.size()) - start)).second && out.repeated.empty()) {
      out.repeated = std::string(text.substr(start, std::min(i, text.size()) - start));
      out.repeated_line = line;
    }
  }
  return out;
}

void check_json_keys(const std::string& path, std::string_view text) {
  const JsonKeys keys = scan_json_keys(text);
  if (keys.most_members > DocumentLimits::kMaxMembers)
    fail_limit(path, "keys in one object", keys.most_members, DocumentLimits::kMaxMembers);
  if (!keys.repeated.empty()) {
    core::Diagnostic d{path, keys.repeated_line, keys.repeated, "key given twice in one object", keys.repeated,
                       "each key once (a later value would silently replace the first)", ""};
    throw core::InputError(d);
  }
}

}  // namespace

Json load_json_file(const std::string& path) {
  const std::string text = read_text_file(path);
  // Depth is checked before parsing (a linear scan), so a deeply nested document never reaches
  // code that recurses over it.
  const int depth = core::json_nesting_depth(text);
  if (depth > DocumentLimits::kMaxNesting)
    fail_limit(path, "nesting depth (arrays and objects inside each other)", depth, DocumentLimits::kMaxNesting);
  check_json_keys(path, text);
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann reports "parse error at line L, column C: ..."; keep its text after the tag.
    std::string what = e.what();
    auto pos = what.find("parse error");
    core::Diagnostic d;
    d.file = path;
    // The line of the error, so that "FILE:LINE:" leads the message like every other diagnostic.
    const size_t upto = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    d.line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(upto), '\n'));
    d.message = "malformed JSON: " + (pos == std::string::npos ? what : what.substr(pos));
    throw core::InputError(d);
  } catch (const nlohmann::json::out_of_range& e) {
    // A number past the range of a double ("2e308"): nlohmann's "number overflow parsing '…'"
    // (fuzz_config; it reached main() as an internal error).
    const std::string what = e.what();
    const auto pos = what.find("number overflow");
    core::Diagnostic d;
    d.file = path;
    d.message = "malformed JSON: " + (pos == std::string::npos ? what : what.substr(pos));
    d.expected = "numbers within ±1.8e308";
    throw core::InputError(d);
  }
}

namespace {

/// Where each document of a YAML text starts; the events themselves are dropped.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

/// Counts the documents of a YAML text (events only: aliases are not expanded). yaml-cpp 0.7
/// leaves a token that starts no value (a ',' outside brackets) unread and reports an empty
/// document before it forever (YAML::LoadAll on "," grew without bound: fuzz_config); a document
/// that starts where the one before it started is that token, refused here as malformed.
std::size_t count_yaml_documents(const std::string& path, const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts events;
  while (parser.HandleNextDocument(events)) {
    const std::size_t n = events.starts.size();
    if (n < 2 || events.starts[n - 1].pos != events.starts[n - 2].pos) continue;
    const YAML::Mark& at = events.starts.back();
    core::Diagnostic d;
    d.file = path;
    d.line = at.line + 1;
    d.message = "malformed YAML at line " + std::to_string(at.line + 1) + ", column " +
                std::to_string(at.column + 1) + ": a token that starts no value";
    if (at.pos >= 0 && static_cast<std::size_t>(at.pos) < text.size()) d.value = text.substr(static_cast<std::size_t>(at.pos), 1);
    d.expected = "a key, a value or '-' (',' separates items only inside [ ] or { })";
    throw core::InputError(d);
  }
  return events.starts.size();
}

}  // namespace

Json load_yaml_file(const std::string& path) {
  const std::string text = read_text_file(path);
  try {
    if (const std::size_t documents = count_yaml_documents(path, text); documents > 1) {
      core::Diagnostic d{path, 0, "", "more than one YAML document ('---' separates them)",
                         std::to_string(documents) + " documents", "one document per file", ""};
      throw core::InputError(d);
    }
    return YamlConverter(path).convert(YAML::Load(text));
  } catch (const YAML::Exception& e) {
    core::Diagnostic d;
    d.file = path;
    d.line = e.mark.line + 1;
    d.message = "malformed YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                std::to_string(e.mark.column + 1) + ": " + e.msg;
    throw core::InputError(d);
  }
}

Json load_document(const std::string& path) {
  if (ends_with(path, ".yaml") || ends_with(path, ".yml")) return load_yaml_file(path);
  return load_json_file(path);
}

namespace {

constexpr size_t kBriefChars = 60;

/// Appends v to out until out holds kBriefChars characters; containers are walked only as far
/// as they are shown.
void append_brief(const Json& v, std::string& out) {
  if (out.size() >= kBriefChars) return;
  if (!v.is_structured()) {
    out += v.dump();
    return;
  }
  const bool is_array = v.is_array();
  out += is_array ? "[" : "{";
  bool first = true;
  for (auto it = v.begin(); it != v.end() && out.size() < kBriefChars; ++it) {
    if (!first) out += ",";
    first = false;
    if (!is_array) out += Json(it.key()).dump() + ":";
    append_brief(*it, out);
  }
  out += is_array ? "]" : "}";
}

}  // namespace

std::string brief(const Json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return s.size() > kBriefChars ? s.substr(0, kBriefChars - 3) + "..." : s;
  }
  std::string s;
  append_brief(v, s);
  if (s.size() > kBriefChars) s = s.substr(0, kBriefChars - 3) + "...";
  return s;
}

FieldReader::FieldReader(const Json& object, std::string path, core::Diagnostics& diags,
                         bool strict)
    : obj_(object), path_(std::move(path)), diags_(diags), strict_(strict) {}

bool FieldReader::has(const std::string& key) const {
  return obj_.is_object() && obj_.contains(key) && !obj_.at(key).is_null();
}

bool FieldReader::has_string(const std::string& key) const { return has(key) && obj_.at(key).is_string(); }

std::string FieldReader::path_of(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

const Json* FieldReader::get(const std::string& key, bool required, const char* expected) {
  used_.insert(key);
  if (!has(key)) {
    if (required) diags_.error(path_of(key), "missing required field", "", expected);
    return nullptr;
  }
  return &obj_.at(key);
}

void FieldReader::type_error(const std::string& key, const Json& v, const char* expected) {
  diags_.error(path_of(key), "wrong type", brief(v), expected);
}

std::optional<std::string> FieldReader::quantity_text(const std::string& key, const std::string& expected) {
  const Json* v = get(key, true, "a string with a unit");
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    diags_.error(path_of(key), v->is_number() ? "number without a unit" : "wrong type", brief(*v), expected);
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::string FieldReader::str(const std::string& key) {
  const Json* v = get(key, true, "a string");
  if (!v) return {};
  if (!v->is_string()) {
    type_error(key, *v, "a string");
    return {};
  }
  return v->get<std::string>();
}

std::string FieldReader::str_or(const std::string& key, const std::string& fallback) {
  if (!has(key)) {
    used_.insert(key);
    return fallback;
  }
  return str(key);
}

long long FieldReader::integer(const std::string& key) {
  const Json* v = get(key, true, "an integer");
  if (!v) return 0;
  if (!v->is_number_integer()) {
    // Accept integral floats written as 4096.0; reject everything else.
    // The range test comes first: casting a double outside int64 (or NaN/inf) is undefined.
    const double x = v->is_number_float() ? v->get<double>() : 0.5;
    if (std::isfinite(x) && std::fabs(x) < 0x1p63 && x == std::floor(x)) return static_cast<long long>(x);
    type_error(key, *v, "an integer");
    return 0;
  }
  if (v->is_number_unsigned() && v->get<unsigned long long>() > static_cast<unsigned long long>(INT64_MAX)) {
    diags_.error(path_of(key), "out of range", brief(*v), "an integer of at most " + std::to_string(INT64_MAX));
    return 0;
  }
  return v->get<long long>();
}

long long FieldReader::integer_or(const std::string& key, long long fallback) {
  if (!has(key)) {
    used_.insert(key);
    return fallback;
  }
  return integer(key);
}

double FieldReader::number(const std::string& key) {
  const Json* v = get(key, true, "a number");
  if (!v) return 0.0;
  if (!v->is_number()) {
    type_error(key, *v, "a number");
    return 0.0;
  }
  if (!std::isfinite(v->get<double>())) {  // 1e999 parses as inf
    type_error(key, *v, "a finite number");
    return 0.0;
  }
  return v->get<double>();
}

double FieldReader::number_or(const std::string& key, double fallback) {
  if (!has(key)) {
    used_.insert(key);
    return fallback;
  }
  return number(key);
}

bool FieldReader::boolean_or(const std::string& key, bool fallback) {
  if (!has(key)) {
    used_.insert(key);
    return fallback;
  }
  const Json* v = get(key, true, "true or false");
  if (!v->is_boolean()) {
    type_error(key, *v, "true or false");
    return fallback;
  }
  return v->get<bool>();
}

const Json* FieldReader::object(const std::string& key, bool required) {
  const Json* v = get(key, required, "an object");
  if (v && !v->is_object()) {
    type_error(key, *v, "an object");
    return nullptr;
  }
  return v;
}

const Json* FieldReader::array(const std::string& key, bool required) {
  const Json* v = get(key, required, "a list");
  if (v && !v->is_array()) {
    type_error(key, *v, "a list");
    return nullptr;
  }
  return v;
}

void FieldReader::ignore(const std::string& key) { used_.insert(key); }

void FieldReader::finish() {
  if (!strict_ || !obj_.is_object()) return;
  std::vector<std::string> known(used_.begin(), used_.end());
  for (auto it = obj_.begin(); it != obj_.end(); ++it) {
    if (used_.count(it.key())) continue;
    diags_.error(path_of(it.key()), "unknown key", it.key(), "one of: " + core::join(known),
                 core::did_you_mean(it.key(), known));
  }
}

}  // namespace xpusim::config
