// Runs the built fairqctl binary the way an operator would and checks its
// output and exit codes.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tests/integration/run_command.h"
#include "tests/util/scoped_temp_dir.h"

namespace {

using fairq::testing::CountOf;

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class SimulateCommandTest : public ::testing::Test {
 protected:
  // Runs `fairqctl ARGS`; stderr goes to a file in this test's directory.
  Outcome Fairqctl(const std::string& args) {
    std::string err_path = dir_.Path("stderr.txt");
    std::string command =
        "'" FAIRQCTL_PATH "' " + args + " 2>'" + err_path + "'";
    fairq::testing::CommandResult run = fairq::testing::RunCommand(command);
    Outcome outcome;
    outcome.out = std::move(run.output);
    outcome.exit_code = run.exit_code;
    std::ifstream err(err_path);
    std::stringstream text;
    text << err.rdbuf();
    outcome.err = text.str();
    return outcome;
  }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_.Path(name);
    std::ofstream(path) << text;
    return path;
  }

  fairq::testing::ScopedTempDir dir_{"fairqctl_test"};
};

const std::string kFlood = std::string(FAIRQ_SCENARIO_DIR) + "/flood.yaml";

TEST_F(SimulateCommandTest, FloodJsonHasFivePoliciesAndEveryTenant) {
  Outcome run = Fairqctl("simulate '" + kFlood + "' --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(run.out.rfind("{\"scenario\": \"flood\", \"results\": [", 0), 0u)
      << run.out;
  EXPECT_EQ(run.out.substr(run.out.size() - 2), "}\n");
  EXPECT_EQ(CountOf(run.out, "\n"), 1);  // exactly one JSON object
  EXPECT_EQ(CountOf(run.out, "\"policy\": "), 5);
  for (const char* policy : {"fifo", "rr", "hard-cap", "wc-cap", "drr"}) {
    EXPECT_EQ(CountOf(run.out, "\"policy\": \"" + std::string(policy) + "\""),
              1)
        << policy;
  }
  for (const char* tenant : {"A", "B", "C"}) {
    EXPECT_EQ(CountOf(run.out, "\"tenant\": \"" + std::string(tenant) + "\""),
              5)
        << tenant;
  }
  EXPECT_EQ(CountOf(run.out, "\"utilization\": "), 5);
  EXPECT_EQ(CountOf(run.out, "\"wait_p99_s\": "), 15);
  EXPECT_EQ(CountOf(run.out, "{"), CountOf(run.out, "}"));
  EXPECT_EQ(CountOf(run.out, "["), CountOf(run.out, "]"));
}

TEST_F(SimulateCommandTest, RepeatedPolicyFlagsRunThoseInOrder) {
  Outcome run =
      Fairqctl("simulate --policy drr --policy fifo '" + kFlood + "' --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(CountOf(run.out, "\"policy\": "), 2);
  EXPECT_LT(run.out.find("\"drr\""), run.out.find("\"fifo\""));
}

TEST_F(SimulateCommandTest, HumanTableHasOneRowPerPolicyAndTenant) {
  Outcome run = Fairqctl("simulate '" + kFlood + "'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("wait p99 (s)"), std::string::npos) << run.out;
  EXPECT_EQ(CountOf(run.out, " utilisation "), 5);
}

TEST_F(SimulateCommandTest, BadScenarioNamesFileLineAndField) {
  std::string path = Write("bad.yaml",
                           "name: bad\n"
                           "workers: 8\n"
                           "tenants:\n"
                           "  - {name: A}\n"
                           "arrivals:\n"
                           "  - {tenant: A, at: 0, count: 1}\n"
                           "  - {tenant: A, at: 0, count: 1, cost: -1}\n");
  Outcome run = Fairqctl("simulate '" + path + "'");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find(path + ":7: arrivals[1].cost: must be >= 0"),
            std::string::npos)
      << run.err;
}

TEST_F(SimulateCommandTest, UnknownPolicyIsAUsageError) {
  Outcome run = Fairqctl("simulate --policy lottery '" + kFlood + "'");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("unknown policy \"lottery\""), std::string::npos)
      << run.err;
}

TEST_F(SimulateCommandTest, MissingScenarioAndBadFlagsAreUsageErrors) {
  EXPECT_EQ(Fairqctl("simulate '" + dir_.Path("absent.yaml") + "'").exit_code,
            2);
  EXPECT_EQ(Fairqctl("simulate").exit_code, 2);
  EXPECT_EQ(Fairqctl("frobnicate").exit_code, 2);
  EXPECT_EQ(Fairqctl("--help").exit_code, 0);
}

}  // namespace
