// What the lease's payload reads cost at a deep backlog, by access pattern
// (docs/benchmarks.md, fifth round): a Store holding 2M job records as the
// backlog benchmark leaves them (100 tenants enqueued round robin, 100-byte
// payloads), read in lease-sized MultiGets of 6 tenants x 17 jobs, in the
// order a backlog is drained. `Interleaved` is today's layout, where a
// tenant's next jobs are 100 ids apart; `Contiguous` reads the same number
// of records per call with each tenant's 17 adjacent, as a tenant-major key
// would store them. Run by hand; the fill takes ~15 s.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "store/store.h"

namespace fairq::store {
namespace {

constexpr uint64_t kJobs = 2'000'000;
constexpr uint64_t kTenants = 100;
constexpr uint64_t kPerTenant = 17;  // jobs a tenant gets in one lease
constexpr uint64_t kTenantsPerLease = 6;
constexpr uint64_t kWindow = kTenants * kPerTenant;  // ids one round reads

// The store, filled once for every benchmark of the run.
Store& Filled() {
  static const std::string dir = [] {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "job_reads_XXXXXX").string();
    return std::string(mkdtemp(pattern.data()));
  }();
  static std::unique_ptr<Store> store = [] {
    std::unique_ptr<Store> opened =
        std::move(Store::Open({dir, false})).value();
    v1::JobRecord job;
    job.mutable_spec()->set_payload(std::string(100, 'p'));
    job.mutable_spec()->set_pool("bench-pool");
    for (uint64_t first = 1; first <= kJobs; first += 1000) {
      std::vector<WriteBatch> batches;
      batches.push_back(opened->NewBatch());
      for (uint64_t id = first; id < first + 1000; ++id) {
        job.set_id(id);
        job.set_tenant_id(static_cast<uint32_t>(id % kTenants));
        job.mutable_spec()->set_tenant("bench-tenant-" +
                                       std::to_string(id % kTenants));
        job.set_enqueued_unix_ms(static_cast<int64_t>(id));
        batches.back().PutJob(job);
      }
      if (!opened->Apply(batches).ok()) std::abort();
    }
    std::atexit([] { std::filesystem::remove_all(dir); });
    return opened;
  }();
  return *store;
}

// The ids of lease `n` of a drain: in each window of kWindow ids, leases
// take kTenantsPerLease tenants at a time until every tenant had its turn.
template <bool kContiguous>
std::vector<uint64_t> LeaseIds(uint64_t n) {
  constexpr uint64_t kLeasesPerWindow =
      (kTenants + kTenantsPerLease - 1) / kTenantsPerLease;
  const uint64_t window = n / kLeasesPerWindow % (kJobs / kWindow - 1);
  const uint64_t base = 1 + window * kWindow;
  std::vector<uint64_t> ids;
  for (uint64_t i = 0; i < kTenantsPerLease; ++i) {
    uint64_t tenant = (n % kLeasesPerWindow * kTenantsPerLease + i) % kTenants;
    for (uint64_t k = 0; k < kPerTenant; ++k) {
      ids.push_back(kContiguous ? base + tenant * kPerTenant + k
                                : base + tenant + k * kTenants);
    }
  }
  return ids;
}

template <bool kContiguous>
void BM_LeaseReads(benchmark::State& state) {
  Store& store = Filled();
  uint64_t n = 0;
  for (auto _ : state) {
    auto jobs = store.GetJobs(LeaseIds<kContiguous>(n++));
    if (!jobs.ok() || !(*jobs)[0]) {
      state.SkipWithError("a leased job was not found");
      break;
    }
    benchmark::DoNotOptimize(jobs);
  }
  state.SetItemsProcessed(state.iterations() * kTenantsPerLease * kPerTenant);
}
BENCHMARK_TEMPLATE(BM_LeaseReads, false)->Name("Interleaved");
BENCHMARK_TEMPLATE(BM_LeaseReads, true)->Name("Contiguous");

}  // namespace
}  // namespace fairq::store

BENCHMARK_MAIN();
