// xpusim trace-stats FILE [--block-tokens N] [--cache-tokens N,N,...] [--json]: an arrivals file's
// requests, lengths and span, and its prefix reuse replayed through an unbounded prefix cache and
// LRU caches of the capacities asked (docs/serving.md, "Prefix caching"). Reads no catalog.

#include <nlohmann/json.hpp>
#include <iostream>

#include "cli_util.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/format.h"
#include "xpusim/core/limits.h"
#include "xpusim/report/trace_stats_report.h"
#include "xpusim/serve/trace_stats.h"

namespace xpusim::cli {

int run_trace_stats(const Args& args) {
  CLI::App app{"An arrivals file's requests and lengths, and its prefix reuse through prefix caches (LRU)",
               "xpusim trace-stats"};
  std::string file;
  long long block_tokens = 512;
  std::vector<long long> capacities;
  bool json = false;
  app.add_option("file", file, "arrivals CSV: arrival_s,in_len,out_len[,prefix_hashes][,session_id,turn]")->required();
  app.add_option("--block-tokens", block_tokens, "tokens per block of prefix_hashes (default 512, the Mooncake traces')");
  app.add_option("--cache-tokens", capacities, "LRU cache capacities to replay, in tokens (comma-separated)")
      ->delimiter(',');
  app.add_flag("--json", json, "print one JSON document");
  if (int rc = parse(app, args); rc >= 0) return rc;

  core::Diagnostics d;
  if (block_tokens < 1 || block_tokens > core::limits::kSequence)
    d.error("--block-tokens", "not a block size", std::to_string(block_tokens),
            "1 to " + std::to_string(core::limits::kSequence) + " tokens");
  for (const long long c : capacities)
    if (c < 1 || static_cast<double>(c) > core::limits::kBatchTokens)
      d.error("--cache-tokens", "not a cache capacity", std::to_string(c),
              "1 to " + core::fmt_num(core::limits::kBatchTokens) + " tokens");
  d.throw_if_any();
  serve::LoadSpec load;
  load.trace = serve::read_arrivals_file(file).requests;
  load.trace_block_tokens = block_tokens;
  serve::check_prefix_blocks(file, load);
  const serve::TraceStats s = serve::trace_stats(load.trace, block_tokens, capacities);
  if (json) std::cout << report::trace_stats_document(provenance(false, false), file, s).dump(2) << "\n";
  else std::cout << report::trace_stats_text(file, s);
  return 0;
}

}  // namespace xpusim::cli
