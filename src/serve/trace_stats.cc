// Trace statistics and prefix-cache replays (include/xpusim/serve/trace_stats.h).

#include "xpusim/serve/trace_stats.h"

#include <algorithm>
#include <limits>
#include <unordered_set>

namespace xpusim::serve {

namespace {

LengthSummary summarise(std::vector<long long> v) {
  LengthSummary s;
  if (v.empty()) return s;
  double sum = 0;
  for (const long long x : v) sum += static_cast<double>(x);
  s.mean = sum / static_cast<double>(v.size());
  std::sort(v.begin(), v.end());
  s.median = v[(v.size() - 1) / 2];
  s.max = v.back();
  return s;
}

CacheReplay replay(const std::vector<Request>& requests, long long block_tokens, long long capacity_tokens) {
  const long long blocks = capacity_tokens > 0 ? capacity_tokens / block_tokens : std::numeric_limits<long long>::max();
  PrefixCache cache(blocks);
  CacheReplay out{capacity_tokens, {}};
  PrefixTally& t = out.tally;
  for (const Request& r : requests) {
    if (r.prefix_blocks.empty()) continue;
    const long long hit = cache.match(r.prefix_blocks);
    t.count(static_cast<long long>(r.prefix_blocks.size()), hit, r.in_len, std::min(hit * block_tokens, r.in_len));
    cache.insert(r.prefix_blocks);
  }
  return out;
}

}  // namespace

TraceStats trace_stats(const std::vector<Request>& requests, long long block_tokens,
                       const std::vector<long long>& capacities_tokens) {
  TraceStats s;
  s.requests = static_cast<long long>(requests.size());
  s.block_tokens = block_tokens;
  std::vector<long long> in, out;
  std::unordered_set<BlockId> distinct;
  std::unordered_set<long long> sessions;
  for (const Request& r : requests) {
    if (r.session >= 0) {
      sessions.insert(r.session);
      ++s.rows_in_sessions;
    }
    in.push_back(r.in_len);
    out.push_back(r.out_len);
    s.prompt_tokens += r.in_len;
    s.output_tokens += r.out_len;
    s.rows_with_prefix_hashes += r.prefix_blocks.empty() ? 0 : 1;
    s.blocks += static_cast<long long>(r.prefix_blocks.size());
    distinct.insert(r.prefix_blocks.begin(), r.prefix_blocks.end());
  }
  s.distinct_blocks = static_cast<long long>(distinct.size());
  s.sessions = static_cast<long long>(sessions.size());
  if (!requests.empty()) s.span_s = core::sim_seconds(requests.back().arrival - requests.front().arrival);
  s.in_len = summarise(std::move(in));
  s.out_len = summarise(std::move(out));
  if (s.rows_with_prefix_hashes == 0) return s;
  s.caches.push_back(replay(requests, block_tokens, 0));
  for (const long long c : capacities_tokens) s.caches.push_back(replay(requests, block_tokens, c));
  return s;
}

}  // namespace xpusim::serve
