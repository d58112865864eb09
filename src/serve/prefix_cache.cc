// The LRU prefix cache (include/xpusim/serve/prefix_cache.h).

#include "xpusim/serve/prefix_cache.h"

namespace xpusim::serve {

bool PrefixCache::touch(BlockId id) {
  const auto it = where_.find(id);
  if (it != where_.end()) {
    order_.splice(order_.end(), order_, it->second);
    return false;
  }
  order_.push_back(id);
  where_.emplace(id, std::prev(order_.end()));
  return true;
}

long long PrefixCache::match(std::span<const BlockId> blocks) {
  long long n = 0;
  for (const BlockId id : blocks) {
    const auto it = where_.find(id);
    if (it == where_.end()) break;
    order_.splice(order_.end(), order_, it->second);
    ++n;
  }
  return n;
}

long long PrefixCache::held(std::span<const BlockId> blocks) const {
  long long n = 0;
  for (const BlockId id : blocks) {
    if (!where_.contains(id)) break;
    ++n;
  }
  return n;
}

long long PrefixCache::insert(std::span<const BlockId> blocks, std::vector<BlockId>* evicted) {
  if (capacity_ <= 0) return 0;
  long long stored = 0;
  for (const BlockId id : blocks) stored += touch(id) ? 1 : 0;
  while (static_cast<long long>(where_.size()) > capacity_) {
    if (evicted) evicted->push_back(order_.front());
    where_.erase(order_.front());
    order_.pop_front();
  }
  return stored;
}

}  // namespace xpusim::serve
