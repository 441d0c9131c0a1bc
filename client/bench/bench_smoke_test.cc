// fairq-bench against a real fairqd, run as an operator would: every
// scenario in a tiny configuration must exit 0, print its result table,
// and with --json print exactly one line that parses as JSON and names the
// scenario (and on Linux the machine's CPU shares over the run). Speed is
// not checked.
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>
#include <string>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "tests/integration/fairqd_process.h"
#include "tests/integration/run_command.h"

namespace fairq::bench {
namespace {

using Result = testing::CommandResult;  // output: stdout, then stderr

class BenchSmokeTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fairqd_.Start()) << fairqd_.error(); }

  Result Run(const std::string& args) {
    return testing::RunCommand(std::string(FAIRQ_BENCH_PATH) + " " + args +
                               " --server 127.0.0.1:" +
                               std::to_string(fairqd_.port()) + " 2>&1");
  }

  // The table names the scenario in its first line.
  void ExpectTable(const std::string& scenario, const std::string& args) {
    Result result = Run(scenario + " " + args);
    ASSERT_EQ(result.exit_code, 0) << result.output << fairqd_.Log();
    EXPECT_EQ(result.output.rfind("fairq-bench " + scenario + "\n", 0), 0u)
        << result.output;
  }

  // Exactly one JSON line, naming the scenario, with at least one row;
  // returns its facts. The machine's CPU shares, when there (a run may end
  // within one clock tick), are both there and percentages.
  google::protobuf::Struct ExpectJson(const std::string& scenario,
                                      const std::string& args) {
    google::protobuf::Struct parsed;
    ParseJson(scenario, args, &parsed);
    if (!parsed.fields().contains("facts")) {
      ADD_FAILURE() << scenario << ": no facts";
      return {};
    }
    const google::protobuf::Struct& facts =
        parsed.fields().at("facts").struct_value();
    EXPECT_EQ(facts.fields().contains("host_busy_pct"),
              facts.fields().contains("host_steal_pct"));
    for (const char* share : {"host_busy_pct", "host_steal_pct"}) {
      if (!facts.fields().contains(share)) continue;
      EXPECT_GE(facts.fields().at(share).number_value(), 0) << share;
      EXPECT_LE(facts.fields().at(share).number_value(), 100) << share;
    }
    return facts;
  }

  // Runs `scenario` with `args` and --json, and parses its one JSON line.
  void ParseJson(const std::string& scenario, const std::string& args,
                 google::protobuf::Struct* parsed) {
    Result result = Run(scenario + " " + args + " --json");
    ASSERT_EQ(result.exit_code, 0) << result.output << fairqd_.Log();
    std::istringstream lines(result.output);
    std::string line, json;
    int json_lines = 0;
    while (std::getline(lines, line)) {
      if (!line.empty() && line[0] == '{') {
        ++json_lines;
        json = line;
      }
    }
    ASSERT_EQ(json_lines, 1) << result.output;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, parsed).ok())
        << json;
    EXPECT_EQ(parsed->fields().at("scenario").string_value(), scenario);
    EXPECT_GT(parsed->fields().at("rows").list_value().values_size(), 0)
        << json;
  }

  testing::FairqdProcess fairqd_;
};

TEST_F(BenchSmokeTest, Enqueue) {
  const std::string args = "--batches 1,10 --producers 1,2 --duration 0.2";
  ExpectTable("enqueue", args);
  ExpectJson("enqueue", args);
}

TEST_F(BenchSmokeTest, Cycle) {
  const std::string args = "--jobs 200 --tenants 3 --workers 2 --slots 20";
  ExpectTable("cycle", args);
  ExpectJson("cycle", args);
}

// Exit 0 means every job was completed, here from the workers' Completers.
TEST_F(BenchSmokeTest, CycleWithBackgroundReports) {
  ExpectJson("cycle",
             "--jobs 200 --tenants 3 --workers 2 --slots 20 "
             "--reports background");
}

TEST_F(BenchSmokeTest, Latency) {
  const std::string args = "--rate 200 --duration 0.3 --workers 2";
  ExpectTable("latency", args);
  ExpectJson("latency", args);
}

TEST_F(BenchSmokeTest, LatencyWithSdkWorkers) {
  ExpectJson("latency", "--rate 200 --duration 0.3 --workers 2 --sdk-workers");
}

TEST_F(BenchSmokeTest, Ping) {
  const std::string args = "--rate 200 --duration 0.3";
  ExpectTable("ping", args);
  ExpectJson("ping", args);
}

#ifdef __linux__
// A run of 0.3 s spans clock ticks, so its report has the machine's CPU.
TEST_F(BenchSmokeTest, ReportsCarryTheMachinesCpuShares) {
  google::protobuf::Struct facts =
      ExpectJson("ping", "--rate 200 --duration 0.3");
  EXPECT_TRUE(facts.fields().contains("host_busy_pct"));
  EXPECT_TRUE(facts.fields().contains("host_steal_pct"));
}
#endif

TEST_F(BenchSmokeTest, Flood) {
  const std::string args =
      "--slots 4 --prefetch 1 --work-ms 1 --a-jobs 50 --a-at 0.05 "
      "--duration 0.3";
  ExpectTable("flood", args);
  ExpectJson("flood", args);
}

TEST_F(BenchSmokeTest, Backlog) {
  const std::string args =
      "--levels 100,500 --tenants 5 --workers 2 --slots 20 --warmup 0.1 "
      "--duration 0.2";
  ExpectTable("backlog", args);
  ExpectJson("backlog", args);
}

TEST_F(BenchSmokeTest, BacklogWithBackgroundReports) {
  ExpectJson("backlog",
             "--levels 100,500 --tenants 5 --workers 2 --slots 20 "
             "--warmup 0.1 --duration 0.2 --reports background");
}

// Fill, restart fairqd on the same data, wait for the backlog. The test's
// own pid stands in for fairqd's, which the harness does not expose: it
// exercises the /proc reading, not fairqd's figure.
TEST_F(BenchSmokeTest, RecoveryFillRestartWait) {
  ExpectTable("recovery fill", "--jobs 300 --tenants 3 --run-id smoke-rec");
  ASSERT_EQ(fairqd_.Terminate(), 0) << fairqd_.Log();
  ASSERT_TRUE(fairqd_.Start()) << fairqd_.error();
  const std::string wait = "--jobs 300 --run-id smoke-rec --timeout 30 --pid " +
                           std::to_string(getpid());
  ExpectTable("recovery wait", wait);
  ExpectJson("recovery wait", wait);
}

}  // namespace
}  // namespace fairq::bench
