#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "sched/scheduler_test_util.h"

namespace fairq::sched {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TenantConfig Config(const std::string& name, double weight = 1.0) {
  TenantConfig config;
  config.name = name;
  config.weight = weight;
  return config;
}

void ExpectInvalid(const Status& status, const std::string& field) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find(field), std::string::npos)
      << status.ToString();
}

// --- Bad input --------------------------------------------------------------

TEST(SchedulerValidationTest, RejectsBadWeights) {
  SchedulerHarness h;
  for (double weight : {0.0, -1.0, kNaN,
                        std::numeric_limits<double>::infinity()}) {
    ExpectInvalid(h.scheduler->AddTenant(Config("a", weight)).status(),
                  "weight");
  }
  ExpectInvalid(h.scheduler->SetOrg({"org", 0}).status(), "weight");
  EXPECT_EQ(h.scheduler->tenant_count(), 0u);
}

TEST(SchedulerValidationTest, RejectsBadCapsAndFloors) {
  SchedulerHarness h;
  TenantConfig config = Config("a");
  config.cap = SlotLimit::Share(1.5);
  ExpectInvalid(h.scheduler->AddTenant(config).status(), "cap");
  config.cap = SlotLimit::Share(0);
  ExpectInvalid(h.scheduler->AddTenant(config).status(), "cap");
  config.cap = SlotLimit::Count(2);
  config.floor = SlotLimit::Count(3);
  ExpectInvalid(h.scheduler->AddTenant(config).status(), "floor");
}

TEST(SchedulerValidationTest, RejectsBadCostsAndRuntimes) {
  SchedulerHarness h;
  TenantId a = h.Add("a");
  ExpectInvalid(h.scheduler->Enqueue({1, a, h.pool, 0, -1.0}, 0), "cost");
  ExpectInvalid(h.scheduler->Enqueue({1, a, h.pool, 0, kNaN}, 0), "cost");
  h.Queue(a, 1);
  std::optional<Dispatch> d = h.Lease();
  ASSERT_TRUE(d);
  ExpectInvalid(h.scheduler->Complete(d->job, -2), "runtime");
  ExpectInvalid(h.scheduler->Complete(d->job, kNaN), "runtime");
  EXPECT_TRUE(h.scheduler->IsRunning(d->job));  // nothing changed
}

TEST(SchedulerValidationTest, UnknownTenantPoolAndJobAreNotFound) {
  SchedulerHarness h;
  TenantId a = h.Add("a");
  EXPECT_EQ(h.scheduler->Enqueue({1, 42, h.pool, 0, 1.0}, 0).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(h.scheduler->Enqueue({1, a, 7, 0, 1.0}, 0).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(h.scheduler->LeaseNextJob(7).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(h.scheduler->SetCapacity(7, 1).code(), StatusCode::kNotFound);
  EXPECT_EQ(h.scheduler->Complete(99, 1).code(), StatusCode::kNotFound);
  EXPECT_EQ(h.scheduler->Requeue(99, 1, 0).code(), StatusCode::kNotFound);
  EXPECT_EQ(h.scheduler->Cancel(a, h.pool, 99).code(), StatusCode::kNotFound);
  EXPECT_EQ(h.scheduler->FindTenant("nobody").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(h.scheduler->FindPool("nowhere").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(h.scheduler->Stats(9, h.pool).status().code(),
            StatusCode::kNotFound);
}

TEST(SchedulerValidationTest, DuplicatesAndRenamesAreRefused) {
  SchedulerHarness h;
  TenantId a = h.Add("a");
  EXPECT_EQ(h.scheduler->AddTenant(Config("a")).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(h.scheduler->AddPool("default").status().code(),
            StatusCode::kAlreadyExists);
  ExpectInvalid(h.scheduler->UpdateTenant(a, Config("b")), "name");
}

TEST(SchedulerValidationTest, RejectsBadOptions) {
  SchedulerOptions options;
  options.quantum = 0;
  ExpectInvalid(Scheduler::Create(options).status(), "quantum");
  options = {};
  options.quantum = 1;
  options.max_deficit = 0.5;  // below the quantum
  ExpectInvalid(Scheduler::Create(options).status(), "max_deficit");
  options = {};
  options.estimate_alpha = 0;
  ExpectInvalid(Scheduler::Create(options).status(), "estimate_alpha");
  options = {};
  options.min_charge = options.quantum * 2;
  ExpectInvalid(Scheduler::Create(options).status(), "min_charge");
  options.min_charge = -1;
  ExpectInvalid(Scheduler::Create(options).status(), "min_charge");
}

// --- Order within a tenant --------------------------------------------------

TEST(SchedulerTest, TenantPrioritiesDecideItsOwnOrder) {
  SchedulerHarness h;
  TenantId a = h.Add("a");
  TenantId b = h.Add("b");
  std::vector<JobId> low = h.Queue(a, 2, 1.0, 0);
  std::vector<JobId> high = h.Queue(a, 2, 1.0, 9);
  h.Queue(b, 4);
  std::vector<JobId> a_order;
  for (int i = 0; i < 8; ++i) {
    std::optional<Dispatch> d = h.Lease();
    ASSERT_TRUE(d);
    if (d->tenant == a) a_order.push_back(d->job);
  }
  EXPECT_EQ(a_order, (std::vector<JobId>{high[0], high[1], low[0], low[1]}));
}

// --- DRR in worker-seconds --------------------------------------------------

TEST(SchedulerTest, EqualTenantsAlternate) {
  SchedulerHarness h;
  TenantId a = h.Add("a");
  TenantId b = h.Add("b");
  h.Queue(a, 10);
  h.Queue(b, 10);
  std::vector<TenantId> order;
  for (int i = 0; i < 6; ++i) order.push_back(h.Lease()->tenant);
  EXPECT_EQ(order, (std::vector<TenantId>{a, b, a, b, a, b}));
}

TEST(SchedulerTest, WeightsSplitWorkerSeconds) {
  SchedulerHarness h;
  TenantId a = h.Add("a", 3);
  TenantId b = h.Add("b", 1);
  h.Queue(a, 1000);
  h.Queue(b, 1000);
  auto used = h.Cycle(800);
  EXPECT_NEAR(ShareOf(used, a), 0.75, 0.01);
  EXPECT_NEAR(ShareOf(used, b), 0.25, 0.01);
}

// Jobs that take no measurable time still cost a lease each: a tenant of
// such jobs holds the turn for quantum / min_charge leases, not for its
// whole backlog.
TEST(SchedulerTest, ZeroRuntimeJobsStillTakeTurns) {
  for (double min_charge : {0.0, 0.001}) {
    SchedulerOptions options;
    options.min_charge = min_charge;
    SchedulerHarness h(options);
    TenantId a = h.Add("a");
    TenantId b = h.Add("b");
    h.Queue(a, 200, 0.0);
    h.Queue(b, 200, 0.0);
    size_t longest_run = 0;
    size_t run = 0;
    std::optional<TenantId> last;
    std::map<TenantId, int> leases;
    for (int i = 0; i < 100; ++i) {
      std::optional<Dispatch> d = h.Lease();
      ASSERT_TRUE(d);
      ASSERT_TRUE(h.scheduler->Complete(d->job, 0).ok());
      run = d->tenant == last ? run + 1 : 1;
      last = d->tenant;
      longest_run = std::max(longest_run, run);
      ++leases[d->tenant];
    }
    if (min_charge == 0) {
      EXPECT_EQ(longest_run, 100u);  // one tenant for as long as it has work
    } else {
      // 0.01 s of credit a turn at 0.001 s a lease, plus rounding.
      EXPECT_LE(longest_run, 11u);
      // Equal weights: an even split, give or take one turn.
      EXPECT_NEAR(leases[a], 50, 11);
      EXPECT_NEAR(leases[b], 50, 11);
    }
  }
}

TEST(SchedulerTest, LongJobsAreChargedByTheirLength) {
  SchedulerHarness h;
  TenantId a = h.Add("a");
  TenantId b = h.Add("b");
  h.Queue(a, 100, 60.0);
  h.Queue(b, 10000, 1.0);
  auto used = h.Cycle(2000);
  EXPECT_NEAR(ShareOf(used, a), 0.5, 0.03);
}

TEST(SchedulerTest, MeasuredRuntimeReplacesUnderDeclaredCost) {
  SchedulerHarness h;
  TenantId liar = h.Add("liar");
  TenantId honest = h.Add("honest");
  h.Queue(liar, 1000, 0.1);  // declares 0.1 s, runs 5 s
  h.Queue(honest, 5000, 1.0);
  auto used = h.Cycle(2000, [&](const Dispatch& d) {
    return d.tenant == liar ? 5.0 : 1.0;
  });
  EXPECT_NEAR(ShareOf(used, liar), 0.5, 0.03);
}

// Leases the next job, expects it charged `cost`, and completes it after
// `runtime`: one step of a test of what the scheduler learns.
void LeaseChargedThenComplete(SchedulerHarness& h, double cost,
                              double runtime) {
  std::optional<Dispatch> d = h.Lease();
  ASSERT_TRUE(d) << "nothing to lease";
  EXPECT_DOUBLE_EQ(d->charged_cost, cost);
  ASSERT_TRUE(h.scheduler->Complete(d->job, runtime).ok());
}

// A tenant whose declarations are ten times what its jobs take is charged
// at the measured scale once a job has succeeded; a job declared twice as
// long is still charged twice as much. Failures teach the scale nothing.
TEST(SchedulerTest, DeclaredCostsAreChargedAtTheirMeasuredScale) {
  SchedulerOptions options;
  options.estimate_alpha = 0.5;
  SchedulerHarness h(options);
  TenantId a = h.Add("a");
  h.Queue(a, 3, 10.0);
  h.Queue(a, 1, 20.0);
  std::optional<Dispatch> first = h.Lease();
  EXPECT_DOUBLE_EQ(first->charged_cost, 10.0);  // nothing measured yet
  ASSERT_TRUE(h.scheduler->Fail(first->job, 50.0).ok());
  LeaseChargedThenComplete(h, 10.0, 1.0);
  LeaseChargedThenComplete(h, 1.0, 1.0);
  EXPECT_DOUBLE_EQ(h.Lease()->charged_cost, 2.0);  // declared 20
}

TEST(SchedulerTest, MissingEstimateUsesDefaultThenLearnedCost) {
  SchedulerOptions options;
  options.default_cost = 2.0;
  options.estimate_alpha = 0.5;
  SchedulerHarness h(options);
  TenantId a = h.Add("a");
  h.Queue(a, 3, std::nullopt);
  LeaseChargedThenComplete(h, 2.0, 4.0);
  LeaseChargedThenComplete(h, 4.0, 8.0);
  EXPECT_DOUBLE_EQ(h.Lease()->charged_cost, 6.0);  // 4 + 0.5 * (8 - 4)
}

TEST(SchedulerTest, FailedAttemptsDoNotTeachTheEstimate) {
  SchedulerHarness h;
  TenantId a = h.Add("a");
  h.Queue(a, 2, std::nullopt);
  std::optional<Dispatch> d = h.Lease();
  ASSERT_TRUE(h.scheduler->Fail(d->job, 30.0).ok());
  EXPECT_DOUBLE_EQ(h.Stats(a).estimate, 1.0);
  EXPECT_DOUBLE_EQ(h.Stats(a).worker_seconds, 30.0);
}

TEST(SchedulerTest, RetriesAreChargedAgain) {
  SchedulerHarness h;
  TenantId retrier = h.Add("retrier");
  TenantId steady = h.Add("steady");
  h.Queue(retrier, 100);  // every attempt fails and goes back to the queue
  h.Queue(steady, 5000);
  std::map<TenantId, double> used;
  for (int i = 0; i < 2000; ++i) {
    std::optional<Dispatch> d = h.Lease();
    ASSERT_TRUE(d);
    used[d->tenant] += 1.0;
    if (d->tenant == retrier) {
      ASSERT_TRUE(h.scheduler->Requeue(d->job, 1.0, h.now).ok());
    } else {
      ASSERT_TRUE(h.scheduler->Complete(d->job, 1.0).ok());
    }
  }
  // Uncharged retries would keep the retrier's credit up and its turn
  // going; charged, it gets one share like anyone else.
  EXPECT_NEAR(ShareOf(used, retrier), 0.5, 0.01);
  EXPECT_DOUBLE_EQ(h.Stats(retrier).worker_seconds, used[retrier]);
}

TEST(SchedulerTest, DuplicateQueuedIdCannotLeakASlot) {
  SchedulerHarness h;
  TenantConfig config = Config("a");
  config.cap = SlotLimit::Count(2);
  config.cap_mode = CapMode::kHard;
  TenantId a = h.Add(config);
  ASSERT_TRUE(h.scheduler->Enqueue({7, a, h.pool, 0, 1.0}, 0).ok());
  ASSERT_TRUE(h.scheduler->Enqueue({7, a, h.pool, 0, 1.0}, 0).ok());
  ASSERT_TRUE(h.Lease());
  EXPECT_EQ(h.scheduler->LeaseNextJob(h.pool).status().code(),
            StatusCode::kInternal);
  ASSERT_TRUE(h.scheduler->Complete(7, 1).ok());
  EXPECT_EQ(h.Stats(a).running, 0u);
}

// Queues `count` jobs of the tenant declared at 0.1 s, and runs one of them
// for 100 s: a big debt.
void RunUpDebt(SchedulerHarness& h, TenantId tenant, int count) {
  h.Queue(tenant, count, 0.1);
  std::optional<Dispatch> d = h.Lease();
  ASSERT_TRUE(d);
  ASSERT_TRUE(h.scheduler->Complete(d->job, 100).ok());
}

TEST(SchedulerTest, ChangingOrganisationKeepsDebt) {
  SchedulerHarness h;
  TenantId a = h.Add("a");
  TenantId b = h.Add("b");
  ASSERT_NO_FATAL_FAILURE(RunUpDebt(h, a, 100));
  TenantConfig moved = Config("a");
  moved.org = "X";
  ASSERT_TRUE(h.scheduler->UpdateTenant(a, moved).ok());
  ASSERT_TRUE(h.scheduler->UpdateTenant(a, Config("a")).ok());
  h.Queue(b, 100);
  auto used = h.Cycle(40);
  EXPECT_EQ(ShareOf(used, a), 0.0);  // still repaying
}

// The same while its queue is empty, into an organisation of its own: the
// debt its own organisation held goes with it.
TEST(SchedulerTest, ChangingOrganisationWhileIdleKeepsDebt) {
  SchedulerHarness h;
  TenantId a = h.Add("a");
  TenantId b = h.Add("b");
  ASSERT_NO_FATAL_FAILURE(RunUpDebt(h, a, 1));  // a is idle now
  TenantConfig moved = Config("a");
  moved.org = "X";
  ASSERT_TRUE(h.scheduler->UpdateTenant(a, moved).ok());
  h.Queue(a, 100);
  h.Queue(b, 100);
  auto used = h.Cycle(40);
  EXPECT_EQ(ShareOf(used, a), 0.0);  // still repaying
}

TEST(SchedulerTest, LoweredWeightLowersBankedCredit) {
  SchedulerOptions options;
  options.quantum = 1;
  options.max_deficit = 4;
  SchedulerHarness h(options);
  TenantId a = h.Add("a", 10);
  h.Queue(a, 4, 100.0);
  std::vector<Dispatch> leased;
  for (int i = 0; i < 3; ++i) leased.push_back(*h.Lease());
  for (const Dispatch& d : leased) ASSERT_TRUE(h.scheduler->Complete(d.job, 0).ok());
  ASSERT_EQ(h.Stats(a).deficit, 10.0);  // refunds leave one grant (1 x 10)
  ASSERT_TRUE(h.scheduler->UpdateTenant(a, Config("a", 1)).ok());
  EXPECT_EQ(h.Stats(a).deficit, 4.0);
}

TEST(SchedulerValidationTest, UnixTimesAreAcceptedAsNow) {
  SchedulerHarness h;
  TenantId a = h.Add("a");
  ASSERT_TRUE(h.scheduler->Enqueue({1, a, h.pool, 0, 1.0}, 1.76e9).ok());
  EXPECT_EQ(h.Stats(a).oldest_ready_at, 1.76e9);
  ExpectInvalid(h.scheduler->Enqueue({2, a, h.pool, 0, 1.0}, -1), "now");
  ExpectInvalid(h.scheduler->Enqueue({2, a, h.pool, 0, 1.0},
                                     std::numeric_limits<double>::infinity()),
                "now");
}

TEST(SchedulerValidationTest, ExtremeNumbersAreRefused) {
  SchedulerHarness h;
  ExpectInvalid(h.scheduler->AddTenant(Config("tiny", 5e-324)).status(),
                "weight");
  ExpectInvalid(h.scheduler->AddTenant(Config("huge", 1e17)).status(),
                "weight");
  TenantId a = h.Add("a");
  ExpectInvalid(h.scheduler->Enqueue({1, a, h.pool, 0, 1e39}, 0), "cost");
  h.Queue(a, 1);
  std::optional<Dispatch> d = h.Lease();
  ExpectInvalid(h.scheduler->Complete(d->job, 1e308), "runtime");
}

TEST(SchedulerTest, LeavingTheRingForfeitsCreditButKeepsDebt) {
  SchedulerOptions options;
  options.quantum = 3;
  options.max_deficit = 3;
  SchedulerHarness h(options);
  TenantId a = h.Add("a");
  h.Queue(a, 1, 1.0);
  std::optional<Dispatch> d = h.Lease();  // earns 3, spends 1, then idles
  EXPECT_DOUBLE_EQ(h.Stats(a).deficit, 0.0);
  ASSERT_TRUE(h.scheduler->Complete(d->job, 0.5).ok());  // refund while idle
  EXPECT_DOUBLE_EQ(h.Stats(a).deficit, 0.0);

  h.Queue(a, 1, 1.0);
  // Earns 3 and spends 0.5 (its declared 1 s at the scale the first job
  // measured, 0.5 / 1): holds 2.5, then idles.
  d = h.Lease();
  ASSERT_TRUE(h.scheduler->Complete(d->job, 9.0).ok());  // 8.5 s over
  EXPECT_DOUBLE_EQ(h.Stats(a).deficit, -8.5);
}

TEST(SchedulerTest, RefundsLeaveAtMostOneGrantOfCredit) {
  SchedulerOptions options;
  options.quantum = 1;
  options.max_deficit = 4;
  SchedulerHarness h(options);
  TenantId a = h.Add("a", 2);
  h.Queue(a, 4, 100.0);  // one stays queued, so the tenant stays active
  std::vector<Dispatch> leased;
  for (int i = 0; i < 3; ++i) leased.push_back(*h.Lease());
  for (const Dispatch& d : leased) {
    ASSERT_TRUE(h.scheduler->Complete(d.job, 0.0).ok());  // refund of 100
  }
  // One grant (quantum 1 x weight 2), not the ceiling (max_deficit x 2 = 8):
  // banked refunds would let it run a burst of short jobs later.
  EXPECT_DOUBLE_EQ(h.Stats(a).deficit, 2.0);
}

TEST(SchedulerTest, ARefundNeverTakesAwayCreditAlreadyBanked) {
  SchedulerOptions options;
  options.quantum = 1;
  options.max_deficit = 4;
  SchedulerHarness h(options);
  TenantId a = h.Add("a");
  h.Queue(a, 2, 0.5);
  Dispatch d = *h.Lease();  // credit 1 - 0.5 = 0.5 left
  ASSERT_DOUBLE_EQ(h.Stats(a).deficit, 0.5);
  ASSERT_TRUE(h.scheduler->Complete(d.job, 0.25).ok());  // refund 0.25
  EXPECT_DOUBLE_EQ(h.Stats(a).deficit, 0.75);  // under one grant: kept whole
}

// --- Caps and floors --------------------------------------------------------

TEST(SchedulerTest, HardCapHoldsEvenWhenWorkersIdle) {
  SchedulerHarness h;
  TenantConfig config = Config("a");
  config.cap = SlotLimit::Count(2);
  config.cap_mode = CapMode::kHard;
  TenantId a = h.Add(config);
  h.Queue(a, 10);
  std::optional<Dispatch> first = h.Lease();
  ASSERT_TRUE(h.Lease());
  EXPECT_FALSE(h.Lease());
  ASSERT_TRUE(h.scheduler->Complete(first->job, 1).ok());
  EXPECT_TRUE(h.Lease());
  EXPECT_FALSE(h.Lease());
}

TEST(SchedulerTest, WorkConservingCapBindsOnlyWhileOthersWait) {
  SchedulerHarness h;
  TenantConfig config = Config("a");
  config.cap = SlotLimit::Count(2);
  TenantId a = h.Add(config);
  TenantId b = h.Add("b");
  h.Queue(a, 10);
  for (int i = 0; i < 5; ++i) ASSERT_EQ(h.Lease()->tenant, a);  // alone
  h.Queue(b, 10);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(h.Lease()->tenant, b);
  EXPECT_EQ(h.Stats(a).running, 5u);
}

TEST(SchedulerTest, ShareCapFollowsLiveCapacity) {
  SchedulerHarness h(SchedulerOptions{}, 8);
  TenantConfig config = Config("a");
  config.cap = SlotLimit::Share(0.5);
  config.cap_mode = CapMode::kHard;
  TenantId a = h.Add(config);
  h.Queue(a, 100);
  int leased = 0;
  while (h.Lease()) ++leased;
  EXPECT_EQ(leased, 4);
  ASSERT_TRUE(h.scheduler->SetCapacity(h.pool, 20).ok());
  while (h.Lease()) ++leased;
  EXPECT_EQ(leased, 10);
  ASSERT_TRUE(h.scheduler->SetCapacity(h.pool, 2).ok());
  EXPECT_FALSE(h.Lease());  // 10 running, cap now 1
  EXPECT_EQ(h.Stats(a).running, 10u);
}

TEST(SchedulerTest, FloorIsServedFirst) {
  SchedulerHarness h(SchedulerOptions{}, 8);
  TenantId big = h.Add("big", 100);
  TenantConfig config = Config("small", 1);
  config.floor = SlotLimit::Share(0.5);
  TenantId small = h.Add(config);
  h.Queue(big, 100);
  h.Queue(small, 100);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(h.Lease());
  EXPECT_EQ(h.Stats(small).running, 4u);  // its floor, despite weight 1:100
  EXPECT_EQ(h.Stats(big).running, 4u);
}

// What each tenant got while a pool of `slots` was held full for `steps`
// steps: each step a running job picked at random (fixed seed) ends after
// its charged cost and the next is leased.
struct Held {
  uint32_t fewest = UINT32_MAX;  // jobs running after a step
  uint32_t most = 0;
  int leases = 0;
  std::pair<uint32_t, uint32_t> range() const { return {fewest, most}; }
};
std::map<TenantId, Held> RunFull(SchedulerHarness& h,
                                 const std::vector<TenantId>& tenants,
                                 int steps, int slots = 8) {
  std::map<TenantId, Held> held;
  std::vector<Dispatch> running;
  for (int i = 0; i < slots; ++i) {
    std::optional<Dispatch> d = h.Lease();
    if (!d) {
      ADD_FAILURE() << "the pool did not fill";
      return held;
    }
    running.push_back(*d);
  }
  std::mt19937 random(7);
  for (int i = 0; i < steps; ++i) {
    Dispatch& slot = running[random() % running.size()];
    EXPECT_TRUE(h.scheduler->Complete(slot.job, slot.charged_cost).ok());
    std::optional<Dispatch> next = h.Lease();
    if (!next) {
      ADD_FAILURE() << "a free slot found no job";
      return held;
    }
    slot = *next;
    ++held[slot.tenant].leases;
    for (TenantId tenant : tenants) {
      uint32_t now = h.Stats(tenant).running;
      held[tenant].fewest = std::min(held[tenant].fewest, now);
      held[tenant].most = std::max(held[tenant].most, now);
    }
  }
  return held;
}

using Range = std::pair<uint32_t, uint32_t>;

TenantId AddBusy(SchedulerHarness& h, const std::string& name,
                 SlotLimit floor = {}, double weight = 1,
                 const std::string& org = "") {
  TenantConfig config = Config(name, weight);
  config.floor = floor;
  config.org = org;
  TenantId tenant = h.Add(config);
  h.Queue(tenant, 5000);
  return tenant;
}

// 3 x 30% of 8 slots rounds up to 9 slots of floors. A tenant without a
// floor used to get none while the three had work. Their exact 7.2 leaves
// it 0.8 of a slot: it gets the eighth, which it wins in DRR (in the first
// steps, while the floored tenants' debt is small, not always), and each
// floored tenant keeps its 2.4 rounded down.
TEST(SchedulerTest, RoundedUpFloorsLeaveATenantWithoutOneRunning) {
  SchedulerHarness h(SchedulerOptions{}, 8);
  TenantId a = AddBusy(h, "a", SlotLimit::Share(0.3));
  TenantId b = AddBusy(h, "b", SlotLimit::Share(0.3));
  TenantId c = AddBusy(h, "c", SlotLimit::Share(0.3));
  TenantId other = AddBusy(h, "other");
  auto held = RunFull(h, {a, b, c, other}, 2000);
  EXPECT_EQ(held[other].most, 1u);
  EXPECT_GE(held[other].leases, 0.1 * 2000);  // the 0.8 of 8 slots
  for (TenantId tenant : {a, b, c})
    EXPECT_EQ(held[tenant].range(), Range(2, 3));
}

TEST(SchedulerTest, AFloorStillRoundsUpWhereItFits) {
  SchedulerHarness h(SchedulerOptions{}, 8);
  TenantId small = AddBusy(h, "small", SlotLimit::Share(0.3), 1);
  TenantId big = AddBusy(h, "big", SlotLimit(), 9);
  auto held = RunFull(h, {small, big}, 2000);
  EXPECT_EQ(held[small].range(), Range(3, 3));  // its 2.4, rounded up
  EXPECT_EQ(held[big].range(), Range(5, 5));
}

// 2.4 + 2.4 + 3.2 slots of 8: the floors rounded down hold 7, and their
// exact sum keeps the eighth for them too.
TEST(SchedulerTest, FloorsThatReserveThePoolAreKept) {
  SchedulerHarness h(SchedulerOptions{}, 8);
  TenantId a = AddBusy(h, "a", SlotLimit::Share(0.3));
  TenantId b = AddBusy(h, "b", SlotLimit::Share(0.3));
  TenantId c = AddBusy(h, "c", SlotLimit::Share(0.4));
  TenantId other = AddBusy(h, "other", SlotLimit(), 100);
  auto held = RunFull(h, {a, b, c, other}, 2000);
  EXPECT_EQ(held[other].range(), Range(0, 0));
  EXPECT_EQ(held[a].most + held[b].most + held[c].most, 3u + 3u + 4u);
  for (TenantId tenant : {a, b}) EXPECT_GE(held[tenant].fewest, 2u);
  EXPECT_GE(held[c].fewest, 3u);
}

// The slot a floor rounds up to, once the budget is spent, is won in DRR:
// D's 10% floor (0.8 of 8 slots) must not rank D behind F, which has none.
// A's floor of 7 holds the budget; D and F take turns at the eighth slot.
TEST(SchedulerTest, ARoundedUpSlotPastTheBudgetIsWonInDrr) {
  SchedulerHarness h(SchedulerOptions{}, 8);
  TenantId a = AddBusy(h, "a", SlotLimit::Count(7));
  TenantId d = AddBusy(h, "d", SlotLimit::Share(0.1));
  TenantId f = AddBusy(h, "f");
  auto held = RunFull(h, {a, d, f}, 2000);
  EXPECT_EQ(held[a].range(), Range(7, 7));
  EXPECT_GT(held[d].leases, 0);
  EXPECT_NEAR(held[d].leases, held[f].leases, 0.2 * held[f].leases);
}

// A small floor must not leave its tenant worse off than none: E's 5% of
// 4 slots (0.2, rounding up to 1) waits on DRR like a tenant without a
// floor once A, B and C hold their 1.2 rounded down, and wins the fourth
// slot there. Counted as a floor tenant only, it got that slot in turn
// with them, a quarter of the time.
TEST(SchedulerTest, ASmallFloorDoesNotCostItsTenantTheDrrSlot) {
  SchedulerHarness h(SchedulerOptions{}, 4);
  TenantId a = AddBusy(h, "a", SlotLimit::Share(0.3));
  TenantId b = AddBusy(h, "b", SlotLimit::Share(0.3));
  TenantId c = AddBusy(h, "c", SlotLimit::Share(0.3));
  TenantId e = AddBusy(h, "e", SlotLimit::Share(0.05));
  auto held = RunFull(h, {a, b, c, e}, 2000, 4);
  for (TenantId tenant : {a, b, c}) EXPECT_GE(held[tenant].fewest, 1u);
  EXPECT_GE(held[e].leases, 0.2 * 2000);  // about 1 slot of 4
}

// A floor is charged to its organisation like any dispatch: A's floor of 4
// (half of 8 slots) holds, although its organisation X weighs 1 to Y's 3,
// and it is not on top of X's share: B, A's sibling, gets what is left of
// X's two slots, none, while Y's C takes the other four.
TEST(SchedulerTest, AFloorIsChargedToItsOrganisation) {
  SchedulerHarness h(SchedulerOptions{}, 8);
  ASSERT_TRUE(h.scheduler->SetOrg({"X", 1}).ok());
  ASSERT_TRUE(h.scheduler->SetOrg({"Y", 3}).ok());
  TenantId a = AddBusy(h, "a", SlotLimit::Share(0.5), 1, "X");
  TenantId b = AddBusy(h, "b", SlotLimit(), 1, "X");
  TenantId c = AddBusy(h, "c", SlotLimit(), 1, "Y");
  auto held = RunFull(h, {a, b, c}, 2000);
  EXPECT_EQ(held[a].range(), Range(4, 4));
  EXPECT_EQ(held[b].range(), Range(0, 0));
  EXPECT_EQ(held[c].range(), Range(4, 4));
}

TEST(SchedulerTest, ConfigChangeAppliesToQueuedBacklog) {
  SchedulerHarness h;
  TenantId a = h.Add("a");
  h.Queue(a, 10);
  TenantConfig capped = Config("a");
  capped.cap = SlotLimit::Count(1);
  capped.cap_mode = CapMode::kHard;
  ASSERT_TRUE(h.scheduler->UpdateTenant(a, capped).ok());
  ASSERT_TRUE(h.Lease());
  EXPECT_FALSE(h.Lease());
  EXPECT_EQ(h.scheduler->GetTenant(a)->cap.value(), 1.0);
}

// --- Hierarchy ----------------------------------------------------------------

TEST(SchedulerTest, SplittingIntoSubAccountsDoesNotRaiseOrgShare) {
  SchedulerHarness h;
  std::vector<TenantId> x;
  for (int i = 0; i < 10; ++i) {
    TenantConfig config = Config("x" + std::to_string(i));
    config.org = "X";
    x.push_back(h.Add(config));
    h.Queue(x.back(), 500);
  }
  TenantConfig y_config = Config("y");
  y_config.org = "Y";
  TenantId y = h.Add(y_config);
  h.Queue(y, 5000);
  auto used = h.Cycle(2000);
  EXPECT_NEAR(ShareOf(used, y), 0.5, 0.01);
  for (TenantId sub : x) EXPECT_NEAR(ShareOf(used, sub), 0.05, 0.01);
}

TEST(SchedulerTest, OrgWeightsApply) {
  SchedulerHarness h;
  ASSERT_TRUE(h.scheduler->SetOrg({"X", 3}).ok());
  TenantConfig x = Config("x");
  x.org = "X";
  TenantConfig y = Config("y");
  y.org = "Y";
  TenantId xi = h.Add(x);
  TenantId yi = h.Add(y);
  h.Queue(xi, 1000);
  h.Queue(yi, 1000);
  EXPECT_NEAR(ShareOf(h.Cycle(800), xi), 0.75, 0.01);
}

// --- Pools, pause, cancel -----------------------------------------------------

TEST(SchedulerTest, PoolsShareIndependently) {
  SchedulerHarness h;
  PoolId renders = h.scheduler->AddPool("renders").value();
  ASSERT_TRUE(h.scheduler->SetCapacity(renders, 2).ok());
  TenantId a = h.Add("a");
  h.Queue(a, 3, 60.0, 0, renders);
  EXPECT_FALSE(h.Lease(h.pool));
  ASSERT_TRUE(h.Lease(renders));
  EXPECT_EQ(h.scheduler->Stats(a, renders)->running, 1u);
  EXPECT_EQ(h.scheduler->Stats(a, renders)->queued, 2u);
  EXPECT_EQ(h.Stats(a).queued, 0u);
}

// A pool holds state only for the tenants that used it, and a tenant that
// joins a pool late brings the settings it was given before.
TEST(SchedulerTest, APoolHoldsOnlyTheTenantsThatUsedIt) {
  SchedulerHarness h;
  for (int i = 0; i < 1000; ++i) h.Add("t" + std::to_string(i));
  PoolId gpu = h.scheduler->AddPool("gpu").value();
  ASSERT_TRUE(h.scheduler->SetCapacity(gpu, 4).ok());
  EXPECT_EQ(h.scheduler->TenantsIn(gpu).size(), 0u);
  EXPECT_EQ(h.scheduler->TenantsIn(h.pool).size(), 0u);

  TenantConfig capped = Config("t7");
  capped.cap = SlotLimit::Count(1);
  capped.cap_mode = CapMode::kHard;
  ASSERT_TRUE(h.scheduler->UpdateTenant(7, capped).ok());
  h.Queue(7, 2, 1.0, 0, gpu);
  EXPECT_EQ(h.scheduler->TenantsIn(gpu).size(), 1u);
  EXPECT_EQ(h.scheduler->TenantsIn(h.pool).size(), 0u);
  ASSERT_TRUE(h.Lease(gpu));
  EXPECT_FALSE(h.Lease(gpu));  // its cap of 1 holds here too

  // The others read as idle there, and change nothing by being read.
  EXPECT_EQ(h.scheduler->Stats(8, gpu)->queued, 0u);
  EXPECT_EQ(*h.scheduler->OverShare(8, gpu), false);
  EXPECT_EQ(h.scheduler->Cancel(8, gpu, 1).code(), StatusCode::kNotFound);
  EXPECT_EQ(h.scheduler->TenantsIn(gpu).size(), 1u);
  EXPECT_EQ(h.scheduler->TenantsIn(gpu), (std::vector<TenantId>{7}));
}

TEST(SchedulerTest, PausedTenantKeepsItsQueue) {
  SchedulerHarness h;
  TenantId a = h.Add("a");
  h.Queue(a, 2);
  ASSERT_TRUE(h.scheduler->SetPaused(a, true).ok());
  EXPECT_FALSE(h.Lease());
  EXPECT_EQ(h.Stats(a).queued, 2u);
  ASSERT_TRUE(h.scheduler->SetPaused(a, false).ok());
  EXPECT_TRUE(h.Lease());
}

TEST(SchedulerTest, CancelRemovesAQueuedJob) {
  SchedulerHarness h;
  TenantId a = h.Add("a");
  std::vector<JobId> ids = h.Queue(a, 3);
  ASSERT_TRUE(h.scheduler->Cancel(a, h.pool, ids[0]).ok());
  EXPECT_EQ(h.Stats(a).queued, 2u);
  EXPECT_EQ(h.Lease()->job, ids[1]);
  ASSERT_TRUE(h.scheduler->Cancel(a, h.pool, ids[2]).ok());
  EXPECT_FALSE(h.Lease());
}

TEST(SchedulerTest, RequeuedJobReturnsToTheBack) {
  SchedulerHarness h;
  TenantId a = h.Add("a");
  std::vector<JobId> ids = h.Queue(a, 2);
  std::optional<Dispatch> d = h.Lease();
  ASSERT_EQ(d->job, ids[0]);
  ASSERT_TRUE(h.scheduler->Requeue(d->job, 0.5, 7.0).ok());
  EXPECT_EQ(h.Lease()->job, ids[1]);
  EXPECT_EQ(h.Stats(a).oldest_ready_at, 7.0);
  EXPECT_EQ(h.Lease()->job, ids[0]);
}

TEST(SchedulerTest, PurgeEmptiesOneTenantsQueue) {
  SchedulerHarness h;
  TenantId a = h.Add("a");
  TenantId b = h.Add("b");
  std::vector<JobId> ids = h.Queue(a, 3);
  h.Queue(b, 1);
  EXPECT_EQ(*h.scheduler->Purge(a, h.pool), ids);
  EXPECT_EQ(h.Stats(a).queued, 0u);
  EXPECT_EQ(h.Lease()->tenant, b);
  EXPECT_FALSE(h.Lease());
}

TEST(SchedulerTest, AdoptedRunningJobsCountAgainstCapsAndComplete) {
  SchedulerHarness h;
  TenantConfig config = Config("a");
  config.cap = SlotLimit::Count(1);
  config.cap_mode = CapMode::kHard;
  TenantId a = h.Add(config);
  ASSERT_TRUE(h.scheduler->AdoptRunning({77, a, h.pool, 0, 2.0}).ok());
  EXPECT_EQ(h.scheduler->AdoptRunning({77, a, h.pool, 0, 2.0}).code(),
            StatusCode::kAlreadyExists);
  h.Queue(a, 1);
  EXPECT_FALSE(h.Lease());  // the adopted job holds the only slot
  ASSERT_TRUE(h.scheduler->Complete(77, 2.0).ok());
  EXPECT_TRUE(h.Lease());
}

TEST(SchedulerTest, OverShareOnlyWhileOthersWait) {
  SchedulerHarness h(SchedulerOptions{}, 4);
  TenantId a = h.Add("a");
  TenantId b = h.Add("b");
  h.Queue(a, 4);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(h.Lease()->tenant, a);
  EXPECT_FALSE(*h.scheduler->OverShare(a, h.pool));  // alone: all is fair
  h.Queue(b, 1);
  EXPECT_TRUE(*h.scheduler->OverShare(a, h.pool));   // 4 running, share 2
  EXPECT_FALSE(*h.scheduler->OverShare(b, h.pool));
}

// Shares are weighed in two levels, as DRR weighs them: organisation X's
// three tenants share half of 8 slots, and y, alone in its own
// organisation, has the other half. y running 4 is its share, not over it;
// an X tenant running 2 is over its 4/3. A heavier X moves the line.
TEST(SchedulerTest, OverShareWeighsOrganisationsFirst) {
  SchedulerHarness h(SchedulerOptions{}, 8);
  std::vector<TenantId> x;
  for (const char* name : {"x1", "x2", "x3"}) {
    TenantConfig config = Config(name);
    config.org = "X";
    x.push_back(h.Add(config));
    h.Queue(x.back(), 10);
  }
  TenantId y = h.Add("y");
  h.Queue(y, 10);
  std::map<TenantId, int> running;
  for (int i = 0; i < 8; ++i) ++running[h.Lease()->tenant];
  ASSERT_EQ(running[y], 4);
  EXPECT_FALSE(*h.scheduler->OverShare(y, h.pool));
  for (TenantId t : x) {
    EXPECT_EQ(*h.scheduler->OverShare(t, h.pool), running[t] > 4.0 / 3) << t;
  }
  ASSERT_TRUE(h.scheduler->SetOrg({"X", 3}).ok());  // X's share: 6 of 8
  EXPECT_TRUE(*h.scheduler->OverShare(y, h.pool));
}

TEST(SchedulerTest, TenantHeldByHardCapDoesNotCountAsWaiting) {
  SchedulerHarness h(SchedulerOptions{}, 4);
  TenantId a = h.Add("a");
  TenantConfig capped = Config("b");
  capped.cap = SlotLimit::Count(1);
  capped.cap_mode = CapMode::kHard;
  TenantId b = h.Add(capped);
  h.Queue(b, 2);
  ASSERT_EQ(h.Lease()->tenant, b);  // b at its cap, one job held
  h.Queue(a, 3);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(h.Lease()->tenant, a);
  EXPECT_FALSE(*h.scheduler->OverShare(a, h.pool));
}

// --- Baselines ----------------------------------------------------------------

SchedulerOptions WithPolicy(Policy policy) {
  SchedulerOptions options;
  options.policy = policy;
  return options;
}

TEST(BaselinePolicyTest, FifoServesArrivalOrderAcrossTenants) {
  SchedulerHarness h(WithPolicy(Policy::kFifo));
  TenantId a = h.Add("a");
  TenantId b = h.Add("b");
  std::vector<JobId> order = h.Queue(a, 3);
  std::vector<JobId> later = h.Queue(b, 2);
  order.insert(order.end(), later.begin(), later.end());
  std::vector<JobId> got;
  while (auto d = h.Lease()) got.push_back(d->job);
  EXPECT_EQ(got, order);
}

TEST(BaselinePolicyTest, RoundRobinCountsJobsNotSeconds) {
  SchedulerHarness h(WithPolicy(Policy::kRoundRobin));
  TenantId a = h.Add("a");
  TenantId b = h.Add("b");
  h.Queue(a, 100, 60.0);
  h.Queue(b, 100, 1.0);
  auto used = h.Cycle(100);
  EXPECT_NEAR(ShareOf(used, a), 60.0 / 61.0, 0.001);
}

TEST(BaselinePolicyTest, CapsUnderArrivalOrderPolicies) {
  TenantConfig capped = Config("a");
  capped.cap = SlotLimit::Count(2);
  for (Policy policy :
       {Policy::kFifo, Policy::kHardCap, Policy::kWorkConservingCap}) {
    SchedulerHarness h(WithPolicy(policy));
    TenantId a = h.Add(capped);
    h.Queue(a, 10);
    int alone = 0;
    for (int slot = 0; slot < 8 && h.Lease(); ++slot) ++alone;
    EXPECT_EQ(alone, policy == Policy::kHardCap ? 2 : 8) << PolicyName(policy);
  }
}

TEST(BaselinePolicyTest, WorkConservingCapYieldsToWaitingTenants) {
  SchedulerHarness h(WithPolicy(Policy::kWorkConservingCap));
  TenantConfig capped = Config("a");
  capped.cap = SlotLimit::Count(1);
  TenantId a = h.Add(capped);
  TenantId b = h.Add("b");
  h.Queue(a, 5);
  h.Queue(b, 2);  // arrived later, but a is over its cap
  EXPECT_EQ(h.Lease()->tenant, a);
  EXPECT_EQ(h.Lease()->tenant, b);
  EXPECT_EQ(h.Lease()->tenant, b);
  EXPECT_EQ(h.Lease()->tenant, a);  // nobody else waits
}

}  // namespace
}  // namespace fairq::sched
