#pragma once
// Deterministic data parallelism: fn(i) for i in [0, n) on up to `threads` threads. Each index
// is handled by exactly one call; callers write results by index, so the output does not depend
// on the thread count or the interleaving. The first exception thrown (lowest index) is
// rethrown on the calling thread after every thread has finished.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace xpusim::core {

/// The default thread count: the machine's hardware threads (at least 1).
inline int default_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

template <class Fn>
void parallel_for(size_t n, int threads, Fn&& fn) {
  const size_t workers = std::min(n, static_cast<size_t>(std::max(1, threads)));
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> errors(n);
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace xpusim::core
