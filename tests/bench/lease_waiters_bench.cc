// The dispatcher's waiter bookkeeping with n workers waiting in long-poll
// Lease calls: every turn asks for the expired waits and the next deadline
// (BM_TurnTimers), and every answered call is taken out and the worker's
// next call added (BM_AnswerAndWaitAgain). Run by hand; docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <utility>

#include "server/broker/lease_waiters.h"

namespace fairq::server {
namespace {

constexpr uint32_t kPools = 4;

LeaseWaiters::Waiter MakeWaiter(WaiterId id) {
  LeaseWaiters::Waiter waiter;
  waiter.id = id;
  waiter.pools = {static_cast<uint32_t>(id % kPools)};
  // Waits of up to 30 s from now, in no particular order.
  waiter.deadline_ms = 1'000'000 + static_cast<int64_t>(id * 7919 % 30'000);
  return waiter;
}

void Fill(LeaseWaiters& waiters, int64_t n) {
  for (int64_t i = 1; i <= n; ++i) {
    waiters.Add(MakeWaiter(static_cast<WaiterId>(i)));
  }
}

void BM_TurnTimers(benchmark::State& state) {
  LeaseWaiters waiters;
  Fill(waiters, state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(waiters.Expired(0));
    benchmark::DoNotOptimize(waiters.NextDeadline());
  }
}
BENCHMARK(BM_TurnTimers)->RangeMultiplier(10)->Range(10, 100'000);

void BM_AnswerAndWaitAgain(benchmark::State& state) {
  LeaseWaiters waiters;
  const int64_t n = state.range(0);
  Fill(waiters, n);
  WaiterId next = static_cast<WaiterId>(n) + 1;
  for (auto _ : state) {
    const LeaseWaiters::Waiter* front = waiters.Front(next % kPools);
    if (front == nullptr) {
      state.SkipWithError("no waiter in the pool");
      break;
    }
    benchmark::DoNotOptimize(waiters.Take(front->id));
    waiters.Add(MakeWaiter(next++));
  }
}
BENCHMARK(BM_AnswerAndWaitAgain)->RangeMultiplier(10)->Range(10, 100'000);

}  // namespace
}  // namespace fairq::server

BENCHMARK_MAIN();
