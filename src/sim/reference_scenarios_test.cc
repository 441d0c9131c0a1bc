// The reference scenarios of the scheduling model, run from the real files in
// config/scenarios/: the numbers a correct scheduler must reproduce.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "sim/scenario.h"
#include "sim/simulator.h"

namespace fairq::sim {
namespace {

using sched::Policy;

class ReferenceScenario {
 public:
  explicit ReferenceScenario(const std::string& file) {
    StatusOr<Scenario> scenario =
        LoadScenario(std::string(FAIRQ_SCENARIO_DIR) + "/" + file);
    EXPECT_TRUE(scenario.ok()) << scenario.status().ToString();
    if (scenario.ok()) scenario_ = *scenario;
  }

  // The tenant's result under `policy` (runs are cached per policy).
  const TenantResult& Tenant(Policy policy, const std::string& name) {
    for (const TenantResult& tenant : Result(policy).tenants) {
      if (tenant.tenant == name) return tenant;
    }
    ADD_FAILURE() << "no tenant " << name;
    static const TenantResult kNone;
    return kNone;
  }

  // Every tenant's cap mode, before the first run.
  void SetCapMode(sched::CapMode mode) {
    for (TenantSpec& tenant : scenario_.tenants) tenant.config.cap_mode = mode;
  }

  const PolicyResult& Result(Policy policy) {
    auto cached = results_.find(policy);
    if (cached != results_.end()) return cached->second;
    StatusOr<PolicyResult> result = Simulate(scenario_, policy);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    PolicyResult value = result.ok() ? *result : PolicyResult{policy, 0, 0, {}};
    return results_.emplace(policy, std::move(value)).first->second;
  }

 private:
  Scenario scenario_;
  std::map<Policy, PolicyResult> results_;  // stable references
};

TEST(ReferenceScenariosTest, FloodDrrServesSteadyTenantsAtOnce) {
  ReferenceScenario flood("flood.yaml");
  for (const char* name : {"B", "C"}) {
    SCOPED_TRACE(name);
    // "About one job length or less".
    EXPECT_LE(flood.Tenant(Policy::kDrr, name).wait_max_s, 1.0);
    double fifo_wait = flood.Tenant(Policy::kFifo, name).wait_max_s;
    EXPECT_GE(fifo_wait, 65.0);
    EXPECT_LE(fifo_wait, 80.0);
  }
  std::optional<double> drr_finish = flood.Tenant(Policy::kDrr, "A").finish_s;
  ASSERT_TRUE(drr_finish.has_value());
  EXPECT_GE(*drr_finish, 150.0);
  EXPECT_LE(*drr_finish, 170.0);
  std::optional<double> fifo_finish = flood.Tenant(Policy::kFifo, "A").finish_s;
  ASSERT_TRUE(fifo_finish.has_value());
  EXPECT_GE(*fifo_finish, 80.0);
  EXPECT_LE(*fifo_finish, 90.0);
}

TEST(ReferenceScenariosTest, AloneDrrUsesEveryWorkerHardCapDoesNot) {
  ReferenceScenario alone("alone.yaml");
  EXPECT_NEAR(alone.Result(Policy::kDrr).utilization, 1.0, 0.01);
  std::optional<double> drr = alone.Tenant(Policy::kDrr, "A").finish_s;
  std::optional<double> hard = alone.Tenant(Policy::kHardCap, "A").finish_s;
  ASSERT_TRUE(drr.has_value());
  ASSERT_TRUE(hard.has_value());
  EXPECT_NEAR(*drr, 75.0, 1.0);
  EXPECT_NEAR(*hard, 150.0, 2.0);  // half the workers: twice as long
}

// The same with the product's own hard cap (DRR, cap_mode: hard), not the
// hard-cap baseline: 4 workers idle, A twice as late.
TEST(ReferenceScenariosTest, AloneDrrWithAHardCapTakesTwiceAsLong) {
  ReferenceScenario alone("alone.yaml");
  alone.SetCapMode(sched::CapMode::kHard);
  std::optional<double> finish = alone.Tenant(Policy::kDrr, "A").finish_s;
  ASSERT_TRUE(finish.has_value());
  EXPECT_NEAR(*finish, 150.0, 2.0);
  EXPECT_NEAR(alone.Result(Policy::kDrr).utilization, 0.5, 0.01);
}

TEST(ReferenceScenariosTest, TwoFloodsHardCapsStarveTheTrickle) {
  ReferenceScenario floods("two-floods.yaml");
  EXPECT_GE(floods.Tenant(Policy::kHardCap, "C").wait_max_s, 40.0);
  EXPECT_LE(floods.Tenant(Policy::kDrr, "C").wait_max_s, 1.0);
}

TEST(ReferenceScenariosTest, JobSizesDrrSharesWorkerSeconds) {
  ReferenceScenario sizes("job-sizes.yaml");
  for (const char* name : {"A", "B"}) {
    SCOPED_TRACE(name);
    double share = sizes.Tenant(Policy::kDrr, name).share;
    EXPECT_GE(share, 0.45);
    EXPECT_LE(share, 0.55);
  }
  // Round robin by job count hands the 60 s jobs most of the worker time.
  EXPECT_GT(sizes.Tenant(Policy::kRoundRobin, "A").share, 0.9);
}

TEST(ReferenceScenariosTest, WeightsThreeToOne) {
  ReferenceScenario weights("weights.yaml");
  EXPECT_NEAR(weights.Tenant(Policy::kDrr, "A").share, 0.75, 0.01);
  EXPECT_NEAR(weights.Tenant(Policy::kDrr, "B").share, 0.25, 0.01);
}

TEST(ReferenceScenariosTest, SplitAccountsShareByOrganisation) {
  ReferenceScenario split("split-accounts.yaml");
  double x = 0;
  for (int i = 1; i <= 10; ++i) {
    x += split.Tenant(Policy::kDrr, "X" + std::to_string(i)).share;
  }
  double y = split.Tenant(Policy::kDrr, "Y1").share;
  EXPECT_GE(x, 0.45);
  EXPECT_LE(x, 0.55);
  EXPECT_GE(y, 0.45);
  EXPECT_LE(y, 0.55);
}

// Floors of 3 x 30% round up past 8 workers. D, without a floor, still gets
// the eighth worker; the floored tenants share the seventh in turn, though
// every job ends at the same moment.
TEST(ReferenceScenariosTest, FloorsThatRoundPastThePoolStarveNobody) {
  ReferenceScenario floors("floors.yaml");
  EXPECT_NEAR(floors.Tenant(Policy::kDrr, "D").share, 1.0 / 8, 0.01);
  for (const char* name : {"A", "B", "C"}) {
    SCOPED_TRACE(name);
    EXPECT_NEAR(floors.Tenant(Policy::kDrr, name).share, 7.0 / 24, 0.01);
  }
}

}  // namespace
}  // namespace fairq::sim
