// Reading the validation CSV (RFC 4180 quoting), column names per ../shared/validation/README.md.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <streambuf>

#include "xpusim/config/document.h"
#include "xpusim/config/values.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/file_read.h"
#include "xpusim/core/format.h"
#include "xpusim/core/limits.h"
#include "xpusim/core/suggest.h"
#include "xpusim/mapping/plan.h"
#include "xpusim/validation/row.h"

namespace xpusim::validation {

namespace fs = std::filesystem;

// Named, not anonymous: RowStream::Impl holds a CsvRows (GCC's -Wsubobject-linkage).
namespace csv_read {

// Records of fields from a stream, honouring RFC 4180 quotes (which may hold newlines); blank
// lines are skipped. A record longer than `max_record_bytes`, a field that is not UTF-8 or an
// unterminated quote is an InputError naming the file and line.
class RecordReader {
 public:
  /// `vetted`: the text already went through config::read_text_file (byte-order mark removed,
  /// UTF-8 checked), so neither is done again; otherwise a leading mark is skipped and every
  /// field is checked.
  RecordReader(std::istream& in, std::string path, long long max_record_bytes, bool vetted)
      : buf_(*in.rdbuf()), path_(std::move(path)), max_bytes_(max_record_bytes), check_utf8_(!vetted) {
    if (!vetted && buf_.sgetc() == 0xEF) {  // a UTF-8 byte-order mark
      std::string bom(3, '\0');
      const auto got = buf_.sgetn(bom.data(), 3);
      if (got != 3 || bom != "\xEF\xBB\xBF") pending_ = bom.substr(0, static_cast<size_t>(got));
    }
  }

  /// The next record and the line it starts on; false at the end of the input.
  bool next(std::vector<std::string>& rec, int& rec_line) {
    rec.clear();
    std::string field;
    bool quoted = false, any = false;
    long long bytes = 0;
    rec_line = line_;
    for (int c = get(); c != EOF; c = get()) {
      const char ch = static_cast<char>(c);
      if (++bytes > max_bytes_) core::fail_limit(path_, "bytes in one CSV record (line " + std::to_string(rec_line) + ")", bytes, max_bytes_);
      if (quoted) {
        if (ch == '"' && peek() == '"') field += static_cast<char>(get());
        else if (ch == '"') quoted = false;
        else {
          field += ch;
          if (ch == '\n') ++line_;
        }
        continue;
      }
      if (ch == '"') {
        quoted = any = true;
      } else if (ch == ',') {
        end_field(rec, field, rec_line);
        any = true;
      } else if (ch == '\n' || ch == '\r') {
        if (ch == '\r' && peek() == '\n') get();
        ++line_;
        if (any || !field.empty()) return end_field(rec, field, rec_line), true;
        rec_line = line_;
        bytes = 0;
      } else {
        field += ch;
        any = true;
      }
    }
    if (quoted) fail_at(rec_line, "unterminated quoted field", "");
    if (!any && field.empty()) return false;
    end_field(rec, field, rec_line);
    return true;
  }

 private:
  int get() {
    if (!pending_.empty()) {
      const auto c = static_cast<unsigned char>(pending_.front());
      pending_.erase(0, 1);
      return c;
    }
    return buf_.sbumpc();
  }
  int peek() { return pending_.empty() ? buf_.sgetc() : static_cast<unsigned char>(pending_.front()); }

  void end_field(std::vector<std::string>& rec, std::string& field, int rec_line) {
    if (check_utf8_ && config::invalid_utf8_at(field) != std::string::npos)
      fail_at(rec_line, "not valid UTF-8 (field " + std::to_string(rec.size() + 1) + " of the record)", "UTF-8 text");
    rec.push_back(std::move(field));
    field.clear();
  }
  [[noreturn]] void fail_at(int line, const std::string& message, const std::string& expected) const {
    core::Diagnostic d;
    d.file = path_;
    d.line = line;
    d.message = message;
    d.expected = expected;
    throw core::InputError(d);
  }

  std::streambuf& buf_;
  std::string path_;
  long long max_bytes_;
  bool check_utf8_;
  std::string pending_;  ///< bytes read ahead that were not a byte-order mark
  int line_ = 1;
};

const std::vector<std::string>& known_columns() {
  static const std::vector<std::string> cols = {
      "id", "kind", "system", "chips", "model", "precision", "seq_len", "global_batch_seqs",
      "micro_batch", "tp", "pp", "dp", "cp", "ep", "vpp", "fsdp_or_zero", "recompute", "in_len",
      "out_len", "batch_or_concurrency", "mode", "metric", "value", "trust", "source_url", "notes"};
  return cols;
}

using Columns = std::map<std::string, size_t>;

// Column name → index; an empty file, unknown, duplicate or missing required columns are
// diagnostics.
Columns read_header(bool any, const std::vector<std::string>& header, int line, const std::string& path) {
  core::Diagnostics diags;
  if (!any) {
    diags.error("", "empty file", path, "a header line and rows");
    diags.set_file(path);
    diags.throw_if_any();
  }
  Columns col;
  for (size_t i = 0; i < header.size(); ++i) {
    if (col.count(header[i])) {
      diags.error("header", "duplicate column", header[i]);
      continue;
    }
    bool known = false;
    for (const auto& k : known_columns()) known = known || k == header[i];
    if (!known)
      diags.error("header", "unknown column", header[i], "one of: " + core::join(known_columns()),
                  core::did_you_mean(header[i], known_columns()));
    col[header[i]] = i;
  }
  for (const char* req : {"id", "kind", "system", "chips", "model", "metric", "value"})
    if (!col.count(req)) diags.error("header", std::string("missing required column '") + req + "'");
  if (diags.empty()) return col;
  core::Diagnostics located;
  for (auto d : diags.items()) {
    d.line = line;
    located.add(d);
  }
  located.set_file(path);
  located.throw_if_any();
  return col;
}

// One record's cells by column name; counts judged like flags and scenario keys
// (config/values.h): an empty cell is unset, a count must be a positive integer, a mean length a
// positive number.
class RowCells {
 public:
  RowCells(const Columns& col, const std::vector<std::string>& fields, core::Diagnostics& d)
      : col_(col), fields_(fields), d_(d) {}
  std::string text(const char* name) const {
    auto it = col_.find(name);
    if (it == col_.end() || it->second >= fields_.size()) return {};
    return fields_[it->second];
  }
  std::optional<long long> count(const std::string& where, const char* name) const {
    const std::string v = text(name);
    if (v.empty()) return std::nullopt;
    char* end = nullptr;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    if (*end != '\0') {
      d_.error(where + "." + name, "not an integer", v, "an integer such as 8");
      return std::nullopt;
    }
    const std::size_t before = d_.items().size();
    config::check_positive_count(d_, where + "." + name, x);
    if (d_.items().size() != before) return std::nullopt;
    return x;
  }
  /// A positive number (a mean length such as 684.7); empty = unset.
  std::optional<double> number(const std::string& where, const char* name) const {
    const std::string v = text(name);
    if (v.empty()) return std::nullopt;
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (*end != '\0') {
      d_.error(where + "." + name, "not a number", v, "a positive number such as 684.7");
      return std::nullopt;
    }
    const std::size_t before = d_.items().size();
    config::check_positive_number(d_, where + "." + name, x);
    if (d_.items().size() == before && x > static_cast<double>(config::count_limit(name)))
      d_.error(where + "." + name, "exceeds the limit", v, "at most " + std::to_string(config::count_limit(name)));
    if (d_.items().size() != before) return std::nullopt;
    return x;
  }

 private:
  const Columns& col_;
  const std::vector<std::string>& fields_;
  core::Diagnostics& d_;
};

void read_counts(const RowCells& cells, const std::string& where, Row& row) {
  row.chips = cells.count(where, "chips").value_or(0);
  row.seq_len = cells.count(where, "seq_len");
  row.global_batch_seqs = cells.count(where, "global_batch_seqs");
  row.micro_batch = cells.count(where, "micro_batch");
  row.tp = cells.count(where, "tp");
  row.pp = cells.count(where, "pp");
  row.dp = cells.count(where, "dp");
  row.cp = cells.count(where, "cp");
  row.ep = cells.count(where, "ep");
  row.vpp = cells.count(where, "vpp");
  row.in_len = cells.number(where, "in_len");
  row.out_len = cells.number(where, "out_len");
  row.batch_or_concurrency = cells.count(where, "batch_or_concurrency");
}

/// A column whose value is one of a fixed vocabulary (data/validation/README.md), or empty when
/// the source does not state it. A typo is an error, not an unstated setting.
void check_vocabulary(core::Diagnostics& rd, const std::string& field, const std::string& value,
                      const std::vector<std::string>& names) {
  if (value.empty() || std::find(names.begin(), names.end(), value) != names.end()) return;
  std::string expected = "empty (not stated) or one of:";
  for (size_t i = 0; i < names.size(); ++i) expected += (i ? ", " : " ") + names[i];
  rd.error(field, "unknown value", value, expected, core::did_you_mean(value, names));
}

Row read_row(const Columns& col, int line, const std::vector<std::string>& f, std::size_t header_size,
             core::Diagnostics& rd) {
  const RowCells cells(col, f, rd);
  Row row;
  row.line = line;
  row.id = cells.text("id");
  const std::string where = "row '" + row.id + "'";
  if (f.size() != header_size)
    rd.error(where, "has " + std::to_string(f.size()) + " fields", "", std::to_string(header_size) + " fields as in the header");
  row.kind = cells.text("kind");
  row.system = cells.text("system");
  row.model = cells.text("model");
  row.precision = cells.text("precision");
  row.fsdp_or_zero = cells.text("fsdp_or_zero");
  row.recompute = cells.text("recompute");
  row.mode = cells.text("mode");
  row.metric = cells.text("metric");
  row.trust = cells.text("trust");
  row.source_url = cells.text("source_url");
  row.notes = cells.text("notes");
  read_counts(cells, where, row);
  const std::string v = cells.text("value");
  char* end = nullptr;
  row.value = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(row.value) || !(row.value > 0))
    rd.error(where + ".value", "not a positive number", v, "the measured figure, e.g. 1543");
  if (row.kind != "train" && row.kind != "infer") rd.error(where + ".kind", "unknown kind", row.kind, "train or infer");
  check_vocabulary(rd, where + ".fsdp_or_zero", row.fsdp_or_zero, mapping::zero_csv_names());
  check_vocabulary(rd, where + ".recompute", row.recompute, mapping::recompute_names());
  return row;
}


// Diagnostics a streamed check collects before it stops (a broken file of millions of rows
// would otherwise hold one per row).
constexpr size_t kStreamDiagnostics = 100;

// The config.json a measurement file ships for a row's model (Row::model_file), looked up once
// per model: a bare id in the file's own layout, `<file's folder>/../models/<id>.json`; a relative
// path, from the file's folder. Empty when the file ships none.
class ModelFiles {
 public:
  explicit ModelFiles(const std::string& csv_path) : csv_path_(csv_path) {}

  const std::string& find(const std::string& model) {
    auto it = found_.find(model);
    if (it == found_.end()) it = found_.emplace(model, locate(model)).first;
    return it->second;
  }

 private:
  std::string locate(const std::string& model) const {
    if (model.empty()) return {};
    const bool is_path = model.find('/') != std::string::npos || fs::path(model).extension() == ".json";
    return core::file_beside(csv_path_, is_path ? model : "../models/" + model + ".json");
  }

  std::string csv_path_;
  std::map<std::string, std::string> found_;
};

// The header, then rows with their diagnostics located at the file and line.
class CsvRows {
 public:
  CsvRows(std::istream& in, const std::string& path, long long max_record_bytes, long long max_rows, bool vetted)
      : records_(in, path, max_record_bytes, vetted), path_(path), max_rows_(max_rows), model_files_(path) {
    int line = 1;
    const bool any = records_.next(header_, line);
    col_ = read_header(any, header_, line, path);
  }

  /// The next row, its cell diagnostics added to `diags`; false at the end.
  bool next(Row& row, core::Diagnostics& diags) {
    std::vector<std::string> fields;
    int line = 0;
    if (!records_.next(fields, line)) return false;
    if (++rows_ > max_rows_) core::fail_limit(path_, "measurement rows", rows_, max_rows_);
    core::Diagnostics rd;
    row = read_row(col_, line, fields, header_.size(), rd);
    row.model_file = model_files_.find(row.model);
    for (auto d : rd.items()) {
      d.file = path_;
      d.line = line;
      diags.add(d);
    }
    return true;
  }

 private:
  RecordReader records_;
  std::string path_;
  long long max_rows_;
  long long rows_ = 0;
  std::vector<std::string> header_;
  Columns col_;
  ModelFiles model_files_;
};

}  // namespace csv_read

using csv_read::CsvRows;

double number_in_notes(std::string digits) {
  digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
  return std::stod(digits);
}

std::vector<Row> read_csv(const std::string& path) {
  std::istringstream text(config::read_text_file(path, "CSV file"));
  CsvRows csv(text, path, core::limits::kCsvRecordBytes, core::limits::kValidationRows, /*vetted=*/true);
  core::Diagnostics diags;
  std::vector<Row> rows;
  Row row;
  while (csv.next(row, diags)) rows.push_back(std::move(row));
  diags.throw_if_any();
  if (rows.empty()) refuse_empty(path);
  return rows;
}

void refuse_empty(const std::string& path) {
  throw core::InputError(core::Diagnostic{path, 0, "rows", "no measurement rows (a header alone, or nothing)", "",
                                          "at least one row under the header (shared/validation/README.md)", ""});
}

struct RowStream::Impl {
  Impl(const std::string& path)
      : file(core::open_regular_file(path, "CSV file")),
        rows(file, path, core::limits::kCsvRecordBytes, core::limits::kValidationStreamRows, /*vetted=*/false) {}
  std::ifstream file;
  CsvRows rows;
};

RowStream::RowStream(const std::string& path) : impl_(std::make_unique<Impl>(path)) {}
RowStream::~RowStream() = default;

void check_has_rows(const std::string& path) {
  RowStream rows(path);
  Row first;
  if (!rows.next(first)) refuse_empty(path);
}

bool RowStream::next(Row& row) {
  core::Diagnostics diags;
  const bool more = impl_->rows.next(row, diags);
  diags.throw_if_any();
  return more;
}

RowSelection RowSelection::parse(const std::string& text) {
  RowSelection s;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');)
    if (item = core::trim(item); !item.empty()) s.globs.push_back(item);
  return s;
}

bool RowSelection::keeps(const Row& row) const {
  if (globs.empty()) return true;
  for (const auto& g : globs)
    if (core::glob_match(g, row.id)) return true;
  return false;
}

std::string RowSelection::text() const {
  std::string out;
  for (const auto& g : globs) out += (out.empty() ? "" : ",") + g;
  return out;
}

std::vector<Row> kept_rows(const std::vector<Row>& rows, const RowSelection& keep) {
  std::vector<Row> out;
  for (const auto& r : rows)
    if (keep.keeps(r)) out.push_back(r);
  return out;
}

void refuse_selection(const std::string& file, const std::string& field, const std::string& text,
                      const RowSelection& keep) {
  const std::string expected = "comma-separated globs over the file's row ids ('*' any run, '?' one character)";
  if (keep.all()) throw core::InputError(core::Diagnostic{"", 0, field, "names no glob", text, expected, ""});
  throw core::InputError(core::Diagnostic{file, 0, field, "matches no row id of the file", text, expected, ""});
}

std::size_t check_csv_stream(const std::string& path, const RowSelection& keep) {
  std::ifstream file = core::open_regular_file(path, "CSV file");
  CsvRows rows(file, path, core::limits::kCsvRecordBytes, core::limits::kValidationStreamRows, /*vetted=*/false);
  core::Diagnostics diags;
  Row row;
  std::size_t kept = 0;
  while (rows.next(row, diags)) {
    if (keep.keeps(row)) ++kept;
    if (diags.items().size() >= csv_read::kStreamDiagnostics) break;  // enough to act on; the rest after a fix
  }
  diags.throw_if_any();
  return kept;
}

}  // namespace xpusim::validation
