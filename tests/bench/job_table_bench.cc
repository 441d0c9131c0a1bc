// What the dispatcher's job lookups cost with a deep backlog
// (docs/benchmarks.md, sixth round). A table holds a backlog of N jobs, 100
// tenants enqueued round robin; each iteration is one lease and its
// completions, as the backlog benchmark drives them: find the 100 jobs a
// lease takes (10 tenants x 10, each tenant's oldest), find them again to
// complete them, erase them and insert 100 new jobs at the tail. JobTable
// against an absl::flat_hash_map of the same JobMeta, the plain choice.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lease_ids.h"
#include "server/broker/job_table.h"

namespace fairq::server {
namespace {

using bench::kPerLease;
using bench::kTenants;

// The map with JobTable's calls.
class FlatMapTable {
 public:
  JobMeta* Find(uint64_t id) {
    auto it = map_.find(id);
    return it == map_.end() ? nullptr : &it->second;
  }
  void Insert(uint64_t id, const JobMeta& meta) { map_[id] = meta; }
  void Erase(uint64_t id) { map_.erase(id); }
  void Compact() {}

 private:
  absl::flat_hash_map<uint64_t, JobMeta> map_;
};

template <class Table>
void BM_LeaseAndComplete(benchmark::State& state) {
  const uint64_t backlog = static_cast<uint64_t>(state.range(0));
  Table table;
  JobMeta meta;
  for (uint64_t id = 1; id <= backlog; ++id) {
    meta.tenant = static_cast<uint32_t>(id % kTenants);
    table.Insert(id, meta);
  }
  uint64_t next_id = backlog + 1;
  uint64_t n = 0;
  for (auto _ : state) {
    const std::vector<uint64_t> ids =
        bench::LeaseIds(0, n++, bench::IdLayout::kRoundRobin);
    for (uint64_t id : ids) {
      JobMeta* job = table.Find(id);
      if (job == nullptr) {
        state.SkipWithError("a leased job is missing");
        break;
      }
      job->state = v1::JOB_STATE_LEASED;
    }
    for (uint64_t id : ids) {
      benchmark::DoNotOptimize(table.Find(id)->tenant);
      table.Erase(id);
    }
    for (uint64_t i = 0; i < kPerLease; ++i, ++next_id) {
      meta.tenant = static_cast<uint32_t>(next_id % kTenants);
      table.Insert(next_id, meta);
    }
    table.Compact();
  }
  state.SetItemsProcessed(state.iterations() * kPerLease);
}
BENCHMARK_TEMPLATE(BM_LeaseAndComplete, JobTable)
    ->Name("JobTable")
    ->Arg(1'000)
    ->Arg(2'000'000);
BENCHMARK_TEMPLATE(BM_LeaseAndComplete, FlatMapTable)
    ->Name("FlatHashMap")
    ->Arg(1'000)
    ->Arg(2'000'000);

}  // namespace
}  // namespace fairq::server

BENCHMARK_MAIN();
