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

Json trace_stats_document(const Provenance& provenance, const std::string& file, const serve::TraceStats& s) {
  const Json inputs = {{"file", file}, {"block_tokens", s.block_tokens}};
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
  j["in_len"] = lengths_json(s.in_len);
  j["out_len"] = lengths_json(s.out_len);
  j["prompt_tokens"] = s.prompt_tokens;
  j["output_tokens"] = s.output_tokens;
  j["blocks"] = s.blocks;
  j["distinct_blocks"] = s.distinct_blocks;
  j["caches"] = caches;
  return document("trace-stats", provenance, inputs, j);
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
