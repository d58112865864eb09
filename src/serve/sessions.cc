// Multi-turn sessions as a request trace (include/xpusim/serve/sessions.h; docs/serving.md,
// "Multi-turn sessions"). Block ids: a prompt's whole blocks that the session's previous prompt
// also held keep that prompt's ids (the same tokens before them, so the same prefix); every other
// block gets a new id. The system prompt's whole blocks have the same ids in every session.

#include "xpusim/serve/sessions.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <ostream>
#include <string>
#include <utility>

#include "xpusim/core/diagnostics.h"
#include "xpusim/core/format.h"
#include "xpusim/core/limits.h"
#include "rng.h"

namespace xpusim::serve {

namespace {

using detail::Rng;

/// Room for an arrival time of at most 30 days in seconds with six decimals (16 characters).
constexpr std::size_t kArrivalChars = 32;

/// A later turn's (new message, answer) lengths.
using NextLengths = std::function<std::pair<long long, long long>(Rng&)>;

void check_spec(const SessionSpec& s) {
  core::Diagnostics d;
  auto positive = [&](const char* field, double v, const std::string& expected) {
    if (!(v > 0) || !std::isfinite(v)) d.error(field, "out of range", core::fmt_num(v), expected);
  };
  if (!(s.turns_mean >= 1) || s.turns_mean > static_cast<double>(core::limits::kArrivalsRows))
    d.error("turns", "out of range", core::fmt_num(s.turns_mean), "a mean number of turns per session >= 1");
  positive("think_time_s", s.think_time_mean_s, "a mean think time > 0 s");
  positive("message_len", s.message_len_mean, "a mean message length > 0 tokens");
  positive("answer_len", s.answer_len_mean, "a mean answer length > 0 tokens");
  if (!(s.length_sigma >= 0) || s.length_sigma > SessionSpec::kMaxLengthSigma)
    d.error("length_sigma", "out of range", core::fmt_num(s.length_sigma),
            "0 to " + core::fmt_num(SessionSpec::kMaxLengthSigma) + " (log-space)");
  if (s.system_prompt_len < 0 || s.system_prompt_len >= s.max_context)
    d.error("system_prompt_len", "out of range", std::to_string(s.system_prompt_len), "0 tokens to less than max_context");
  if (s.max_context < 2 || s.max_context > core::limits::kSequence)
    d.error("max_context", "out of range", std::to_string(s.max_context), "2 to " + std::to_string(core::limits::kSequence) + " tokens");
  if (s.block_tokens < 1 || s.block_tokens > core::limits::kSequence)
    d.error("block_tokens", "out of range", std::to_string(s.block_tokens), "1 to " + std::to_string(core::limits::kSequence) + " tokens");
  d.throw_if_any();
}

/// Turns of one session: geometric with mean m (each turn ends the session with chance 1/m).
long long draw_turns(Rng& rng, double mean) {
  if (mean <= 1) return 1;
  const double turns = 1 + std::floor(std::log(rng.uniform()) / std::log1p(-1 / mean));
  return static_cast<long long>(std::min(turns, static_cast<double>(core::limits::kArrivalsRows)));
}

long long draw_length(Rng& rng, double mean, double sigma) {
  const double x = rng.lognormal(mean, sigma);
  return std::clamp<long long>(std::llround(std::min(x, static_cast<double>(core::limits::kSequence))), 1,
                               core::limits::kSequence);
}

/// Builds sessions turn by turn, handing out block ids.
class SessionWriter {
 public:
  explicit SessionWriter(const SessionSpec& spec) : s_(spec) {
    for (long long i = 0; i < spec.system_prompt_len / spec.block_tokens; ++i) system_blocks_.push_back(next_id_++);
  }

  /// One session from its first arrival and first lengths; later turns' lengths from `next`.
  void add(long long session, double t, long long message, long long answer, Rng& rng, const NextLengths& next) {
    const long long turns = draw_turns(rng, s_.turns_mean);
    std::vector<BlockId> blocks = system_blocks_;
    long long prompt = s_.system_prompt_len;  // the context so far: the previous prompt and answer
    long long shared = s_.system_prompt_len / s_.block_tokens;
    for (long long k = 1; k <= turns; ++k) {
      if (k > 1) {
        t += rng.exponential(s_.think_time_mean_s);
        std::tie(message, answer) = next(rng);
      }
      if (prompt + message + answer > s_.max_context) {
        ++out_.ended_at_context;
        out_.without_turns += k == 1 ? 1 : 0;
        break;
      }
      prompt += message;
      check_span(t);
      blocks.resize(static_cast<size_t>(shared));
      while (static_cast<long long>(blocks.size()) * s_.block_tokens < prompt) blocks.push_back(next_id_++);
      check_ids(static_cast<long long>(blocks.size()));
      Request r;
      r.arrival = to_sim_time(core::seconds(t));
      r.in_len = prompt;
      r.out_len = answer;
      r.session = session;
      r.turn = k;
      r.prefix_blocks = blocks;
      push(std::move(r));
      shared = prompt / s_.block_tokens;
      prompt += answer;
    }
  }

  Sessions take(long long sessions) {
    if (out_.turns.empty())
      core::fail("max_context", "no session has a turn within the context", std::to_string(s_.max_context) + " tokens",
                 "a context that holds the system prompt, a first message and its answer");
    std::stable_sort(out_.turns.begin(), out_.turns.end(), [](const Request& a, const Request& b) {
      return std::tie(a.arrival, a.session, a.turn) < std::tie(b.arrival, b.session, b.turn);
    });
    out_.sessions = sessions;
    return std::move(out_);
  }

 private:
  void check_span(double t) const {
    if (t > core::limits::kArrivalSpanSeconds)
      core::fail("sessions", "a turn arrives beyond the longest trace", core::fmt_num(t) + " s",
                 "arrivals within " + core::fmt_num(core::limits::kArrivalSpanSeconds) +
                     " s (30 days): fewer sessions, a higher session rate or shorter think times");
  }
  /// A row's ids must fit one CSV record of the reader, and all rows' ids the memory limit.
  void check_ids(long long ids) {
    total_ids_ += ids;
    const auto digits = static_cast<long long>(std::to_string(next_id_).size());
    if (ids * (digits + 1) > core::limits::kCsvRecordBytes / 2 || total_ids_ > core::limits::kTraceBlockIds)
      core::fail("block_tokens", "the prompts have too many blocks for a trace file",
                 std::to_string(ids) + " ids in one row, " + std::to_string(total_ids_) + " in all",
                 "at most " + std::to_string(core::limits::kTraceBlockIds) +
                     " ids in all and rows within the CSV record limit: a larger block size, a smaller "
                     "max_context or fewer sessions");
  }
  void push(Request r) {
    if (static_cast<long long>(out_.turns.size()) >= core::limits::kArrivalsRows)
      core::fail("sessions", "more turns than a trace may hold", std::to_string(out_.turns.size() + 1),
                 "at most " + std::to_string(core::limits::kArrivalsRows) + " rows: fewer sessions or turns");
    out_.turns.push_back(std::move(r));
  }

  const SessionSpec& s_;
  std::vector<BlockId> system_blocks_;
  BlockId next_id_ = 1;
  long long total_ids_ = 0;
  Sessions out_;
};

}  // namespace

Sessions make_sessions(const SessionSpec& spec) {
  check_spec(spec);
  if (spec.sessions < 1 || spec.sessions > core::limits::kArrivalsRows)
    core::fail("sessions", "out of range", std::to_string(spec.sessions),
               "1 to " + std::to_string(core::limits::kArrivalsRows) + " sessions");
  if (!(spec.session_rate_per_s > 0) || !std::isfinite(spec.session_rate_per_s))
    core::fail("rate", "out of range", core::fmt_num(spec.session_rate_per_s), "a session start rate > 0 per s");
  Rng starts(spec.seed), draws(spec.seed ^ 0x9e3779b97f4a7c15ULL);
  const NextLengths next = [&spec](Rng& rng) {
    const long long message = draw_length(rng, spec.message_len_mean, spec.length_sigma);
    return std::make_pair(message, draw_length(rng, spec.answer_len_mean, spec.length_sigma));
  };
  SessionWriter w(spec);
  double t = 0;
  for (long long i = 0; i < spec.sessions; ++i) {
    t += starts.exponential(1 / spec.session_rate_per_s);
    const auto [message, answer] = next(draws);
    w.add(i, t, message, answer, draws, next);
  }
  return w.take(spec.sessions);
}

Sessions make_sessions_from_trace(const std::vector<Request>& trace, const SessionSpec& spec) {
  check_spec(spec);
  if (trace.empty()) core::fail("from", "the trace has no requests", "", "a trace with at least one row");
  Rng draws(spec.seed ^ 0x9e3779b97f4a7c15ULL);
  const NextLengths next = [&trace](Rng& rng) {
    const auto i = std::min(trace.size() - 1, static_cast<size_t>(rng.uniform() * static_cast<double>(trace.size())));
    return std::make_pair(trace[i].in_len, trace[i].out_len);
  };
  SessionWriter w(spec);
  for (size_t i = 0; i < trace.size(); ++i)
    w.add(static_cast<long long>(i), core::sim_seconds(trace[i].arrival), trace[i].in_len, trace[i].out_len, draws, next);
  return w.take(static_cast<long long>(trace.size()));
}

void write_sessions_csv(std::ostream& out, const std::vector<Request>& turns) {
  out << "arrival_s,in_len,out_len,prefix_hashes,session_id,turn\n";
  std::array<char, kArrivalChars> arrival{};
  for (const Request& r : turns) {
    std::snprintf(arrival.data(), arrival.size(), "%.6f", core::sim_seconds(r.arrival));  // microseconds
    out << arrival.data() << ',' << r.in_len << ',' << r.out_len << ',';
    for (size_t b = 0; b < r.prefix_blocks.size(); ++b) out << (b ? " " : "") << r.prefix_blocks[b];
    out << ',' << r.session << ',' << r.turn << '\n';
  }
}

}  // namespace xpusim::serve
