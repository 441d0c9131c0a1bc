// Scheduling-core throughput and memory. One decision is LeaseNextJob plus
// handing the leased job back (Requeue), which keeps the backlog and the
// number of active tenants constant while the clock runs.
//
//   build/tests/bench/fairq_sched_bench --benchmark_repetitions=3
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <memory>
#include <string>

#include "sched/scheduler.h"

namespace fairq::sched {
namespace {

struct Loaded {
  std::unique_ptr<Scheduler> scheduler;
  double bytes_per_job = 0;
};

size_t HeapInUse() { return mallinfo2().uordblks; }

// `tenants` tenants sharing `backlog` queued 1-second jobs in one pool.
Loaded Load(int64_t tenants, int64_t backlog, Policy policy,
            double quantum = 1.0) {
  SchedulerOptions options;
  options.policy = policy;
  options.quantum = quantum;
  Loaded loaded{std::move(Scheduler::Create(options)).value()};
  Scheduler& s = *loaded.scheduler;
  PoolId pool = s.AddPool("default").value();
  (void)s.SetCapacity(pool, 1000);
  for (int64_t t = 0; t < tenants; ++t) {
    TenantConfig config;
    config.name = "tenant-" + std::to_string(t);
    (void)s.AddTenant(config);
  }
  size_t before = HeapInUse();
  for (int64_t i = 0; i < backlog; ++i) {
    JobSpec job{static_cast<JobId>(i + 1), static_cast<TenantId>(i % tenants),
                pool, 0, 1.0};
    (void)s.Enqueue(job, 0);
  }
  loaded.bytes_per_job =
      static_cast<double>(HeapInUse() - before) / static_cast<double>(backlog);
  return loaded;
}

void RunDecisions(benchmark::State& state, Scheduler& s) {
  double now = 0;
  for (auto _ : state) {
    auto leased = s.LeaseNextJob(0);
    const Dispatch& d = **leased;
    benchmark::DoNotOptimize(d);
    now += 1e-6;
    (void)s.Requeue(d.job, 1.0, now);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["decisions_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// Decision rate against backlog size, 1k active tenants.
void BM_DecisionsByBacklog(benchmark::State& state) {
  Loaded loaded = Load(1000, state.range(0), Policy::kDrr);
  state.counters["bytes_per_queued_job"] = loaded.bytes_per_job;
  RunDecisions(state, *loaded.scheduler);
}
BENCHMARK(BM_DecisionsByBacklog)->Arg(1000)->Arg(100000)->Arg(2000000);

// Decision rate against active tenants, 10 jobs queued each.
void BM_DecisionsByActiveTenants(benchmark::State& state) {
  Loaded loaded = Load(state.range(0), state.range(0) * 10, Policy::kDrr);
  RunDecisions(state, *loaded.scheduler);
}
BENCHMARK(BM_DecisionsByActiveTenants)->Arg(10)->Arg(1000)->Arg(100000);

// A quantum below the job cost (1 s): every tenant goes into debt at each
// dispatch, so decisions walk the ring and skip rounds. 1k active tenants;
// the argument is the quantum in milliseconds.
void BM_DecisionsByQuantum(benchmark::State& state) {
  Loaded loaded = Load(1000, 10000, Policy::kDrr,
                       static_cast<double>(state.range(0)) / 1000.0);
  RunDecisions(state, *loaded.scheduler);
}
BENCHMARK(BM_DecisionsByQuantum)->Arg(1000)->Arg(100)->Arg(10);

// Organisations of 10 tenants each: the two-level path.
void BM_DecisionsHierarchy(benchmark::State& state) {
  Loaded loaded = Load(0, 0, Policy::kDrr);
  Scheduler& s = *loaded.scheduler;
  for (int t = 0; t < 1000; ++t) {
    TenantConfig config;
    config.name = "t" + std::to_string(t);
    config.org = "org" + std::to_string(t / 10);
    TenantId id = s.AddTenant(config).value();
    for (int j = 0; j < 10; ++j) {
      (void)s.Enqueue({static_cast<JobId>(t * 10 + j + 1), id, 0, 0, 1.0}, 0);
    }
  }
  RunDecisions(state, s);
}
BENCHMARK(BM_DecisionsHierarchy);

// The FIFO baseline scans active tenants; shown for contrast only.
void BM_FifoBaselineByActiveTenants(benchmark::State& state) {
  Loaded loaded = Load(state.range(0), state.range(0) * 10, Policy::kFifo);
  RunDecisions(state, *loaded.scheduler);
}
BENCHMARK(BM_FifoBaselineByActiveTenants)->Arg(10)->Arg(1000);

}  // namespace
}  // namespace fairq::sched

BENCHMARK_MAIN();
