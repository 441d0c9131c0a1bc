// fairqctl's gRPC subcommands against a real fairqd, run as a user would:
// the binary, its output and its exit code.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "fairq/v1/fairq.grpc.pb.h"
#include "tests/integration/fairqd_process.h"
#include "tests/integration/run_command.h"
#include "tests/util/scoped_temp_dir.h"

namespace fairq::ctl {
namespace {

using Result = testing::CommandResult;  // output: stdout and stderr

// fairqctl with `args` against fairqd on `port`; `input`, if any, is a
// shell command whose output goes to fairqctl's standard input.
Result RunAgainst(int port, const std::string& args,
                  const std::string& input = "") {
  return testing::RunCommand((input.empty() ? "" : input + " | ") +
                             std::string(FAIRQCTL_PATH) + " " + args +
                             " --server 127.0.0.1:" + std::to_string(port) +
                             " --timeout 10 2>&1");
}

class FairqctlTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fairqd_.Start()) << fairqd_.error(); }

  Result Run(const std::string& args, const std::string& input = "") {
    return RunAgainst(fairqd_.port(), args, input);
  }

  // Enqueues a job of one attempt for tenant acme and fails it with
  // `error`, as a worker would: a dead letter.
  void MakeDead(const std::string& error) {
    ASSERT_EQ(Run("enqueue --tenant acme --max-attempts 1").exit_code, 0);
    v1::LeaseRequest lease;
    lease.set_worker_id("w");
    lease.set_slots(1);
    lease.set_max_jobs(1);
    v1::LeaseResponse leased;
    grpc::ClientContext lease_context;
    ASSERT_TRUE(fairqd_.Worker()->Lease(&lease_context, lease, &leased).ok());
    ASSERT_EQ(leased.jobs_size(), 1);
    v1::FailRequest fail;
    v1::Failure* failure = fail.add_failures();
    failure->set_job_id(leased.jobs(0).job().id());
    failure->set_lease_token(leased.jobs(0).lease_token());
    failure->set_error(error);
    v1::AckResponse acked;
    grpc::ClientContext fail_context;
    ASSERT_TRUE(fairqd_.Worker()->Fail(&fail_context, fail, &acked).ok());
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
  Result quotas = Run("tenants set acme --max-queued 1000 --rate 5 --burst 10");
  EXPECT_NE(quotas.output.find("queued<=1000, 5/s burst 10"), std::string::npos)
      << quotas.output;
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
  // Before any lease, the wait and age are there as zeros too.
  EXPECT_NE(stats.output.find("\"wait_p99\":\"0s\""), std::string::npos)
      << stats.output;
  EXPECT_NE(stats.output.find("\"oldest_ready_age\":\""), std::string::npos);
  EXPECT_NE(stats.output.find("\"share\":0"), std::string::npos);
  Result table = Run("stats");
  for (const char* column :
       {"READY", "LEASED", "WAIT P99 S", "OLDEST S", "SHARE"}) {
    EXPECT_NE(table.output.find(column), std::string::npos) << column << " in\n"
                                                            << table.output;
  }
  EXPECT_NE(Run("stats --tenant beta").output.find("beta"), std::string::npos);
  // Output that cannot be written (a full disk) is a failure, not a success.
  EXPECT_EQ(Run("stats --json >/dev/full").exit_code, 1);
  EXPECT_EQ(Run("stats >/dev/full").exit_code, 1);
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
  for (const char* command :
       {"resume nobody", "pause nobody", "tenants get nobody"}) {
    Result unknown = Run(command);
    EXPECT_EQ(unknown.exit_code, 1) << command;
    EXPECT_NE(unknown.output.find("NOT_FOUND: tenant: unknown tenant"),
              std::string::npos)
        << command << ": " << unknown.output;
  }
  Result cancel = Run("cancel 999");
  EXPECT_EQ(cancel.exit_code, 1);
  EXPECT_NE(cancel.output.find("NOT_FOUND: job: no job 999"), std::string::npos)
      << cancel.output;
  Result cap = Run("tenants set acme --cap 150%");
  EXPECT_EQ(cap.exit_code, 2);
  EXPECT_NE(cap.output.find("--cap"), std::string::npos) << cap.output;
}

// Without --server, FAIRQ_SERVER names the broker; --server still wins.
TEST_F(FairqctlTest, ServerAddressFromTheEnvironment) {
  const std::string env =
      "FAIRQ_SERVER=127.0.0.1:" + std::to_string(fairqd_.port()) + " ";
  const std::string fairqctl = std::string(FAIRQCTL_PATH) + " ";
  Result enqueued = testing::RunCommand(
      env + fairqctl + "enqueue --tenant acme --timeout 10 2>&1");
  ASSERT_EQ(enqueued.exit_code, 0) << enqueued.output;
  EXPECT_EQ(enqueued.output, "job 1\n");
  EXPECT_EQ(Run("get 1").exit_code, 0);
  Result overridden = testing::RunCommand(
      "FAIRQ_SERVER=127.0.0.1:1 " + fairqctl + "get 1 --server 127.0.0.1:" +
      std::to_string(fairqd_.port()) + " --timeout 10 2>&1");
  EXPECT_EQ(overridden.exit_code, 0) << overridden.output;
}

// Strings the broker's parser would refuse as INTERNAL, naming no field,
// are refused before the call, naming it (exit 2). `printf` makes the
// Latin-1 bytes, as a terminal in that encoding would.
TEST_F(FairqctlTest, TextThatIsNotUtf8IsRefusedNamingTheField) {
  Result label =
      Run("enqueue --tenant acme --label \"note=$(printf 'caf\\351')\"");
  EXPECT_EQ(label.exit_code, 2) << label.output;
  EXPECT_EQ(label.output, "fairqctl enqueue: job.labels: not valid UTF-8\n");
  Result pause = Run("pause \"$(printf 'a\\377')\"");
  EXPECT_EQ(pause.exit_code, 2) << pause.output;
  EXPECT_EQ(pause.output, "fairqctl pause: name: not valid UTF-8\n");
  Result org = Run("tenants set acme --org \"$(printf '\\300')\"");
  EXPECT_EQ(org.exit_code, 2) << org.output;
  EXPECT_EQ(org.output, "fairqctl tenants: tenant.org: not valid UTF-8\n");
}

// An empty file is an empty payload, and "-" reads standard input.
TEST_F(FairqctlTest, PayloadFromAnEmptyFileOrStandardInput) {
  Result empty = Run("enqueue --tenant acme --payload-file /dev/null");
  ASSERT_EQ(empty.exit_code, 0) << empty.output;
  EXPECT_EQ(empty.output, "job 1\n");
  EXPECT_NE(Run("get 1").output.find("payload     0 bytes"), std::string::npos);
  Result piped = Run("enqueue --tenant acme --payload-file -", "printf 'xyz'");
  ASSERT_EQ(piped.exit_code, 0) << piped.output;
  Result json = Run("get 2 --json");
  EXPECT_NE(json.output.find("\"payload\":\"eHl6\""), std::string::npos)
      << json.output;  // base64 of "xyz"
}

// A worker's error may hold newlines and escape sequences: the tables show
// them escaped, on one line, and never send them to the terminal.
TEST_F(FairqctlTest, AWorkersErrorIsPrintedEscaped) {
  ASSERT_NO_FATAL_FAILURE(MakeDead("boom\n\x1b[2Jgone\xc2\x9b"));
  Result dead = Run("dead list");
  EXPECT_NE(dead.output.find("boom\\n\\x1b[2Jgone\\u009b\n"), std::string::npos)
      << dead.output;
  EXPECT_EQ(dead.output.find('\x1b'), std::string::npos);
  Result got = Run("get 1");
  EXPECT_NE(got.output.find("last_error  boom\\n\\x1b[2Jgone\\u009b\n"),
            std::string::npos)
      << got.output;
}

// The JSON of a requeue by tenant carries the last job it moved (it said
// "0": the total never took it from the calls).
TEST_F(FairqctlTest, ARequeueByTenantNamesTheLastJobInJson) {
  ASSERT_NO_FATAL_FAILURE(MakeDead("boom"));
  Result requeued = Run("dead requeue --tenant acme --json");
  ASSERT_EQ(requeued.exit_code, 0) << requeued.output;
  EXPECT_NE(requeued.output.find("\"requeued\":\"1\""), std::string::npos)
      << requeued.output;
  EXPECT_NE(requeued.output.find("\"last_job_id\":\"1\""), std::string::npos)
      << requeued.output;
}

// A reply over gRPC's default 4 MiB receive limit (a payload of 5 MiB,
// which a broker with max_payload_bytes at 8 MiB takes) is read.
TEST(FairqctlLargeTest, AJobWithAPayloadOver4MiBIsShown) {
  testing::FairqdProcess fairqd("max_payload_bytes: 8388608\n");
  ASSERT_TRUE(fairqd.Start()) << fairqd.error();
  testing::ScopedTempDir dir("fairqctl_test");
  const std::string file = dir.Path("big");
  std::ofstream(file, std::ios::binary) << std::string(5 << 20, 'x');
  Result enqueued =
      RunAgainst(fairqd.port(), "enqueue --tenant acme --payload-file " + file);
  ASSERT_EQ(enqueued.exit_code, 0) << enqueued.output;
  Result got = RunAgainst(fairqd.port(), "get 1");
  EXPECT_EQ(got.exit_code, 0) << got.output;
  EXPECT_NE(got.output.find("payload     5242880 bytes"), std::string::npos)
      << got.output;
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
        "dead requeue 42 --pool gpu",
        // CLI11 reads integers in base 0, and wraps negative ones.
        "cancel 010", "get 0x10", "dead list --after -1",
        "tenants set acme --max-queued -1", "enqueue --tenant a --priority 08",
        "enqueue --tenant a --max-attempts -1"}) {
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
