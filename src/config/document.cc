#include "xpusim/config/document.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "xpusim/core/suggest.h"

namespace xpusim::config {

namespace {

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    core::fail("", "'" + path + "' is a directory, not a file", path, "an existing, readable file");
  std::ifstream in(path, std::ios::binary);
  if (!in) core::fail("", "cannot open file '" + path + "'", path, "an existing, readable file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Json yaml_to_json(const YAML::Node& n, const std::string& file) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar: {
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
    case YAML::NodeType::Sequence: {
      Json a = Json::array();
      for (const auto& e : n) a.push_back(yaml_to_json(e, file));
      return a;
    }
    case YAML::NodeType::Map: {
      Json o = Json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = yaml_to_json(kv.second, file);
      return o;
    }
  }
  return nullptr;
}

}  // namespace

Json load_json_file(const std::string& path) {
  const std::string text = read_file(path);
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
  }
}

Json load_yaml_file(const std::string& path) {
  const std::string text = read_file(path);
  try {
    YAML::Node root = YAML::Load(text);
    return yaml_to_json(root, path);
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

std::string brief(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

FieldReader::FieldReader(const Json& object, std::string path, core::Diagnostics& diags,
                         bool strict)
    : obj_(object), path_(std::move(path)), diags_(diags), strict_(strict) {}

bool FieldReader::has(const std::string& key) const {
  return obj_.is_object() && obj_.contains(key) && !obj_.at(key).is_null();
}

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
    if (v->is_number_float() && v->get<double>() == static_cast<double>(static_cast<long long>(v->get<double>())))
      return static_cast<long long>(v->get<double>());
    type_error(key, *v, "an integer");
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
