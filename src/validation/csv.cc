// Reading the validation CSV (RFC 4180 quoting), column names per ../shared/validation/README.md.

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "xpusim/config/document.h"
#include "xpusim/config/values.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/file_read.h"
#include "xpusim/core/limits.h"
#include "xpusim/core/suggest.h"
#include "xpusim/validation/row.h"

namespace xpusim::validation {

namespace {

// Splits the whole text into records of fields, honouring quotes (which may hold newlines);
// stops with a diagnostic past the header and kValidationRows rows.
std::vector<std::pair<int, std::vector<std::string>>> parse_records(const std::string& text,
                                                                    const std::string& path) {
  constexpr auto kMostRecords = static_cast<size_t>(core::limits::kValidationRows) + 1;
  std::vector<std::pair<int, std::vector<std::string>>> out;
  std::vector<std::string> rec;
  std::string field;
  bool quoted = false, any = false;
  int line = 1, rec_line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (ch == '\n') ++line;
        field += ch;
      }
      continue;
    }
    if (ch == '"') {
      quoted = true;
      any = true;
    } else if (ch == ',') {
      rec.push_back(field);
      field.clear();
      any = true;
    } else if (ch == '\n' || ch == '\r') {
      if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) {
        rec.push_back(field);
        out.emplace_back(rec_line, rec);
        if (out.size() > kMostRecords)
          core::fail_limit(path, "measurement rows", core::limits::kValidationRows + 1, core::limits::kValidationRows);
      }
      rec.clear();
      field.clear();
      any = false;
      ++line;
      rec_line = line;
    } else {
      field += ch;
      any = true;
    }
  }
  if (quoted) {
    core::Diagnostic d;
    d.file = path;
    d.line = rec_line;
    d.message = "unterminated quoted field";
    throw core::InputError(d);
  }
  if (any || !field.empty()) {
    rec.push_back(field);
    out.emplace_back(rec_line, rec);
  }
  return out;
}

const std::vector<std::string>& known_columns() {
  static const std::vector<std::string> cols = {
      "id", "kind", "system", "chips", "model", "precision", "seq_len", "global_batch_seqs",
      "micro_batch", "tp", "pp", "dp", "cp", "ep", "vpp", "fsdp_or_zero", "recompute", "in_len",
      "out_len", "batch_or_concurrency", "mode", "metric", "value", "trust", "source_url", "notes"};
  return cols;
}

using Records = std::vector<std::pair<int, std::vector<std::string>>>;
using Columns = std::map<std::string, size_t>;

// Column name → index; unknown, duplicate or missing required columns are diagnostics.
Columns read_header(const Records& recs, const std::string& path) {
  core::Diagnostics diags;
  if (recs.empty()) {
    diags.error("", "empty file", path, "a header line and rows");
    diags.set_file(path);
    diags.throw_if_any();
  }
  const auto& header = recs[0].second;
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
    d.line = recs[0].first;
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
  return row;
}

}  // namespace

std::vector<Row> read_csv(const std::string& path) {
  const Records recs = parse_records(config::read_text_file(path, "CSV file"), path);
  if (static_cast<long long>(recs.size()) - 1 > core::limits::kValidationRows)  // the last record, unterminated
    core::fail_limit(path, "measurement rows", static_cast<long long>(recs.size()) - 1, core::limits::kValidationRows);
  const Columns col = read_header(recs, path);
  core::Diagnostics diags;
  std::vector<Row> rows;
  for (size_t r = 1; r < recs.size(); ++r) {
    const auto& [line, fields] = recs[r];
    core::Diagnostics rd;
    rows.push_back(read_row(col, line, fields, recs[0].second.size(), rd));
    for (auto d : rd.items()) {
      d.file = path;
      d.line = line;
      diags.add(d);
    }
  }
  diags.throw_if_any();
  return rows;
}

}  // namespace xpusim::validation
