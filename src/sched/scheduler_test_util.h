// Test helpers for the scheduling core: a scheduler with one pool and short
// ways to add tenants, queue jobs and lease them.
#ifndef FAIRQ_SCHED_SCHEDULER_TEST_UTIL_H_
#define FAIRQ_SCHED_SCHEDULER_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/scheduler.h"

namespace fairq::sched {

class SchedulerHarness {
 public:
  explicit SchedulerHarness(SchedulerOptions options = {},
                            uint32_t capacity = 8) {
    auto created = Scheduler::Create(options);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    scheduler = std::move(created).value();
    pool = scheduler->AddPool("default").value();
    EXPECT_TRUE(scheduler->SetCapacity(pool, capacity).ok());
  }

  TenantId Add(TenantConfig config) {
    auto id = scheduler->AddTenant(config);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }
  TenantId Add(const std::string& name, double weight = 1.0) {
    TenantConfig config;
    config.name = name;
    config.weight = weight;
    return Add(config);
  }

  // Queues `count` jobs; returns their ids.
  std::vector<JobId> Queue(TenantId tenant, int count,
                           std::optional<double> cost = 1.0,
                           int32_t priority = 0, PoolId in_pool = 0) {
    std::vector<JobId> ids;
    for (int i = 0; i < count; ++i) {
      JobSpec job{next_id, tenant, in_pool, priority, cost};
      EXPECT_TRUE(scheduler->Enqueue(job, now).ok());
      ids.push_back(next_id++);
    }
    return ids;
  }

  std::optional<Dispatch> Lease(PoolId from = 0) {
    auto leased = scheduler->LeaseNextJob(from);
    EXPECT_TRUE(leased.ok()) << leased.status().ToString();
    return leased.ok() ? *leased : std::nullopt;
  }

  // Leases and at once completes `count` jobs with runtime `runtime(tenant)`
  // (the charged cost when absent); returns worker-seconds per tenant.
  template <class Runtime>
  std::map<TenantId, double> Cycle(int count, Runtime runtime) {
    std::map<TenantId, double> used;
    for (int i = 0; i < count; ++i) {
      std::optional<Dispatch> d = Lease();
      if (!d) break;
      double took = runtime(*d);
      EXPECT_TRUE(scheduler->Complete(d->job, took).ok());
      used[d->tenant] += took;
    }
    return used;
  }
  std::map<TenantId, double> Cycle(int count) {
    return Cycle(count, [](const Dispatch& d) { return d.charged_cost; });
  }

  TenantPoolStats Stats(TenantId tenant) {
    return scheduler->Stats(tenant, pool).value();
  }

  std::unique_ptr<Scheduler> scheduler;
  PoolId pool = 0;
  JobId next_id = 1;
  double now = 0;
};

inline double ShareOf(const std::map<TenantId, double>& used,
                      TenantId tenant) {
  double total = 0;
  for (const auto& [id, seconds] : used) total += seconds;
  auto it = used.find(tenant);
  return it == used.end() || total == 0 ? 0 : it->second / total;
}

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_SCHEDULER_TEST_UTIL_H_
