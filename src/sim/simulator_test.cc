#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/scenario.h"
#include "sim/workload.h"

namespace fairq::sim {
namespace {

Scenario Parse(const std::string& yaml) {
  StatusOr<Scenario> scenario = ParseScenario(yaml, "test.yaml");
  EXPECT_TRUE(scenario.ok()) << scenario.status().ToString();
  return scenario.ok() ? *scenario : Scenario();
}

PolicyResult RunPolicy(const Scenario& scenario, sched::Policy policy) {
  StatusOr<PolicyResult> result = Simulate(scenario, policy);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : PolicyResult();
}

void ExpectSame(const PolicyResult& a, const PolicyResult& b) {
  EXPECT_EQ(a.utilization, b.utilization);
  EXPECT_EQ(a.horizon_s, b.horizon_s);
  ASSERT_EQ(a.tenants.size(), b.tenants.size());
  for (size_t i = 0; i < a.tenants.size(); ++i) {
    SCOPED_TRACE(a.tenants[i].tenant);
    EXPECT_EQ(a.tenants[i].jobs, b.tenants[i].jobs);
    EXPECT_EQ(a.tenants[i].wait_p50_s, b.tenants[i].wait_p50_s);
    EXPECT_EQ(a.tenants[i].wait_p99_s, b.tenants[i].wait_p99_s);
    EXPECT_EQ(a.tenants[i].wait_max_s, b.tenants[i].wait_max_s);
    EXPECT_EQ(a.tenants[i].finish_s, b.tenants[i].finish_s);
    EXPECT_EQ(a.tenants[i].worker_seconds, b.tenants[i].worker_seconds);
    EXPECT_EQ(a.tenants[i].share, b.tenants[i].share);
  }
}

TEST(NearestRankTest, PicksTheSmallestValueCoveringThePercent) {
  std::vector<double> waits = {0, 0, 1, 1};
  EXPECT_EQ(NearestRank(waits, 50), 0);
  EXPECT_EQ(NearestRank(waits, 51), 1);
  EXPECT_EQ(NearestRank(waits, 99), 1);
  EXPECT_EQ(NearestRank(waits, 100), 1);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_EQ(NearestRank(hundred, 99), 99);
  EXPECT_EQ(NearestRank({}, 50), 0);
}

// 2 workers, 4 jobs of 1 s at t=0: two start at 0, two at 1, all done at 2.
TEST(SimulatorTest, TinyCaseByHand) {
  Scenario scenario = Parse(
      "name: tiny\nworkers: 2\ntenants: [{name: A}]\n"
      "arrivals: [{tenant: A, at: 0, count: 4, cost: 1}]\n");
  for (sched::Policy policy : AllPolicies()) {
    SCOPED_TRACE(std::string(sched::PolicyName(policy)));
    PolicyResult result = RunPolicy(scenario, policy);
    EXPECT_EQ(result.policy, policy);
    EXPECT_EQ(result.horizon_s, 2);
    EXPECT_EQ(result.utilization, 1.0);
    ASSERT_EQ(result.tenants.size(), 1u);
    const TenantResult& a = result.tenants[0];
    EXPECT_EQ(a.tenant, "A");
    EXPECT_EQ(a.jobs, 4u);
    EXPECT_EQ(a.wait_p50_s, 0);  // waits 0, 0, 1, 1
    EXPECT_EQ(a.wait_p99_s, 1);
    EXPECT_EQ(a.wait_max_s, 1);
    EXPECT_EQ(a.finish_s, 2);
    EXPECT_EQ(a.worker_seconds, 4);
    EXPECT_EQ(a.share, 1.0);
  }
}

// Completions free workers before same-instant arrivals are placed.
TEST(SimulatorTest, ArrivalAtACompletionInstantStartsAtOnce) {
  Scenario scenario = Parse(
      "name: t\nworkers: 1\ntenants: [{name: A}, {name: B}]\n"
      "arrivals:\n"
      "  - {tenant: A, at: 0, count: 1, cost: 2}\n"
      "  - {tenant: B, at: 2, count: 1, cost: 1}\n");
  PolicyResult result = RunPolicy(scenario, sched::Policy::kDrr);
  EXPECT_EQ(result.tenants[1].wait_max_s, 0);
  EXPECT_EQ(result.tenants[1].finish_s, 3);
  EXPECT_EQ(result.horizon_s, 3);
  EXPECT_EQ(result.utilization, 1.0);
}

// 1 worker, 5 jobs of 1 s at t=0, cut at 2.5 s: jobs start at 0, 1 and 2;
// the other two never start and wait the whole 2.5 s.
TEST(SimulatorTest, DurationCountsUnstartedJobsAndClipsWork) {
  Scenario scenario = Parse(
      "name: cut\nworkers: 1\nduration: 2.5\n"
      "tenants: [{name: A}, {name: B}]\n"
      "arrivals:\n"
      "  - {tenant: A, at: 0, count: 5, cost: 1}\n"
      "  - {tenant: B, at: 3, count: 1, cost: 1}\n");
  PolicyResult result = RunPolicy(scenario, sched::Policy::kFifo);
  EXPECT_EQ(result.horizon_s, 2.5);
  EXPECT_EQ(result.utilization, 1.0);
  const TenantResult& a = result.tenants[0];
  EXPECT_EQ(a.jobs, 5u);  // waits 0, 1, 2, 2.5, 2.5
  EXPECT_EQ(a.wait_p50_s, 2);
  EXPECT_EQ(a.wait_max_s, 2.5);
  EXPECT_FALSE(a.finish_s.has_value());
  EXPECT_EQ(a.worker_seconds, 2.5);
  EXPECT_EQ(a.share, 1.0);
  const TenantResult& b = result.tenants[1];  // arrives after the cut
  EXPECT_EQ(b.jobs, 0u);
  EXPECT_FALSE(b.finish_s.has_value());
  EXPECT_EQ(b.worker_seconds, 0);
}

TEST(SimulatorTest, DurationBeyondTheLastJobKeepsFinishTimes) {
  Scenario scenario = Parse(
      "name: t\nworkers: 2\nduration: 10\ntenants: [{name: A}]\n"
      "arrivals: [{tenant: A, at: 0, count: 4, cost: 1}]\n");
  PolicyResult result = RunPolicy(scenario, sched::Policy::kDrr);
  EXPECT_EQ(result.tenants[0].finish_s, 2);
  EXPECT_DOUBLE_EQ(result.utilization, 4.0 / 20.0);
}

TEST(SimulatorTest, SameSeedGivesIdenticalResults) {
  const std::string yaml =
      "name: t\nseed: 42\nworkers: 3\nduration: 300\n"
      "tenants: [{name: A, weight: 2}, {name: B, cap: 1}, {name: C}]\n"
      "arrivals:\n"
      "  - {tenant: A, at: 5, count: 400, cost: 1, cost_jitter: 0.9}\n"
      "  - {tenant: B, rate: 1.5, until: 250, cost: 2, cost_jitter: 0.5}\n"
      "  - {tenant: C, rate: 0.7, until: 290, cost: 0.5, "
      "declared_cost: none, cost_jitter: 0.3}\n";
  Scenario first = Parse(yaml);
  Scenario second = Parse(yaml);
  for (sched::Policy policy : AllPolicies()) {
    SCOPED_TRACE(std::string(sched::PolicyName(policy)));
    ExpectSame(RunPolicy(first, policy), RunPolicy(second, policy));
  }
  Scenario reseeded = first;
  reseeded.seed = 43;
  EXPECT_NE(RunPolicy(first, sched::Policy::kDrr).tenants[0].worker_seconds,
            RunPolicy(reseeded, sched::Policy::kDrr).tenants[0].worker_seconds);
}

TEST(SimulatorTest, SeparatePoolsRunInParallel) {
  Scenario scenario = Parse(
      "name: t\npools: {default: 1, renders: 1}\n"
      "tenants: [{name: A}, {name: B, pool: renders}]\n"
      "arrivals:\n"
      "  - {tenant: A, at: 0, count: 2, cost: 1}\n"
      "  - {tenant: B, at: 0, count: 2, cost: 1}\n");
  PolicyResult result = RunPolicy(scenario, sched::Policy::kFifo);
  EXPECT_EQ(result.tenants[0].finish_s, 2);
  EXPECT_EQ(result.tenants[1].finish_s, 2);
  EXPECT_EQ(result.utilization, 1.0);
}

TEST(WorkloadTest, UnitIntervalCoversZeroToOne) {
  EXPECT_EQ(UnitInterval(0), 0.0);
  EXPECT_LT(UnitInterval(~uint64_t{0}), 1.0);
  EXPECT_GT(UnitInterval(~uint64_t{0}), 0.999999);
  EXPECT_EQ(UnitInterval(uint64_t{1} << 63), 0.5);
}

TEST(WorkloadTest, JobsComeInArrivalOrderWithSequentialTies) {
  Scenario scenario = Parse(
      "name: t\nworkers: 1\ntenants: [{name: A}, {name: B}]\n"
      "arrivals:\n"
      "  - {tenant: A, at: 1, count: 2}\n"
      "  - {tenant: B, rate: 2, from: 0, until: 2}\n");
  std::vector<SimJob> jobs = ExpandArrivals(scenario);
  ASSERT_EQ(jobs.size(), 6u);
  std::vector<double> times;
  for (const SimJob& job : jobs) times.push_back(job.arrival);
  EXPECT_EQ(times, (std::vector<double>{0, 0.5, 1, 1, 1, 1.5}));
  // At t=1 the earlier-listed arrival (A's burst) comes first.
  EXPECT_EQ(jobs[2].tenant, 0u);
  EXPECT_EQ(jobs[3].tenant, 0u);
  EXPECT_EQ(jobs[4].tenant, 1u);
}

TEST(WorkloadTest, CostJitterStaysInRangeAndAveragesOut) {
  Scenario scenario = Parse(
      "name: t\nseed: 9\nworkers: 1\ntenants: [{name: A}]\n"
      "arrivals: [{tenant: A, at: 0, count: 10000, cost: 2, "
      "cost_jitter: 0.5}]\n");
  std::vector<SimJob> jobs = ExpandArrivals(scenario);
  double sum = 0;
  double low = 10;
  double high = 0;
  for (const SimJob& job : jobs) {
    sum += job.cost;
    low = std::min(low, job.cost);
    high = std::max(high, job.cost);
    EXPECT_EQ(job.declared_cost, 2.0);  // the producer declares the nominal
  }
  EXPECT_GE(low, 1.0);
  EXPECT_LT(low, 1.01);
  EXPECT_LE(high, 3.0);
  EXPECT_GT(high, 2.99);
  EXPECT_NEAR(sum / 10000, 2.0, 0.02);
  // The true costs reach the report: worker-seconds are their sum.
  PolicyResult result = RunPolicy(scenario, sched::Policy::kFifo);
  EXPECT_DOUBLE_EQ(result.tenants[0].worker_seconds, sum);
  EXPECT_DOUBLE_EQ(result.tenants[0].finish_s.value_or(0), sum);
}

TEST(WorkloadTest, DeclaredCostIsPassedThrough) {
  Scenario scenario = Parse(
      "name: t\nworkers: 1\ntenants: [{name: A}]\n"
      "arrivals:\n"
      "  - {tenant: A, at: 0, count: 1, cost: 3}\n"
      "  - {tenant: A, at: 0, count: 1, cost: 3, declared_cost: 0.5}\n"
      "  - {tenant: A, at: 0, count: 1, cost: 3, declared_cost: none}\n");
  std::vector<SimJob> jobs = ExpandArrivals(scenario);
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].declared_cost, 3.0);
  EXPECT_EQ(jobs[1].declared_cost, 0.5);
  EXPECT_FALSE(jobs[2].declared_cost.has_value());
  for (const SimJob& job : jobs) EXPECT_EQ(job.cost, 3.0);
}

// Runs the scenario under DRR and expects every tenant to get `share` of
// the worker-seconds, within `tolerance`.
void ExpectSharesUnderDrr(const std::string& yaml, double share,
                          double tolerance) {
  PolicyResult result = RunPolicy(Parse(yaml), sched::Policy::kDrr);
  for (const TenantResult& tenant : result.tenants) {
    SCOPED_TRACE(tenant.tenant);
    EXPECT_NEAR(tenant.share, share, tolerance);
  }
}

// Under-declaring cost must not buy share: the scheduler corrects every
// charge to the measured runtime, and the simulator reports true runtimes.
TEST(SimulatorTest, UnderDeclaredCostGainsNoShareUnderDrr) {
  ExpectSharesUnderDrr(
      "name: liar\nworkers: 8\nduration: 600\n"
      "tenants: [{name: Honest}, {name: Liar}, {name: Silent}]\n"
      "arrivals:\n"
      "  - {tenant: Honest, at: 0, count: 3000, cost: 1}\n"
      "  - {tenant: Liar, at: 0, count: 3000, cost: 1, declared_cost: 0.1}\n"
      "  - {tenant: Silent, at: 0, count: 3000, cost: 1, "
      "declared_cost: none}\n",
      1.0 / 3, 0.03);
}

// Over-declaring must not cost share either. Refunds leave at most one
// grant of credit, so charged as declared the tenant declaring 10 s for
// 1 s jobs lost 9 s of each and got an eighth of the workers; charged at
// its measured scale, it gets half.
TEST(SimulatorTest, OverDeclaredCostLosesNoShareUnderDrr) {
  ExpectSharesUnderDrr(
      "name: cautious\nworkers: 8\nduration: 600\n"
      "tenants: [{name: Honest}, {name: Cautious}]\n"
      "arrivals:\n"
      "  - {tenant: Honest, at: 0, count: 5000, cost: 1}\n"
      "  - {tenant: Cautious, at: 0, count: 5000, cost: 1, "
      "declared_cost: 10}\n",
      0.5, 0.05);
}

// Runtimes that vary about a learned estimate (+-90%) come out within 0.01
// of half. The short jobs' refunds are kept but for what the one-grant
// credit limit cuts: measured over 8 seeds of 3,000 s, the varying tenant
// gets 0.4928 of the workers (0.4975 at +-50%), against 0.5000 with no
// limit and 0.4501 with every refund dropped (which fails here).
TEST(SimulatorTest, VaryingRuntimesLoseLittleShareUnderDrr) {
  ExpectSharesUnderDrr(
      "name: jitter\nworkers: 8\nduration: 600\n"
      "tenants: [{name: Steady}, {name: Varying}]\n"
      "arrivals:\n"
      "  - {tenant: Steady, at: 0, count: 5000, cost: 1}\n"
      "  - {tenant: Varying, at: 0, count: 5000, cost: 1, cost_jitter: 0.9, "
      "declared_cost: none}\n",
      0.5, 0.01);
}

}  // namespace
}  // namespace fairq::sim
