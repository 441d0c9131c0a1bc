// RunParallel: starts `n` threads running fn(0) .. fn(n-1) and joins them.
// The load threads of every scenario start and end here, so none outlives
// the scenario that made it.
//
// Thread-safe as long as `fn` is.
#ifndef FAIRQ_CLIENT_BENCH_PARALLEL_H_
#define FAIRQ_CLIENT_BENCH_PARALLEL_H_

#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace fairq::bench {

inline void RunParallel(size_t n, const std::function<void(size_t)>& fn) {
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (size_t i = 0; i < n; ++i) threads.emplace_back(fn, i);
  for (std::thread& thread : threads) thread.join();
}

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_PARALLEL_H_
