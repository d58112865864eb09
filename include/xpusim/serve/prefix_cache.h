#pragma once
// A prefix cache of KV blocks (docs/serving.md, "Prefix caching"): blocks named by the ids a
// trace gives them (an id also encodes every token before its block, so equal ids are equal
// prefixes), matched from a prompt's first block on, evicted least recently used first.

#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace xpusim::serve {

using BlockId = std::uint64_t;

class PrefixCache {
 public:
  /// A cache of at most `capacity_blocks` blocks; 0 or less holds none (every lookup misses).
  explicit PrefixCache(long long capacity_blocks = 0) : capacity_(capacity_blocks) {}

  /// How many of `blocks`, from the first on, the cache holds (it stops at the first miss); the
  /// matched blocks become the most recently used.
  long long match(std::span<const BlockId> blocks);
  /// The same count, leaving the order as it is.
  long long held(std::span<const BlockId> blocks) const;

  /// Stores `blocks` in order (each then the most recently used; held ones refreshed), evicting
  /// the least recently used beyond the capacity; the evicted ids, oldest first, are appended to
  /// `evicted` when given (a lower tier takes them). Returns how many of them were not held before
  /// (the blocks a write-through pool receives).
  long long insert(std::span<const BlockId> blocks, std::vector<BlockId>* evicted = nullptr);

  long long size() const { return static_cast<long long>(where_.size()); }
  long long capacity() const { return capacity_; }

 private:
  bool touch(BlockId id);  ///< true: the block was not held
  long long capacity_;
  std::list<BlockId> order_;  ///< least recently used first
  std::unordered_map<BlockId, std::list<BlockId>::iterator> where_;
};

/// A request's blocks against a cache, counted: blocks looked up and found (its leading matched
/// run), tokens of prompt and tokens served from the cache.
struct PrefixTally {
  long long lookups = 0, requests_hit = 0;
  long long blocks = 0, blocks_hit = 0;
  long long prompt_tokens = 0, tokens_hit = 0;
  /// Of the hits, those found in the host tier (KV offload) and loaded back, and the load time
  /// summed over requests.
  long long blocks_hit_host = 0, tokens_hit_host = 0;
  double host_load_s = 0;
  /// The same for the local-SSD tier.
  long long blocks_hit_ssd = 0, tokens_hit_ssd = 0;
  double ssd_load_s = 0;
  /// And for the remote pool every engine shares.
  long long blocks_hit_remote = 0, tokens_hit_remote = 0;
  double remote_load_s = 0;
  /// The blocks the remote pool received (a prompt's whole blocks it did not hold) and the time
  /// the engines' links spent sending them, summed over prompts (outbound, beside the loads).
  long long blocks_written_remote = 0, tokens_written_remote = 0;
  double remote_write_s = 0;
  /// One request's lookup: its blocks, the leading ones found, its prompt and the tokens served.
  void count(long long request_blocks, long long hit, long long prompt, long long served) {
    ++lookups;
    requests_hit += hit > 0 ? 1 : 0;
    blocks += request_blocks;
    blocks_hit += hit;
    prompt_tokens += prompt;
    tokens_hit += served;
  }
  double block_hit_rate() const { return blocks > 0 ? static_cast<double>(blocks_hit) / static_cast<double>(blocks) : 0.0; }
  double token_hit_rate() const {
    return prompt_tokens > 0 ? static_cast<double>(tokens_hit) / static_cast<double>(prompt_tokens) : 0.0;
  }
};

}  // namespace xpusim::serve
