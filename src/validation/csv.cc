// Reading the validation CSV (RFC 4180 quoting), column names per ../shared/validation/README.md.

#include <fstream>
#include <map>
#include <sstream>

#include "xpusim/core/diagnostics.h"
#include "xpusim/core/suggest.h"
#include "xpusim/validation/row.h"

namespace xpusim::validation {

namespace {

// Splits the whole text into records of fields, honouring quotes (which may hold newlines).
std::vector<std::pair<int, std::vector<std::string>>> parse_records(const std::string& text,
                                                                    const std::string& path) {
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

}  // namespace

std::vector<Row> read_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) core::fail("", "cannot open file '" + path + "'", path, "an existing, readable CSV file");
  std::stringstream ss;
  ss << in.rdbuf();
  auto recs = parse_records(ss.str(), path);
  core::Diagnostics diags;
  if (recs.empty()) {
    diags.error("", "empty file", path, "a header line and rows");
    diags.set_file(path);
    diags.throw_if_any();
  }
  const auto& header = recs[0].second;
  std::map<std::string, size_t> col;
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
  for (const char* req : {"id", "kind", "system", "chips", "model", "metric", "value"}) {
    if (!col.count(req)) diags.error("header", std::string("missing required column '") + req + "'");
  }
  if (!diags.empty()) {
    for (auto& d : const_cast<std::vector<core::Diagnostic>&>(diags.items())) d.line = recs[0].first;
    diags.set_file(path);
    diags.throw_if_any();
  }
  std::vector<Row> rows;
  for (size_t r = 1; r < recs.size(); ++r) {
    const auto& [line, f] = recs[r];
    core::Diagnostics rd;
    auto get = [&](const char* name) -> std::string {
      auto it = col.find(name);
      if (it == col.end() || it->second >= f.size()) return {};
      return f[it->second];
    };
    Row row;
    row.line = line;
    row.id = get("id");
    const std::string where = "row '" + row.id + "'";
    if (f.size() != header.size())
      rd.error(where, "has " + std::to_string(f.size()) + " fields", "",
               std::to_string(header.size()) + " fields as in the header");
    auto integer = [&](const char* name) -> std::optional<long long> {
      const std::string v = get(name);
      if (v.empty()) return std::nullopt;
      char* end = nullptr;
      long long x = std::strtoll(v.c_str(), &end, 10);
      if (*end != '\0' || x < 0) {
        rd.error(where + "." + name, "not a non-negative integer", v, "an integer such as 8");
        return std::nullopt;
      }
      return x;
    };
    row.kind = get("kind");
    row.system = get("system");
    row.model = get("model");
    row.precision = get("precision");
    row.fsdp_or_zero = get("fsdp_or_zero");
    row.recompute = get("recompute");
    row.mode = get("mode");
    row.metric = get("metric");
    row.trust = get("trust");
    row.source_url = get("source_url");
    row.notes = get("notes");
    row.chips = integer("chips").value_or(0);
    row.seq_len = integer("seq_len");
    row.global_batch_seqs = integer("global_batch_seqs");
    row.micro_batch = integer("micro_batch");
    row.tp = integer("tp");
    row.pp = integer("pp");
    row.dp = integer("dp");
    row.cp = integer("cp");
    row.ep = integer("ep");
    row.vpp = integer("vpp");
    row.in_len = integer("in_len");
    row.out_len = integer("out_len");
    row.batch_or_concurrency = integer("batch_or_concurrency");
    const std::string v = get("value");
    char* end = nullptr;
    row.value = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(row.value > 0))
      rd.error(where + ".value", "not a positive number", v, "the measured figure, e.g. 1543");
    if (row.kind != "train" && row.kind != "infer")
      rd.error(where + ".kind", "unknown kind", row.kind, "train or infer");
    for (auto d : rd.items()) {
      d.file = path;
      d.line = line;
      diags.add(d);
    }
    rows.push_back(std::move(row));
  }
  diags.throw_if_any();
  return rows;
}

}  // namespace xpusim::validation
