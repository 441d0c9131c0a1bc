// fairqctl's gRPC subcommands against a real fairqd, run as a user would:
// the binary, its output and its exit code.
#include <gtest/gtest.h>
#include <string>

#include "tests/integration/fairqd_process.h"
#include "tests/integration/run_command.h"

namespace fairq::ctl {
namespace {

using Result = testing::CommandResult;  // output: stdout and stderr

class FairqctlTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fairqd_.Start()) << fairqd_.error(); }

  Result Run(const std::string& args) {
    return testing::RunCommand(std::string(FAIRQCTL_PATH) + " " + args +
                               " --server 127.0.0.1:" +
                               std::to_string(fairqd_.port()) +
                               " --timeout 10 2>&1");
  }

  testing::FairqdProcess fairqd_;
};

TEST_F(FairqctlTest, EnqueueGetCancel) {
  Result enqueued = Run("enqueue --tenant acme --payload hi --label kind=a");
  ASSERT_EQ(enqueued.exit_code, 0) << enqueued.output;
  EXPECT_EQ(enqueued.output, "job 1\n");
  Result got = Run("get 1");
  EXPECT_EQ(got.exit_code, 0);
  EXPECT_NE(got.output.find("state       READY"), std::string::npos) << got.output;
  Result json = Run("get 1 --json");
  EXPECT_NE(json.output.find("\"state\":\"JOB_STATE_READY\""), std::string::npos)
      << json.output;
  EXPECT_NE(json.output.find("\"kind\":\"a\""), std::string::npos);
  Result canceled = Run("cancel 1");
  EXPECT_NE(canceled.output.find("CANCELED"), std::string::npos) << canceled.output;
  Result gone = Run("get 1");
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.output.find("NOT_FOUND"), std::string::npos) << gone.output;
}

TEST_F(FairqctlTest, IdempotencyKeyReportsDuplicate) {
  EXPECT_EQ(Run("enqueue --tenant acme --key k").output, "job 1\n");
  EXPECT_EQ(Run("enqueue --tenant acme --key k").output,
            "job 1 (duplicate: already queued)\n");
}

TEST_F(FairqctlTest, TenantsSetGetListPauseResume) {
  Result set = Run("tenants set acme --weight 3 --cap 50% --cap-mode hard");
  ASSERT_EQ(set.exit_code, 0) << set.output;
  Result got = Run("tenants get acme --json");
  EXPECT_NE(got.output.find("\"weight\":3"), std::string::npos) << got.output;
  EXPECT_NE(got.output.find("\"share\":0.5"), std::string::npos) << got.output;
  EXPECT_NE(got.output.find("CAP_MODE_HARD"), std::string::npos);
  Result changed = Run("tenants set acme --cap none");  // keeps the weight
  EXPECT_NE(changed.output.find("acme                -           3"),
            std::string::npos)
      << changed.output;
  EXPECT_NE(Run("tenants list").output.find("acme"), std::string::npos);
  EXPECT_EQ(Run("pause acme").output, "acme paused\n");
  EXPECT_NE(Run("tenants get acme").output.find("paused"), std::string::npos);
  EXPECT_EQ(Run("resume acme").output, "acme resumed\n");
}

TEST_F(FairqctlTest, StatsShowsDepthPerTenant) {
  Run("enqueue --tenant acme");
  Run("enqueue --tenant acme");
  Run("enqueue --tenant beta --delay 600");
  Result stats = Run("stats --json");
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  EXPECT_NE(stats.output.find("\"tenant\":\"acme\",\"pool\":\"default\",\"ready\":\"2\""),
            std::string::npos)
      << stats.output;
  EXPECT_NE(stats.output.find("\"scheduled\":\"1\""), std::string::npos);
  // Zeros are printed, not left out: scripts read the keys they expect.
  EXPECT_NE(stats.output.find("\"leased\":\"0\""), std::string::npos)
      << stats.output;
  EXPECT_NE(Run("stats --tenant beta").output.find("beta"), std::string::npos);
}

TEST_F(FairqctlTest, DeadListAndRequeue) {
  Result empty = Run("dead list");
  EXPECT_EQ(empty.exit_code, 0);
  EXPECT_EQ(Run("dead list --after 5 --limit 3").exit_code, 0);
  Result missing = Run("dead requeue 42");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("not a dead letter"), std::string::npos);
  Result both = Run("dead requeue 42 --tenant acme");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_EQ(Run("dead requeue --tenant acme").output, "requeued 0\n");
}

TEST_F(FairqctlTest, ErrorsAreInPlainWordsWithNonZeroExit) {
  Result bad = Run("enqueue --tenant 'bad name'");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("INVALID_ARGUMENT: job.tenant"), std::string::npos)
      << bad.output;
  EXPECT_NE(bad.output.find("refused as invalid"), std::string::npos);
  Result label = Run("enqueue --tenant acme --label nokey");
  EXPECT_EQ(label.exit_code, 2);
  EXPECT_NE(Run("resume nobody").output.find("unknown tenant"), std::string::npos);
  Result cap = Run("tenants set acme --cap 150%");
  EXPECT_EQ(cap.exit_code, 2);
  EXPECT_NE(cap.output.find("--cap"), std::string::npos) << cap.output;
}

// Flags out of range fail the parse (exit 2) before any call: CLI11's own
// Range lets "nan" through, and a NaN or huge value cast to an integer
// deadline or delay is undefined.
TEST(FairqctlNoServerTest, OutOfRangeFlagsAreUsageErrors) {
  for (const char* args :
       {"stats --timeout nan", "stats --timeout 1e300", "stats --timeout 0",
        "enqueue --tenant a --cost nan", "enqueue --tenant a --cost -3",
        "enqueue --tenant a --delay -5", "enqueue --tenant a --delay inf",
        "dead list --limit 0", "dead list --limit 5000",
        "dead requeue 42 --pool gpu"}) {
    Result result = testing::RunCommand(std::string(FAIRQCTL_PATH) + " " +
                                        args + " --server 127.0.0.1:1 2>&1");
    EXPECT_EQ(result.exit_code, 2) << args << ": " << result.output;
  }
  // Both payload flags: one would silently win. (Any existing file will do.)
  Result both = testing::RunCommand(
      std::string(FAIRQCTL_PATH) + " enqueue --tenant a --payload x " +
      "--payload-file " + FAIRQCTL_PATH + " --server 127.0.0.1:1 2>&1");
  EXPECT_EQ(both.exit_code, 2) << both.output;
}

TEST(FairqctlNoServerTest, UnreachableServerIsUnavailable) {
  Result result = testing::RunCommand(
      std::string(FAIRQCTL_PATH) + " stats --server 127.0.0.1:1 --timeout 2 2>&1");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(result.output.find("UNAVAILABLE") != std::string::npos ||
              result.output.find("DEADLINE_EXCEEDED") != std::string::npos)
      << result.output;
}

}  // namespace
}  // namespace fairq::ctl
