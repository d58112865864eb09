#pragma once
// Reading input documents (JSON and YAML) into a JSON tree, and typed, strict field readers.
// The parser libraries stay behind this layer: other layers see nlohmann::json values only
// through FieldReader.

#include <nlohmann/json_fwd.hpp>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "xpusim/core/diagnostics.h"
#include "xpusim/core/result.h"
#include "xpusim/core/unit_parse.h"

namespace xpusim::config {

using Json = nlohmann::ordered_json;

/// Limits on every input document (docs/errors.md, "Limits"): generous for real use, and each
/// named in its diagnostic with the value found.
struct DocumentLimits {
  static constexpr long long kMaxBytes = 64LL << 20;  ///< file size: 64 MiB
  static constexpr int kMaxNesting = 64;             ///< arrays/objects inside each other
  static constexpr long long kMaxNodes = 1'000'000;  ///< values after YAML alias expansion
  /// Bytes of keys and scalars after YAML alias expansion: an alias repeats its whole text, so a
  /// few kilobytes of nested aliases to a long string would otherwise expand to gigabytes.
  static constexpr long long kMaxExpandedBytes = kMaxBytes;
  /// Keys of one object or mapping (the shipped files have at most 45): an ordered document
  /// inserts in linear time per key, so the count is checked before the parse.
  static constexpr long long kMaxMembers = 10'000;
  /// A quantity with a unit (a catalog bandwidth, a scenario duration), in SI base units: far
  /// beyond every real chip and run (the fastest rate is ~1e19 FLOP/s), and far enough inside a
  /// double's range that products of a few of them stay finite (1e308 B/s made energies NaN).
  static constexpr double kMaxQuantity = 1e30;
  static constexpr double kMinQuantity = 1e-30;
};

/// The text of a file for a reader: a regular file of at most DocumentLimits::kMaxBytes, a
/// leading UTF-8 byte-order mark dropped. `what` names the kind of file in the diagnostic of a
/// missing one ("an existing, readable <what>").
std::string read_text_file(const std::string& path, const std::string& what = "file");

/// Offset of the first byte of `s` that does not start a well-formed UTF-8 sequence, or npos
/// (the check read_text_file makes; streamed readers make it per record).
std::size_t invalid_utf8_at(std::string_view s);

/// Reads a JSON file. Missing file or malformed JSON throws InputError naming the file and,
/// for syntax errors, the line and column.
Json load_json_file(const std::string& path);
/// Reads a YAML file (a JSON file is valid YAML too) into a JSON tree; errors as above.
Json load_yaml_file(const std::string& path);
/// Picks the reader by extension (.json → JSON, .yaml/.yml → YAML).
Json load_document(const std::string& path);

/// Strict reader over one JSON object: each read marks the key as consumed; finish() reports
/// every key that was never read as "unknown key" with the closest known key. Errors are
/// collected in the Diagnostics passed in, with the dotted path of the field.
class FieldReader {
 public:
  FieldReader(const Json& object, std::string path, core::Diagnostics& diags,
              bool strict = true);

  bool has(const std::string& key) const;
  /// Whether the key is present and holds a string (a field that takes a number or a keyword).
  bool has_string(const std::string& key) const;
  std::string path_of(const std::string& key) const;

  std::string str(const std::string& key);                    ///< required string
  std::string str_or(const std::string& key, const std::string& fallback);
  long long integer(const std::string& key);                  ///< required integer
  long long integer_or(const std::string& key, long long fallback);
  double number(const std::string& key);                      ///< required plain number
  double number_or(const std::string& key, double fallback);
  bool boolean_or(const std::string& key, bool fallback);
  /// A required quantity written as a string with units ("4.9 TB/s"); a bare number, a wrong
  /// unit, or a negative/zero value (when positive is set) is a diagnostic.
  template <typename Q>
  Q quantity(const std::string& key, bool positive = true);
  /// The raw sub-object (marks the key consumed); a non-object is a diagnostic.
  const Json* object(const std::string& key, bool required = true);
  const Json* array(const std::string& key, bool required = true);
  /// Marks a key as known without reading it (documentation-only fields).
  void ignore(const std::string& key);

  /// Reports unknown keys (when strict). Call once after all reads.
  void finish();
  core::Diagnostics& diagnostics() { return diags_; }

 private:
  const Json* get(const std::string& key, bool required, const char* expected);
  void type_error(const std::string& key, const Json& v, const char* expected);
  /// The string of a required quantity field; nullopt (and a diagnostic) when it is missing or
  /// not a string (`expected` names the unit in the diagnostic).
  std::optional<std::string> quantity_text(const std::string& key, const std::string& expected);

  const Json& obj_;
  std::string path_;
  core::Diagnostics& diags_;
  bool strict_;
  std::set<std::string> used_;
};

/// Renders a JSON value compactly for messages: at most about 60 characters, without
/// serialising more of the value than it shows.
std::string brief(const Json& v);

template <typename Q>
Q FieldReader::quantity(const std::string& key, bool positive) {
  const std::string expected = core::UnitExample<Q>::get();
  const std::optional<std::string> text = quantity_text(key, expected);
  if (!text) return Q{};
  auto r = core::parse_quantity<Q>(*text);
  if (!r) {
    diags_.error(path_of(key), r.error(), *text, expected);
    return Q{};
  }
  if (positive && !(r->base() > 0.0)) {
    diags_.error(path_of(key), "must be positive", *text, expected);
  }
  const double magnitude = std::fabs(r->base());
  if (!(magnitude <= DocumentLimits::kMaxQuantity) || (magnitude > 0 && magnitude < DocumentLimits::kMinQuantity)) {
    diags_.error(path_of(key), "beyond any real hardware or run", *text,
                 expected + ", within 1e-30 .. 1e30 in SI units (docs/errors.md, \"Limits\")");
    return Q{};
  }
  return *r;
}

}  // namespace xpusim::config
