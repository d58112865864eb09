#include "xpusim/report/trace_stats_report.h"

#include <nlohmann/json.hpp>

#include "xpusim/core/format.h"

namespace xpusim::report {

namespace {

Json lengths_json(const serve::LengthSummary& l) {
  return Json{{"mean", l.mean}, {"median", l.median}, {"max", l.max}};
}

std::string capacity_text(long long tokens) { return tokens > 0 ? core::fmt_int(tokens) : "unbounded"; }

}  // namespace

namespace {

/// The figures of a trace (trace-stats' document without its envelope).
Json trace_figures(const serve::TraceStats& s) {
  Json caches = Json::array();
  for (const auto& c : s.caches)
    caches.push_back({{"capacity_tokens", c.capacity_tokens > 0 ? Json(c.capacity_tokens) : Json(nullptr)},
                      {"requests_hit", c.tally.requests_hit},
                      {"blocks_hit", c.tally.blocks_hit},
                      {"tokens_hit", c.tally.tokens_hit},
                      {"block_hit_ratio", c.tally.block_hit_rate()},
                      {"token_hit_ratio", c.tally.token_hit_rate()}});
  Json j;
  j["requests"] = s.requests;
  j["rows_with_prefix_hashes"] = s.rows_with_prefix_hashes;
  j["span_s"] = s.span_s;
  j["sessions"] = s.rows_in_sessions > 0 ? Json(s.sessions) : Json(nullptr);
  j["rows_in_sessions"] = s.rows_in_sessions;
  j["in_len"] = lengths_json(s.in_len);
  j["out_len"] = lengths_json(s.out_len);
  j["prompt_tokens"] = s.prompt_tokens;
  j["output_tokens"] = s.output_tokens;
  j["blocks"] = s.blocks;
  j["distinct_blocks"] = s.distinct_blocks;
  j["caches"] = caches;
  return j;
}

}  // namespace

Json trace_stats_document(const Provenance& provenance, const std::string& file, const serve::TraceStats& s) {
  const Json inputs = {{"file", file}, {"block_tokens", s.block_tokens}};
  return document("trace-stats", provenance, inputs, trace_figures(s));
}

Json sessions_document(const Provenance& provenance, const std::string& out, const std::string& from,
                       const serve::Sessions& sessions, const serve::TraceStats& s) {
  const Json inputs = {{"out", out}, {"from", from.empty() ? Json(nullptr) : Json(from)}, {"block_tokens", s.block_tokens}};
  Json j = trace_figures(s);
  j["sessions"] = sessions.sessions;
  j["sessions_ended_at_context"] = sessions.ended_at_context;
  j["sessions_without_turns"] = sessions.without_turns;
  return document("sessions", provenance, inputs, j);
}

std::string sessions_text(const std::string& out, const serve::Sessions& sessions, const serve::TraceStats& t) {
  std::string o = core::strformat("%s: %s sessions, %s turns over %s s\n", out.c_str(), core::fmt_int(sessions.sessions).c_str(),
                                  core::fmt_int(t.requests).c_str(), core::fmt_num(t.span_s, 4).c_str());
  o += core::strformat("  prompts mean %s tokens (max %s), answers mean %s tokens\n", core::fmt_num(t.in_len.mean, 4).c_str(),
                       core::fmt_int(t.in_len.max).c_str(), core::fmt_num(t.out_len.mean, 4).c_str());
  if (!t.caches.empty())
    o += core::strformat("  prompt tokens an unbounded prefix cache serves: %.2f%%\n", 100 * t.caches.front().tally.token_hit_rate());
  if (sessions.ended_at_context > 0)
    o += core::strformat("  %s sessions ended early at max_context (%s of them before their first turn)\n",
                         core::fmt_int(sessions.ended_at_context).c_str(), core::fmt_int(sessions.without_turns).c_str());
  return o;
}

std::string trace_stats_text(const std::string& file, const serve::TraceStats& s) {
  std::string o = core::strformat("%s: %s requests over %s s\n", file.c_str(), core::fmt_int(s.requests).c_str(),
                                  core::fmt_num(s.span_s, 6).c_str());
  o += core::strformat("  in_len   mean %s, median %s, max %s tokens (%s in all)\n", core::fmt_num(s.in_len.mean, 6).c_str(),
                       core::fmt_int(s.in_len.median).c_str(), core::fmt_int(s.in_len.max).c_str(),
                       core::fmt_int(s.prompt_tokens).c_str());
  o += core::strformat("  out_len  mean %s, median %s, max %s tokens (%s in all)\n", core::fmt_num(s.out_len.mean, 6).c_str(),
                       core::fmt_int(s.out_len.median).c_str(), core::fmt_int(s.out_len.max).c_str(),
                       core::fmt_int(s.output_tokens).c_str());
  if (s.sessions > 0)
    o += core::strformat("  sessions %s, %s turns per session on average\n", core::fmt_int(s.sessions).c_str(),
                         core::fmt_num(static_cast<double>(s.rows_in_sessions) / static_cast<double>(s.sessions), 3).c_str());
  if (s.caches.empty()) return o + "  no prefix_hashes: prefix reuse unknown\n";
  o += core::strformat("  prefix blocks: %s of %s tokens (%s distinct) on %s rows\n", core::fmt_int(s.blocks).c_str(),
                       core::fmt_int(s.block_tokens).c_str(), core::fmt_int(s.distinct_blocks).c_str(),
                       core::fmt_int(s.rows_with_prefix_hashes).c_str());
  o += "  prefix reuse in file order (leading blocks matched; LRU eviction of whole blocks):\n";
  o += "    cache tokens   blocks hit   prompt tokens hit   requests hit\n";
  for (const auto& c : s.caches)
    o += core::strformat("    %12s   %9.2f%%   %16.2f%%   %12s\n", capacity_text(c.capacity_tokens).c_str(),
                         100 * c.tally.block_hit_rate(), 100 * c.tally.token_hit_rate(),
                         core::fmt_int(c.tally.requests_hit).c_str());
  return o;
}

}  // namespace xpusim::report
