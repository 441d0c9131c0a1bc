#include "sim/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/util/scoped_temp_dir.h"

namespace fairq::sim {
namespace {

using ::testing::HasSubstr;

// Each test writes its files into its own temporary directory.
class ScenarioTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_.Path(name);
    std::ofstream(path) << text;
    return path;
  }

  // Loads `text` as bad.yaml and returns the error message.
  std::string ErrorOf(const std::string& text) {
    std::string path = Write("bad.yaml", text);
    StatusOr<Scenario> scenario = LoadScenario(path);
    EXPECT_FALSE(scenario.ok()) << text;
    if (scenario.ok()) return "";
    EXPECT_EQ(scenario.status().code(), StatusCode::kInvalidArgument);
    return scenario.status().message();
  }

  std::string Bad(int line) {
    return dir_.Path("bad.yaml") + ":" + std::to_string(line) + ": ";
  }

  testing::ScopedTempDir dir_{"fairq_scenario"};
};

constexpr char kGood[] = R"(# A comment header.
name: good
seed: 7
pools: {default: 4, renders: 2}
quantum: 0.5
max_deficit: 2
duration: 100
orgs:
  - {name: X, weight: 2}
tenants:
  - {name: A, weight: 3, org: X, cap: "50%", cap_mode: hard, floor: 1}
  - {name: B, pool: renders, cap: 2}
arrivals:
  - {tenant: A, at: 10, count: 600, cost: 1.5, priority: 2}
  - {tenant: B, rate: 2, from: 0, until: 160, cost_jitter: 0.25}
  - {tenant: A, pool: renders, at: 0, count: 1, declared_cost: none}
  - {tenant: B, at: 0, count: 1, declared_cost: 0.5}
policies: [drr, fifo]
)";

TEST_F(ScenarioTest, GoodFileParses) {
  StatusOr<Scenario> scenario = LoadScenario(Write("good.yaml", kGood));
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  EXPECT_EQ(scenario->name, "good");
  EXPECT_EQ(scenario->seed, 7u);
  EXPECT_EQ(scenario->options.quantum, 0.5);
  EXPECT_EQ(scenario->options.max_deficit, 2);
  EXPECT_EQ(scenario->duration, 100);
  ASSERT_EQ(scenario->pools.size(), 2u);
  EXPECT_EQ(scenario->pools[1].name, "renders");
  EXPECT_EQ(scenario->pools[1].workers, 2u);
  EXPECT_EQ(scenario->TotalWorkers(), 6u);
  ASSERT_EQ(scenario->orgs.size(), 1u);
  EXPECT_EQ(scenario->orgs[0].config.weight, 2);

  ASSERT_EQ(scenario->tenants.size(), 2u);
  const sched::TenantConfig& a = scenario->tenants[0].config;
  EXPECT_EQ(a.weight, 3);
  EXPECT_EQ(a.org, "X");
  EXPECT_TRUE(a.cap.is_share());
  EXPECT_EQ(a.cap.value(), 0.5);
  EXPECT_EQ(a.cap_mode, sched::CapMode::kHard);
  EXPECT_EQ(a.floor.value(), 1);
  EXPECT_EQ(scenario->tenants[1].pool, 1u);
  EXPECT_EQ(scenario->tenants[0].line, 11);

  ASSERT_EQ(scenario->arrivals.size(), 4u);
  const ArrivalSpec& burst = scenario->arrivals[0];
  EXPECT_FALSE(burst.steady);
  EXPECT_EQ(burst.count, 600u);
  EXPECT_EQ(burst.at, 10);
  EXPECT_EQ(burst.priority, 2);
  EXPECT_EQ(burst.declared_cost, 1.5);  // defaults to the true cost
  EXPECT_EQ(burst.pool, 0u);
  const ArrivalSpec& steady = scenario->arrivals[1];
  EXPECT_TRUE(steady.steady);
  EXPECT_EQ(steady.JobCount(), 320u);
  EXPECT_EQ(steady.pool, 1u);  // B's own pool
  EXPECT_EQ(steady.cost_jitter, 0.25);
  EXPECT_EQ(scenario->arrivals[2].pool, 1u);
  EXPECT_FALSE(scenario->arrivals[2].declared_cost.has_value());
  EXPECT_EQ(scenario->arrivals[3].declared_cost, 0.5);
  EXPECT_EQ(scenario->TotalJobs(), 922u);
  EXPECT_EQ(
      scenario->policies,
      (std::vector<sched::Policy>{sched::Policy::kDrr, sched::Policy::kFifo}));
}

TEST_F(ScenarioTest, DefaultsAreAllPoliciesAndOneDefaultPool) {
  StatusOr<Scenario> scenario = ParseScenario(
      "name: s\nworkers: 8\ntenants: [{name: A}]\n"
      "arrivals: [{tenant: A, at: 0, count: 1}]\n",
      "inline");
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  ASSERT_EQ(scenario->pools.size(), 1u);
  EXPECT_EQ(scenario->pools[0].name, "default");
  EXPECT_EQ(scenario->pools[0].workers, 8u);
  EXPECT_EQ(scenario->policies, AllPolicies());
  EXPECT_FALSE(scenario->duration.has_value());
  EXPECT_EQ(scenario->arrivals[0].cost, 1.0);
}

TEST_F(ScenarioTest, SteadyStreamStopsBeforeUntil) {
  ArrivalSpec steady;
  steady.steady = true;
  steady.rate = 3;
  steady.from = 1;
  steady.until = 2;  // 1, 1.333, 1.667
  EXPECT_EQ(steady.JobCount(), 3u);
  steady.until = 2.0001;  // and 2
  EXPECT_EQ(steady.JobCount(), 4u);
}

// Line 1..7 of a valid file; the cases below change one line each.
std::string Base(const std::string& arrival = "{tenant: A, at: 0, count: 4}",
                 const std::string& tenant_b = "{name: B, weight: 2}") {
  return "name: t\n"
         "workers: 2\n"
         "tenants:\n"
         "  - {name: A}\n"
         "  - " +
         tenant_b +
         "\n"
         "arrivals:\n"
         "  - " +
         arrival + "\n";
}

TEST_F(ScenarioTest, BaseIsValid) {
  EXPECT_TRUE(LoadScenario(Write("base.yaml", Base())).ok());
}

TEST_F(ScenarioTest, NegativeCostNamesFileLineAndField) {
  EXPECT_EQ(ErrorOf(Base("{tenant: A, at: 0, count: 4, cost: -1}")),
            Bad(7) + "arrivals[0].cost: must be >= 0, got -1");
}

TEST_F(ScenarioTest, MissingFields) {
  EXPECT_THAT(ErrorOf(Base("{at: 0, count: 4}")),
              HasSubstr(Bad(7) + "arrivals[0].tenant: missing required"));
  EXPECT_THAT(ErrorOf(Base().substr(Base().find('\n') + 1)),
              HasSubstr(Bad(1) + "name: missing required field"));
  EXPECT_THAT(ErrorOf("name: t\nworkers: 2\ntenants: [{name: A}]\n"),
              HasSubstr(Bad(1) + "arrivals: missing required field"));
  EXPECT_THAT(ErrorOf(Base("{tenant: A, count: 4}")),
              HasSubstr(Bad(7) + "arrivals[0].at: missing required field"));
  EXPECT_THAT(ErrorOf(Base("{tenant: A}")), HasSubstr(Bad(7) + "arrivals[0]"));
  EXPECT_THAT(ErrorOf(Base("{tenant: A, rate: 2}")),
              HasSubstr(Bad(7) + "arrivals[0].until: missing required"));
}

TEST_F(ScenarioTest, UnknownFieldsAreErrors) {
  EXPECT_THAT(ErrorOf("nmae: t\n" + Base()),
              HasSubstr(Bad(1) + "nmae: unknown field"));
  EXPECT_THAT(
      ErrorOf(Base("{tenant: A, at: 0, count: 4}", "{name: B, wieght: 2}")),
      HasSubstr(Bad(5) + "tenants[1].wieght: unknown field"));
  EXPECT_THAT(ErrorOf(Base("{tenant: A, at: 0, count: 4, cots: 1}")),
              HasSubstr(Bad(7) + "arrivals[0].cots: unknown field"));
}

TEST_F(ScenarioTest, DuplicateKeysAndNamesAreErrors) {
  EXPECT_THAT(ErrorOf(Base("{tenant: A, at: 0, count: 4, count: 5}")),
              HasSubstr(Bad(7) + "arrivals[0].count: duplicate field"));
  EXPECT_THAT(ErrorOf(Base("{tenant: A, at: 0, count: 4}", "{name: A}")),
              HasSubstr(Bad(5) + "tenants[1].name: duplicate tenant \"A\""));
}

TEST_F(ScenarioTest, WrongTypes) {
  EXPECT_EQ(
      ErrorOf(Base("{tenant: A, at: 0, count: 4}", "{name: B, weight: abc}")),
      Bad(5) + "tenants[1].weight: expected a number, got \"abc\"");
  EXPECT_THAT(ErrorOf(Base("{tenant: A, at: 0, count: 1.5}")),
              HasSubstr(Bad(7) + "arrivals[0].count: expected a whole number"));
  EXPECT_THAT(ErrorOf("name: t\nworkers: [2]\n"),
              HasSubstr(Bad(2) + "workers: expected a single value"));
  EXPECT_THAT(ErrorOf("name: t\nworkers: 2\ntenants: {name: A}\n"),
              HasSubstr(Bad(3) + "tenants: expected a non-empty list"));
  EXPECT_THAT(ErrorOf("- 1\n- 2\n"), HasSubstr(Bad(1) + "(top level)"));
}

TEST_F(ScenarioTest, SchedulerRulesApplyToTenants) {
  EXPECT_EQ(
      ErrorOf(Base("{tenant: A, at: 0, count: 4}", "{name: B, weight: 0}")),
      Bad(5) + "tenants[1].weight: must be between 0.000001 and 1000000, got 0");
  EXPECT_THAT(
      ErrorOf(Base("{tenant: A, at: 0, count: 4}", "{name: B, cap: \"150%\"}")),
      HasSubstr(Bad(5) + "tenants[1].cap: a share must lie in"));
  EXPECT_THAT(
      ErrorOf(Base("{tenant: A, at: 0, count: 4}", "{name: B, cap: \"0%\"}")),
      HasSubstr(Bad(5) + "tenants[1].cap: a share must lie in"));
  EXPECT_THAT(
      ErrorOf(Base("{tenant: A, at: 0, count: 4}", "{name: B, cap: lots}")),
      HasSubstr(Bad(5) + "tenants[1].cap: expected a slot count"));
  EXPECT_THAT(ErrorOf(Base("{tenant: A, at: 0, count: 4}",
                           "{name: B, cap_mode: soft}")),
              HasSubstr(Bad(5) + "tenants[1].cap_mode: unknown mode"));
  EXPECT_THAT(ErrorOf(Base("{tenant: A, at: 0, count: 4}",
                           "{name: B, cap: 2, floor: 3}")),
              HasSubstr(Bad(5) + "tenants[1].floor: 3 exceeds the cap 2"));
  EXPECT_THAT(ErrorOf("name: t\nworkers: 2\norgs: [{name: X, weight: -1}]\n"
                      "tenants: [{name: A}]\n"
                      "arrivals: [{tenant: A, at: 0, count: 1}]\n"),
              HasSubstr(Bad(3) + "orgs[0].weight: must be between 0.000001 and 1000000"));
  EXPECT_THAT(ErrorOf("name: t\nworkers: 2\nquantum: 8\n" + Base().substr(19)),
              HasSubstr(Bad(1) + "max_deficit: must be at least the quantum"));
}

TEST_F(ScenarioTest, BadReferencesAndValues) {
  EXPECT_THAT(ErrorOf(Base("{tenant: Z, at: 0, count: 4}")),
              HasSubstr(Bad(7) + "arrivals[0].tenant: unknown tenant \"Z\""));
  EXPECT_THAT(ErrorOf(Base("{tenant: A, pool: gpu, at: 0, count: 4}")),
              HasSubstr(Bad(7) + "arrivals[0].pool: unknown pool \"gpu\""));
  EXPECT_THAT(ErrorOf(Base("{tenant: A, at: 0, count: 0}")),
              HasSubstr(Bad(7) + "arrivals[0].count: must be >= 1"));
  EXPECT_THAT(ErrorOf(Base("{tenant: A, rate: 0, until: 5}")),
              HasSubstr(Bad(7) + "arrivals[0].rate: must be > 0"));
  EXPECT_THAT(ErrorOf(Base("{tenant: A, rate: 1, from: 5, until: 5}")),
              HasSubstr(Bad(7) + "arrivals[0].until: must be after from"));
  EXPECT_THAT(ErrorOf(Base("{tenant: A, at: 0, count: 4, rate: 1}")),
              HasSubstr(Bad(7) + "arrivals[0].rate: a burst"));
  EXPECT_THAT(ErrorOf(Base("{tenant: A, at: 0, count: 4, cost_jitter: 2}")),
              HasSubstr(Bad(7) + "arrivals[0].cost_jitter: must lie in"));
  EXPECT_THAT(ErrorOf(Base("{tenant: A, at: 0, count: 4, declared_cost: x}")),
              HasSubstr(Bad(7) + "arrivals[0].declared_cost: expected a "));
  EXPECT_THAT(ErrorOf(Base("{tenant: A, rate: 1e9, until: 1e9}")),
              HasSubstr(Bad(7) + "arrivals[0].rate: the stream would hold"));
  EXPECT_THAT(ErrorOf("name: t\nworkers: 0\n"),
              HasSubstr(Bad(2) + "workers: must be between 1 and"));
  EXPECT_THAT(ErrorOf("name: t\nworkers: 2\npools: {default: 2}\n"),
              HasSubstr(Bad(3) + "pools: give either"));
  EXPECT_THAT(ErrorOf("name: t\npools: {default: 2, gpu: -1}\n"),
              HasSubstr(Bad(2) + "pools.gpu: workers must be between"));
  EXPECT_THAT(ErrorOf("name: t\nduration: -5\n" + Base().substr(8)),
              HasSubstr(Bad(2) + "duration: must be > 0, got -5"));
}

TEST_F(ScenarioTest, BadPolicyNamesItsEntry) {
  EXPECT_THAT(ErrorOf(Base() + "policies:\n  - drr\n  - lottery\n"),
              HasSubstr(Bad(10) + "policies[1]: unknown policy \"lottery\""));
}

TEST_F(ScenarioTest, BlockStyleLinesPointAtTheValue) {
  EXPECT_EQ(ErrorOf("name: t\n"
                    "workers: 2\n"
                    "tenants:\n"
                    "  - name: A\n"
                    "arrivals:\n"
                    "  - tenant: A\n"
                    "    at: 0\n"
                    "    count: 4\n"
                    "    cost: -2.5\n"),
            Bad(9) + "arrivals[0].cost: must be >= 0, got -2.5");
}

TEST_F(ScenarioTest, YamlSyntaxErrorsBecomeStatus) {
  std::string message = ErrorOf("name: t\nworkers: 2\ntenants: [{name: A}\n");
  EXPECT_THAT(message, HasSubstr(dir_.Path("bad.yaml") + ":"));
  EXPECT_THAT(message, HasSubstr("invalid YAML"));
}

TEST_F(ScenarioTest, MissingFileIsNotFound) {
  StatusOr<Scenario> scenario = LoadScenario(dir_.Path("absent.yaml"));
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(scenario.status().message(), HasSubstr("absent.yaml"));
}

}  // namespace
}  // namespace fairq::sim
