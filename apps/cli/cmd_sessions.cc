// xpusim sessions [--from TRACE] [--sessions N --rate R] [--turns T] [--think-time S]
// [--message-len N] [--answer-len N] [--length-sigma X] [--system-prompt-len N] [--max-context N]
// [--block-tokens N] [--seed N] [--out FILE [--json]]: multi-turn sessions written as an arrivals file
// (docs/serving.md, "Multi-turn sessions") that `serve --arrivals` and `trace-stats` read.

#include <iostream>
#include <sstream>

#include "cli_util.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/report/trace_stats_report.h"
#include "xpusim/serve/sessions.h"
#include "xpusim/serve/trace_stats.h"

namespace xpusim::cli {

int run_sessions(const Args& args) {
  CLI::App app{"Multi-turn sessions as a request trace: each turn's prompt is the previous prompt and answer "
               "plus a new message (prefix_hashes, session_id, turn)",
               "xpusim sessions"};
  serve::SessionSpec spec;
  std::string from, out;
  app.add_option("--from", from, "start one session at each row of this arrivals CSV (its lengths as the first turn's; "
                                 "later turns draw lengths from its rows)");
  app.add_option("--sessions", spec.sessions, "sessions to generate without --from (default 100)");
  app.add_option("--rate", spec.session_rate_per_s, "session starts per second, Poisson, without --from (default 1)");
  app.add_option("--turns", spec.turns_mean, "mean turns per session, geometric (default 4)");
  app.add_option("--think-time", spec.think_time_mean_s, "mean seconds from a turn's arrival to the next, exponential (default 60)");
  app.add_option("--message-len", spec.message_len_mean, "mean tokens of a turn's new message, lognormal (default 300)");
  app.add_option("--answer-len", spec.answer_len_mean, "mean tokens of a turn's answer, lognormal (default 300)");
  app.add_option("--length-sigma", spec.length_sigma, "log-space spread of the lengths (default 0.8; 0: every length its mean)");
  app.add_option("--system-prompt-len", spec.system_prompt_len, "tokens of a system prompt every session starts with (default 0)");
  app.add_option("--max-context", spec.max_context, "a session ends before a prompt and its answer pass this (default 131072)");
  app.add_option("--block-tokens", spec.block_tokens, "tokens per prefix_hashes block (default 512)");
  app.add_option("--seed", spec.seed, "random seed (default 1)");
  app.add_option("--out", out, "write the trace here and print a summary (default: the trace to stdout)");
  bool json = false;
  app.add_flag("--json", json, "with --out: the summary as one JSON document");
  if (int rc = parse(app, args); rc >= 0) return rc;
  if (json && out.empty()) core::fail("--json", "needs --out", "", "--out FILE (without it the trace itself goes to stdout)");

  const serve::Sessions s = from.empty() ? serve::make_sessions(spec)
                                         : serve::make_sessions_from_trace(serve::read_arrivals_file(from).requests, spec);
  std::ostringstream csv;
  serve::write_sessions_csv(csv, s.turns);
  if (out.empty()) {
    std::cout << csv.str();
    return 0;
  }
  write_text_file("--out", out, csv.str());
  const serve::TraceStats t = serve::trace_stats(s.turns, spec.block_tokens, {});
  if (json) std::cout << report::sessions_document(provenance(false, false), out, from, s, t).dump(2) << "\n";
  else std::cout << report::sessions_text(out, s, t);
  return 0;
}

}  // namespace xpusim::cli
