// The arrivals CSV of `serve --arrivals FILE` (docs/serving.md, "Arrivals"): a header naming its
// columns (arrival_s, in_len, out_len, and optionally prefix_hashes, session_id and turn), one request per row in
// arrival order. Every field is parsed whole; the file's size, its rows and each record are
// bounded (docs/errors.md, "Limits"), and a device or FIFO is refused before a byte is read.

#include <algorithm>
#include <iterator>
#include <limits>
#include <charconv>
#include <fstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "xpusim/core/diagnostics.h"
#include "xpusim/core/file_read.h"
#include "xpusim/core/format.h"
#include "xpusim/core/limits.h"
#include "xpusim/serve/simulator.h"

namespace xpusim::serve {

namespace {

enum class Column { Arrival, InLen, OutLen, PrefixHashes, SessionId, Turn };
constexpr std::string_view kColumnNames[] = {"arrival_s", "in_len", "out_len", "prefix_hashes", "session_id", "turn"};
constexpr const char* kForm = "arrival_s,in_len,out_len[,prefix_hashes][,session_id,turn]";
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = line.find(',', at);
    out.push_back(line.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at));
    if (comma == std::string_view::npos) return out;
    at = comma + 1;
  }
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The columns a header names; an unknown, repeated or missing column is a diagnostic.
std::vector<Column> read_header(std::string_view line, core::Diagnostics& d) {
  std::vector<Column> cols;
  for (const std::string_view field : split(line)) {
    const std::string_view name = trimmed(field);
    const auto it = std::find(std::begin(kColumnNames), std::end(kColumnNames), name);
    if (it == std::end(kColumnNames)) {
      d.error("header", "unknown column", std::string(name), std::string("the columns ") + kForm);
      continue;
    }
    const auto c = static_cast<Column>(it - std::begin(kColumnNames));
    if (std::find(cols.begin(), cols.end(), c) != cols.end()) d.error("header", "repeated column", std::string(name), kForm);
    cols.push_back(c);
  }
  for (const Column need : {Column::Arrival, Column::InLen, Column::OutLen})
    if (std::find(cols.begin(), cols.end(), need) == cols.end())
      d.error("header", "missing column", std::string(kColumnNames[static_cast<int>(need)]), kForm);
  const bool session = std::find(cols.begin(), cols.end(), Column::SessionId) != cols.end();
  const bool turn = std::find(cols.begin(), cols.end(), Column::Turn) != cols.end();
  if (session != turn)
    d.error("header", "session_id and turn come together", session ? "session_id without turn" : "turn without session_id",
            kForm);
  return cols;
}

// A whole number in [least, most], the field parsed whole.
bool parse_whole(std::string_view s, long long least, long long most, long long& out) {
  s = trimmed(s);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && out >= least && out <= most;
}

// A length: 1 to core::limits::kSequence tokens.
bool parse_length(std::string_view s, long long& out) { return parse_whole(s, 1, core::limits::kSequence, out); }

bool parse_seconds(std::string_view s, double& out) {
  s = trimmed(s);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && out >= 0 && out <= core::limits::kArrivalSpanSeconds;
}

// prefix_hashes: block ids (whole numbers below 2^64) separated by spaces; may be empty.
bool parse_hashes(std::string_view s, std::vector<BlockId>& out) {
  out.clear();
  s = trimmed(s);
  while (!s.empty()) {
    const std::size_t space = s.find(' ');
    const std::string_view word = s.substr(0, space);
    BlockId id = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), id);
    if (word.empty() || ec != std::errc() || end != word.data() + word.size()) return false;
    out.push_back(id);
    s = space == std::string_view::npos ? std::string_view{} : trimmed(s.substr(space + 1));
  }
  return true;
}

// One row into `out`; an empty string when it is good, else what is wrong with it.
std::string read_row(std::string_view line, const std::vector<Column>& cols, double last_arrival, Request& out,
                     double& t) {
  if (line.find('\0') != std::string_view::npos) return "a NUL byte in the row";
  const std::vector<std::string_view> fields = split(line);
  if (fields.size() != cols.size())
    return std::to_string(fields.size()) + " fields where the header names " + std::to_string(cols.size());
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const std::string_view f = fields[i];
    switch (cols[i]) {
      case Column::Arrival:
        if (!parse_seconds(f, t)) return "arrival_s is not a time in [0, 2592000] s (30 days)";
        break;
      case Column::InLen:
        if (!parse_length(f, out.in_len)) return "in_len is not a whole number of tokens >= 1";
        break;
      case Column::OutLen:
        if (!parse_length(f, out.out_len)) return "out_len is not a whole number of tokens >= 1";
        break;
      case Column::PrefixHashes:
        if (!parse_hashes(f, out.prefix_blocks))
          return "prefix_hashes is not a list of block ids (whole numbers below 2^64) separated by spaces";
        break;
      case Column::SessionId:
        if (!parse_whole(f, 0, std::numeric_limits<long long>::max(), out.session)) return "session_id is not a whole number from 0 (below 2^63)";
        break;
      case Column::Turn:
        if (!parse_whole(f, 1, std::numeric_limits<long long>::max(), out.turn)) return "turn is not a whole number from 1 (below 2^63)";
        break;
    }
  }
  if (t < last_arrival) return "arrival_s goes back in time (rows must be in arrival order)";
  out.arrival = to_sim_time(core::seconds(t));
  return {};
}

}  // namespace

ArrivalsFile read_arrivals_file(const std::string& path) {
  std::ifstream in = core::open_regular_file_within(path, std::string("arrivals CSV (") + kForm + ")",
                                                    core::limits::kArrivalsFileBytes);
  core::Diagnostics d;
  ArrivalsFile file;
  std::vector<Request>& out = file.requests;
  // Two passes over the (regular) file: its lines, then its rows into requests reserved at once.
  // A vector that doubles as it grows holds up to twice its rows at its last reallocation, and
  // 10^7 rows must run within 1 GiB (docs/errors.md, "Limits").
  const auto lines = std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n') + 1;
  out.reserve(static_cast<std::size_t>(std::min<long long>(lines, core::limits::kArrivalsRows)));
  in.clear();
  in.seekg(0);
  std::vector<Column> cols{Column::Arrival, Column::InLen, Column::OutLen};
  std::string line;
  int n = 0, errors = 0;
  bool first = true;
  double last = 0;
  std::unordered_map<long long, long long> last_turn;  // session -> its latest turn so far
  auto bad = [&](const std::string& message, const std::string& value) {
    core::Diagnostic diag{path, n, "arrivals", message, value, std::string("rows ") + kForm, ""};
    d.add(diag);
    ++errors;
  };
  while (errors < core::limits::kDiagnosticsPerFile && std::getline(in, line)) {
    ++n;
    if (line.size() > static_cast<std::size_t>(core::limits::kCsvRecordBytes)) {
      bad("row longer than " + std::to_string(core::limits::kCsvRecordBytes) + " bytes", line);
      break;
    }
    if (first && line.rfind(kUtf8Bom, 0) == 0) line.erase(0, kUtf8Bom.size());
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (first) {
      first = false;
      if (line.find_first_of("abcdefghijklmnopqrstuvwxyz_") == 0) {
        core::Diagnostics hd;
        cols = read_header(line, hd);
        for (auto diag : hd.items()) {
          diag.file = path;
          diag.line = n;
          d.add(diag);
        }
        if (!hd.empty()) break;
        continue;
      }
    }
    if (static_cast<long long>(out.size()) >= core::limits::kArrivalsRows)
      core::fail_limit(path, "requests (rows)", static_cast<long long>(out.size()) + 1, core::limits::kArrivalsRows);
    Request r;
    double t = 0;
    const std::string why = read_row(line, cols, last, r, t);
    if (!why.empty()) {
      bad(why, line);
      continue;
    }
    if (r.session >= 0) {
      long long& previous = last_turn[r.session];
      if (r.turn <= previous) {
        bad("turn " + std::to_string(r.turn) + " of session " + std::to_string(r.session) + " comes after its turn " +
                std::to_string(previous) + " (a session's turns in order)", line);
        continue;
      }
      previous = r.turn;
    }
    last = t;
    out.push_back(r);
  }
  if (in.bad()) bad("error while reading the file", path);
  if (out.empty() && d.empty()) d.error("arrivals", "the file has no requests", path, std::string("rows ") + kForm);
  d.throw_if_any();
  return file;
}

// In place: the kept requests move to the front of the file's (each lands at or before its own
// index), so shaping never holds a second copy of a large trace.
std::vector<Request> shape_trace(std::vector<Request> trace, const TraceShaping& shaping, const std::string& path) {
  const SimTime from = to_sim_time(core::seconds(shaping.window_from_s));
  const double to_s = shaping.window_to_s;
  const std::string span = trace.empty() ? std::string("no rows")
                                         : "0.." + core::fmt_num(core::sim_seconds(trace.back().arrival)) + " s";
  std::size_t kept = 0;
  for (std::size_t i = 0; i < trace.size(); ++i)
    if (trace[i].arrival >= from && core::sim_seconds(trace[i].arrival) < to_s) {
      if (kept != i) trace[kept] = std::move(trace[i]);
      ++kept;
    }
  trace.resize(kept);
  if (trace.empty())
    core::fail("arrivals_window", "no request arrives in the window",
               core::fmt_num(shaping.window_from_s) + ".." + core::fmt_num(to_s) + " s",
               "a window within the file's arrivals (" + path + ": " + span + ")");
  if (shaping.sample > 0 && shaping.sample < static_cast<long long>(trace.size())) {
    const auto n = static_cast<long double>(trace.size());
    for (long long i = 0; i < shaping.sample; ++i) {
      const auto from_index = static_cast<size_t>(static_cast<long double>(i) * n / static_cast<long double>(shaping.sample));
      if (from_index != static_cast<size_t>(i)) trace[static_cast<size_t>(i)] = std::move(trace[from_index]);
    }
    trace.resize(static_cast<size_t>(shaping.sample));
  }
  for (Request& r : trace)
    r.arrival = to_sim_time(core::seconds(core::sim_seconds(r.arrival - from) / shaping.speedup));
  return trace;
}

long long rows_with_prefix_blocks(const std::vector<Request>& trace) {
  return std::count_if(trace.begin(), trace.end(), [](const Request& r) { return !r.prefix_blocks.empty(); });
}

double trace_rate_per_s(const std::vector<Request>& trace) {
  if (trace.size() < 2) return 0;
  const double span = core::sim_seconds(trace.back().arrival - trace.front().arrival);
  return span > 0 ? static_cast<double>(trace.size() - 1) / span : 0.0;
}

void check_prefix_blocks(const std::string& path, const LoadSpec& load) {
  const long long block = load.trace_block_tokens;
  core::Diagnostics d;
  for (std::size_t i = 0; i < load.trace.size() && static_cast<int>(d.items().size()) < core::limits::kDiagnosticsPerFile; ++i) {
    const Request& r = load.trace[i];
    const long long ids = static_cast<long long>(r.prefix_blocks.size());
    const long long need = (r.in_len + block - 1) / block;
    if (ids == 0 || ids == need) continue;
    d.error(path + ": request " + std::to_string(i + 1), "prefix_hashes and in_len disagree at this block size",
            std::to_string(ids) + " block ids for in_len " + std::to_string(r.in_len),
            std::to_string(need) + " ids of " + std::to_string(block) + " tokens (--arrivals-block-tokens: the file's block size)");
  }
  d.throw_if_any();
}

}  // namespace xpusim::serve
