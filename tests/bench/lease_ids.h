// The ids the backlog benchmark's leases take, for the benchmarks that
// replay its drain without a daemon (job_reads_bench, job_table_bench).
// 100 tenants enqueue round robin; a DRR turn at the minimum charge takes
// about 10 of a tenant's oldest jobs (docs/scheduling.md), and a lease of
// 100 takes 10 tenants' turns. One window of 1,000 ids is one round.
#ifndef FAIRQ_TESTS_BENCH_LEASE_IDS_H_
#define FAIRQ_TESTS_BENCH_LEASE_IDS_H_

#include <cstdint>
#include <vector>

namespace fairq::bench {

inline constexpr uint64_t kTenants = 100;
inline constexpr uint64_t kPerTenant = 10;
inline constexpr uint64_t kTenantsPerLease = 10;
inline constexpr uint64_t kPerLease = kTenantsPerLease * kPerTenant;
inline constexpr uint64_t kWindow = kTenants * kPerTenant;
inline constexpr uint64_t kLeasesPerWindow = kTenants / kTenantsPerLease;
static_assert(kTenants % kTenantsPerLease == 0);

// How ids map to tenants: the benchmark's round robin (a tenant's next jobs
// kTenants ids apart), or tenant-major (each tenant's kPerTenant adjacent),
// as a key of tenant then sequence would store them.
enum class IdLayout { kRoundRobin, kTenantMajor };

// The ids of lease `n` of a drain that starts at window `first_window`
// (ids count from 1).
inline std::vector<uint64_t> LeaseIds(uint64_t first_window, uint64_t n,
                                      IdLayout layout) {
  const uint64_t window = first_window + n / kLeasesPerWindow;
  const uint64_t base = 1 + window * kWindow;
  std::vector<uint64_t> ids;
  ids.reserve(kPerLease);
  for (uint64_t i = 0; i < kTenantsPerLease; ++i) {
    const uint64_t tenant = n % kLeasesPerWindow * kTenantsPerLease + i;
    for (uint64_t k = 0; k < kPerTenant; ++k) {
      ids.push_back(layout == IdLayout::kTenantMajor
                        ? base + tenant * kPerTenant + k
                        : base + tenant + k * kTenants);
    }
  }
  return ids;
}

}  // namespace fairq::bench

#endif  // FAIRQ_TESTS_BENCH_LEASE_IDS_H_
