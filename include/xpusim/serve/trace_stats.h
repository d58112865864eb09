#pragma once
// What a request trace holds before any engine runs it (`xpusim trace-stats`, docs/serving.md,
// "Prefix caching"): its requests, lengths and span, and how often its prompts' prefix blocks
// repeat, replayed through prefix caches of given capacities (LRU) and an unbounded one.

#include <vector>

#include "xpusim/serve/prefix_cache.h"
#include "xpusim/serve/simulator.h"

namespace xpusim::serve {

/// Mean, median and largest of a length column.
struct LengthSummary {
  double mean = 0;
  long long median = 0, max = 0;
};

/// One replay: the cache's capacity in tokens (0: unbounded) and its tallies.
struct CacheReplay {
  long long capacity_tokens = 0;
  PrefixTally tally;
};

struct TraceStats {
  long long requests = 0, rows_with_prefix_hashes = 0;
  long long sessions = 0, rows_in_sessions = 0;  ///< distinct session_id values, and their rows
  double span_s = 0;  ///< first to last arrival
  LengthSummary in_len, out_len;
  long long prompt_tokens = 0, output_tokens = 0;
  long long block_tokens = 0;
  long long blocks = 0, distinct_blocks = 0;
  std::vector<CacheReplay> caches;  ///< unbounded first, then the capacities in the order asked
};

/// The trace's figures at `block_tokens` per block. A replay takes the requests in file order;
/// each request's blocks are matched from its first until one is missing (its hits; a hit of k
/// blocks serves min(k × block_tokens, in_len) prompt tokens), then all of its blocks are stored
/// as the most recently used and the least recently used beyond the capacity evicted. Every
/// block the file names counts, the partial last one included (the traces' README counts so).
TraceStats trace_stats(const std::vector<Request>& requests, long long block_tokens,
                       const std::vector<long long>& capacities_tokens);

}  // namespace xpusim::serve
