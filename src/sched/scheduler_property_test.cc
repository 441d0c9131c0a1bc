// Seeded random event sequences run against the Scheduler and a plain
// reference model of what must hold whatever the policy: no job lost or
// leased twice, a tenant's own order respected, hard caps never exceeded,
// and no worker left idle while a job that may run waits.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sched/scheduler.h"

namespace fairq::sched {
namespace {

struct RefJob {
  JobId id;
  TenantId tenant;
  PoolId pool;
  int32_t priority;
  uint64_t seq;
};

class PropertyRun {
 public:
  PropertyRun(Policy policy, uint64_t seed) : policy_(policy), rng_(seed) {}

  void Run(int steps) {
    Setup();
    for (int i = 0; i < steps && !::testing::Test::HasFailure(); ++i) {
      Step();
      CheckCounts();
    }
    Drain();
  }

 private:
  uint32_t Uniform(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }
  bool Chance(uint32_t percent) { return Uniform(100) < percent; }

  TenantConfig RandomConfig(const std::string& name) {
    TenantConfig config;
    config.name = name;
    config.weight = std::vector<double>{0.5, 1, 2, 3}[Uniform(4)];
    uint32_t org = Uniform(3);
    if (org > 0) config.org = "org" + std::to_string(org);
    switch (Uniform(3)) {
      case 0:
        break;
      case 1:
        config.cap = SlotLimit::Count(1 + Uniform(4));
        break;
      default:
        config.cap = SlotLimit::Share(0.25 * (1 + Uniform(3)));
    }
    config.cap_mode = Chance(50) ? CapMode::kHard : CapMode::kWorkConserving;
    // Share floors round up, and so exercise the floor budget.
    if (Chance(25)) {
      config.floor = Chance(50) ? SlotLimit::Count(1)
                                : SlotLimit::Share(0.05 * (1 + Uniform(5)));
    }
    return config;
  }

  void Setup() {
    SchedulerOptions options;
    options.policy = policy_;
    options.quantum = Chance(50) ? 1.0 : 0.25;
    scheduler_ = std::move(Scheduler::Create(options)).value();
    for (const char* name : {"p0", "p1"}) {
      PoolId pool = scheduler_->AddPool(name).value();
      capacity_.push_back(2 + Uniform(9));
      ASSERT_TRUE(scheduler_->SetCapacity(pool, capacity_[pool]).ok());
    }
    uint32_t tenants = 3 + Uniform(6);
    for (uint32_t t = 0; t < tenants; ++t) {
      configs_.push_back(RandomConfig("t" + std::to_string(t)));
      ASSERT_TRUE(scheduler_->AddTenant(configs_.back()).ok());
      paused_.push_back(false);
    }
  }

  void Step() {
    uint32_t roll = Uniform(100);
    if (roll < 35) {
      Enqueue();
    } else if (roll < 70) {
      Lease(Uniform(2));
    } else if (roll < 90) {
      EndRandomAttempt();
    } else if (roll < 94) {
      CancelRandomJob();
    } else if (roll < 96) {
      capacity_[roll % 2] = 1 + Uniform(10);
      ASSERT_TRUE(scheduler_->SetCapacity(roll % 2, capacity_[roll % 2]).ok());
    } else if (roll < 98) {
      TenantId t = Uniform(static_cast<uint32_t>(configs_.size()));
      paused_[t] = !paused_[t];
      ASSERT_TRUE(scheduler_->SetPaused(t, paused_[t]).ok());
    } else {
      TenantId t = Uniform(static_cast<uint32_t>(configs_.size()));
      configs_[t] = RandomConfig(configs_[t].name);
      ASSERT_TRUE(scheduler_->UpdateTenant(t, configs_[t]).ok());
    }
  }

  void Enqueue() {
    RefJob job{next_id_++, Uniform(static_cast<uint32_t>(configs_.size())),
               Uniform(2), static_cast<int32_t>(Uniform(3)), next_seq_++};
    std::optional<double> cost;
    if (Chance(80)) cost = 0.1 * (1 + Uniform(50));
    ASSERT_TRUE(scheduler_
                    ->Enqueue({job.id, job.tenant, job.pool, job.priority,
                               cost},
                              now_)
                    .ok());
    queued_.push_back(job);
    ++enqueued_;
  }

  // The job the tenant's own order says is next in this pool.
  const RefJob* ExpectedHead(TenantId tenant, PoolId pool) const {
    const RefJob* best = nullptr;
    for (const RefJob& job : queued_) {
      if (job.tenant != tenant || job.pool != pool) continue;
      if (!best || job.priority > best->priority ||
          (job.priority == best->priority && job.seq < best->seq)) {
        best = &job;
      }
    }
    return best;
  }

  uint32_t Running(TenantId tenant, PoolId pool) const {
    uint32_t n = 0;
    for (const auto& [id, job] : running_) {
      n += job.tenant == tenant && job.pool == pool;
    }
    return n;
  }

  uint32_t RunningInPool(PoolId pool) const {
    uint32_t n = 0;
    for (const auto& [id, job] : running_) n += job.pool == pool;
    return n;
  }

  // A tenant's cap that the policy must never break, if any.
  bool CapIsHard(TenantId tenant) const {
    if (!configs_[tenant].cap.is_set()) return false;
    return policy_ == Policy::kHardCap ||
           (policy_ == Policy::kDrr &&
            configs_[tenant].cap_mode == CapMode::kHard);
  }

  bool HeldByHardCap(TenantId tenant, PoolId pool) const {
    return CapIsHard(tenant) &&
           Running(tenant, pool) >=
               configs_[tenant].cap.CapSlots(capacity_[pool]);
  }

  void Lease(PoolId pool) {
    if (RunningInPool(pool) >= capacity_[pool]) return;  // no free worker
    auto leased = scheduler_->LeaseNextJob(pool);
    ASSERT_TRUE(leased.ok());
    if (!*leased) {
      for (TenantId t = 0; t < configs_.size(); ++t) {
        bool waits = !paused_[t] && ExpectedHead(t, pool) != nullptr;
        EXPECT_FALSE(waits && !HeldByHardCap(t, pool))
            << "worker idle while tenant " << t << " waits";
      }
      return;
    }
    const Dispatch& d = **leased;
    EXPECT_EQ(running_.count(d.job), 0u) << "job leased twice";
    EXPECT_FALSE(paused_[d.tenant]);
    EXPECT_FALSE(HeldByHardCap(d.tenant, pool)) << "hard cap exceeded";
    const RefJob* head = ExpectedHead(d.tenant, pool);
    ASSERT_NE(head, nullptr) << "leased a job that is not queued";
    EXPECT_EQ(head->id, d.job) << "tenant's own order broken";
    running_[d.job] = *head;
    queued_.erase(queued_.begin() + (head - queued_.data()));
  }

  void EndRandomAttempt() {
    if (running_.empty()) return;
    auto it = std::next(running_.begin(), Uniform(static_cast<uint32_t>(running_.size())));
    RefJob job = it->second;
    running_.erase(it);
    double runtime = 0.1 * Uniform(60);
    switch (Uniform(3)) {
      case 0:
        ASSERT_TRUE(scheduler_->Complete(job.id, runtime).ok());
        completed_.insert(job.id);
        break;
      case 1:
        ASSERT_TRUE(scheduler_->Fail(job.id, runtime).ok());
        ++failed_;
        break;
      default:
        ASSERT_TRUE(scheduler_->Requeue(job.id, runtime, now_).ok());
        job.seq = next_seq_++;
        queued_.push_back(job);
    }
    EXPECT_EQ(scheduler_->Complete(job.id, 1).code(), StatusCode::kNotFound);
    now_ += 0.5;
  }

  void CancelRandomJob() {
    if (queued_.empty()) return;
    size_t index = Uniform(static_cast<uint32_t>(queued_.size()));
    RefJob job = queued_[index];
    ASSERT_TRUE(scheduler_->Cancel(job.tenant, job.pool, job.id).ok());
    EXPECT_EQ(scheduler_->Cancel(job.tenant, job.pool, job.id).code(),
              StatusCode::kNotFound);
    queued_.erase(queued_.begin() + static_cast<ptrdiff_t>(index));
    ++cancelled_;
  }

  void CheckCounts() {
    for (TenantId t = 0; t < configs_.size(); ++t) {
      for (PoolId pool = 0; pool < 2; ++pool) {
        TenantPoolStats stats = scheduler_->Stats(t, pool).value();
        uint64_t queued = static_cast<uint64_t>(
            std::count_if(queued_.begin(), queued_.end(), [&](const RefJob& j) {
              return j.tenant == t && j.pool == pool;
            }));
        ASSERT_EQ(stats.queued, queued) << "tenant " << t << " pool " << pool;
        ASSERT_EQ(stats.running, Running(t, pool));
      }
    }
    ASSERT_EQ(scheduler_->running_count(), running_.size());
    for (PoolId pool = 0; pool < 2; ++pool) {
      ASSERT_NEAR(scheduler_->FloorDemand(pool), FloorDemand(pool), 1e-6)
          << "pool " << pool;
    }
  }

  // The floors of the tenants active in the pool (work they may run, or
  // jobs running), each at most its cap, counted afresh.
  double FloorDemand(PoolId pool) const {
    double demand = 0;
    for (TenantId t = 0; t < configs_.size(); ++t) {
      const TenantConfig& config = configs_[t];
      uint32_t cap = config.cap.CapSlots(capacity_[pool]);
      if (std::min(config.floor.FloorSlots(capacity_[pool]), cap) == 0) {
        continue;
      }
      bool has_work = !paused_[t] && ExpectedHead(t, pool) != nullptr;
      bool held = config.cap_mode == CapMode::kHard && Running(t, pool) >= cap;
      if ((has_work && !held) || Running(t, pool) > 0) {
        demand += std::min(config.floor.ExactSlots(capacity_[pool]),
                           static_cast<double>(cap));
      }
    }
    return demand;
  }

  // Ends with every job accounted for exactly once.
  void Drain() {
    for (TenantId t = 0; t < configs_.size(); ++t) {
      ASSERT_TRUE(scheduler_->SetPaused(t, false).ok());
      paused_[t] = false;
    }
    for (int guard = 0; guard < 100000 && !(queued_.empty() &&
                                           running_.empty());
         ++guard) {
      Lease(guard % 2);
      if (!running_.empty() && (guard % 3 == 0 || Chance(30))) {
        auto it = running_.begin();
        ASSERT_TRUE(scheduler_->Complete(it->first, 1.0).ok());
        completed_.insert(it->first);
        running_.erase(it);
      }
    }
    EXPECT_TRUE(queued_.empty());
    EXPECT_TRUE(running_.empty());
    EXPECT_EQ(completed_.size() + failed_ + cancelled_, enqueued_);
  }

  Policy policy_;
  std::mt19937_64 rng_;
  std::unique_ptr<Scheduler> scheduler_;
  std::vector<TenantConfig> configs_;
  std::vector<bool> paused_;
  std::vector<uint32_t> capacity_;
  std::vector<RefJob> queued_;
  std::map<JobId, RefJob> running_;
  std::set<JobId> completed_;
  uint64_t enqueued_ = 0, failed_ = 0, cancelled_ = 0;
  JobId next_id_ = 1;
  uint64_t next_seq_ = 0;
  double now_ = 0;
};

class SchedulerPropertyTest : public ::testing::TestWithParam<Policy> {};

TEST_P(SchedulerPropertyTest, RandomSequencesKeepInvariants) {
  for (uint64_t seed = 1; seed <= 25 && !HasFailure(); ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    PropertyRun(GetParam(), seed).Run(1500);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllPolicies, SchedulerPropertyTest,
    ::testing::Values(Policy::kFifo, Policy::kRoundRobin, Policy::kHardCap,
                      Policy::kWorkConservingCap, Policy::kDrr),
    [](const ::testing::TestParamInfo<Policy>& param) {
      std::string name(PolicyName(param.param));
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

}  // namespace
}  // namespace fairq::sched
