#include "sim/report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace fairq::sim {
namespace {

using ::testing::HasSubstr;

TEST(JsonStringTest, EscapesWhatJsonRequires) {
  EXPECT_EQ(JsonString("A"), "\"A\"");
  EXPECT_EQ(JsonString("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
  EXPECT_EQ(JsonString("a\nb\tc"), "\"a\\nb\\tc\"");
  EXPECT_EQ(JsonString(std::string("\x01", 1)), "\"\\u0001\"");
  EXPECT_EQ(JsonString("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
}

// One policy, one finished and one unfinished tenant.
struct Fixture {
  Scenario scenario;
  std::vector<PolicyResult> results;

  Fixture() {
    scenario.name = "s\"1";
    scenario.source = "s1.yaml";
    scenario.pools.push_back({"default", 8, 1});
    PolicyResult result;
    result.policy = sched::Policy::kDrr;
    result.utilization = 0.9375;
    result.horizon_s = 160;
    result.tenants.push_back({"A", 600, 0.5, 74.5, 75, 85.25, 600, 0.75});
    result.tenants.push_back({"B", 320, 0, 1, 1, std::nullopt, 200,
                              0.1 + 0.2});  // 0.30000000000000004
    results.push_back(result);
  }
};

TEST(FormatJsonTest, WritesTheDocumentedShape) {
  Fixture f;
  EXPECT_EQ(FormatJson(f.scenario, f.results),
            "{\"scenario\": \"s\\\"1\", \"results\": [{\"policy\": \"drr\", "
            "\"utilization\": 0.9375, \"tenants\": ["
            "{\"tenant\": \"A\", \"jobs\": 600, \"wait_p50_s\": 0.5, "
            "\"wait_p99_s\": 74.5, \"wait_max_s\": 75, \"finish_s\": 85.25, "
            "\"worker_seconds\": 600, \"share\": 0.75}, "
            "{\"tenant\": \"B\", \"jobs\": 320, \"wait_p50_s\": 0, "
            "\"wait_p99_s\": 1, \"wait_max_s\": 1, \"finish_s\": null, "
            "\"worker_seconds\": 200, \"share\": 0.3}]}]}\n");
}

TEST(FormatTableTest, ListsPolicyTenantRowsAndUtilisation) {
  Fixture f;
  std::string table = FormatTable(f.scenario, f.results);
  EXPECT_THAT(table, HasSubstr("s\"1 (s1.yaml): 8 workers, 0 tenants"));
  EXPECT_THAT(table, HasSubstr("policy  tenant  jobs  wait p50 (s)"));
  EXPECT_THAT(table, HasSubstr("drr     A        600"));
  EXPECT_THAT(table, HasSubstr("unfinished"));
  EXPECT_THAT(table, HasSubstr("75.0%"));
  EXPECT_THAT(table, HasSubstr("drr utilisation 93.8% over 160.0 s"));
}

}  // namespace
}  // namespace fairq::sim
