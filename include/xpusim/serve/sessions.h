#pragma once
// Multi-turn sessions as a request trace (`xpusim sessions`, docs/serving.md, "Multi-turn
// sessions"): each turn's prompt is the previous turn's prompt and answer plus a new message, so
// its leading blocks repeat the previous prompt's whole blocks. Seeded and deterministic; written
// as an arrivals file (with prefix_hashes, session_id and turn) that `serve --arrivals` replays.

#include <cstdint>
#include <iosfwd>
#include <vector>

#include "xpusim/serve/simulator.h"

namespace xpusim::serve {

/// How sessions are drawn. From distributions: `sessions` sessions start as a Poisson process at
/// `session_rate_per_s`. From a plain trace (make_sessions_from_trace): each trace row starts one,
/// at its arrival and with its lengths as the first turn's.
struct SessionSpec {
  static constexpr double kMaxLengthSigma = 3;
  long long sessions = 100;
  double session_rate_per_s = 1;
  double turns_mean = 4;         ///< turns per session: geometric with this mean (>= 1)
  double think_time_mean_s = 60; ///< from one turn's arrival to the next: exponential with this mean
  double message_len_mean = 300; ///< a turn's new message, tokens: lognormal with this mean
  double answer_len_mean = 300;  ///< a turn's answer (out_len), tokens: lognormal with this mean
  double length_sigma = 0.8;     ///< log-space spread of both lengths (0: every length its mean)
  long long system_prompt_len = 0;  ///< tokens every session's first prompt starts with (shared)
  long long max_context = 131072;///< a session ends before a prompt and its answer would pass this
  long long block_tokens = 512;  ///< tokens per prefix_hashes block
  std::uint64_t seed = 1;
};

/// Generated sessions: their turns in arrival order (ties by session, then turn), each Request
/// with its session, turn and prefix blocks.
struct Sessions {
  std::vector<Request> turns;
  long long sessions = 0;
  /// Sessions that ended before their drawn turns because the next prompt and its answer would
  /// pass max_context; of them, those with no turn at all (a first prompt beyond it).
  long long ended_at_context = 0, without_turns = 0;
};

/// `spec.sessions` sessions. Throws InputError on a spec out of range.
Sessions make_sessions(const SessionSpec& spec);

/// Sessions started by the rows of a plain trace: row i starts session i at its arrival with its
/// in_len as the first message and its out_len as the first answer; the later turns' messages
/// and answers are lengths of the trace's rows drawn at random (seeded), their think times as in
/// `spec`. `spec.sessions` and `spec.session_rate_per_s` are not read.
Sessions make_sessions_from_trace(const std::vector<Request>& trace, const SessionSpec& spec);

/// Writes turns as an arrivals CSV: arrival_s,in_len,out_len,prefix_hashes,session_id,turn.
void write_sessions_csv(std::ostream& out, const std::vector<Request>& turns);

}  // namespace xpusim::serve
