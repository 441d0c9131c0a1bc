// fairqd's logs from the outside: with `log: {format: json}` every stderr
// line is a JSON object (checked with protobuf's JSON parser), at debug
// each job lifecycle event is one line with the job's tenant, id and pool,
// client errors are not logged above debug, and SIGHUP switches the format.
//
// Each test starts its own fairqd and reads its stderr after it exits, so
// the log is complete when it is checked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/util/json_util.h"
#include "tests/integration/daemon_client_test.h"
#include "tests/integration/client_util.h"
#include "tests/integration/fairqd_process.h"

namespace fairq::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

constexpr char kJsonDebug[] = "log: {level: debug, format: json}\n";

// One parsed line, with typed getters that are empty for absent keys.
struct Line {
  google::protobuf::Struct object;

  bool Has(const std::string& key) const {
    return object.fields().contains(key);
  }
  std::string Str(const std::string& key) const {
    return Has(key) ? object.fields().at(key).string_value() : "";
  }
  double Num(const std::string& key) const {
    return Has(key) ? object.fields().at(key).number_value() : -1;
  }
  bool Bool(const std::string& key) const {
    return Has(key) && object.fields().at(key).bool_value();
  }
};

// Every line of `log` from line `first` on; a line that is not a JSON
// object with ts, level and msg fails the test.
std::vector<Line> ParseJsonLines(const std::string& log, size_t first = 0) {
  std::vector<Line> lines;
  std::istringstream in(log);
  size_t n = 0;
  for (std::string text; std::getline(in, text); ++n) {
    if (n < first) continue;
    Line line;
    auto status =
        google::protobuf::util::JsonStringToMessage(text, &line.object);
    EXPECT_TRUE(status.ok()) << status.ToString() << "\nline: " << text;
    EXPECT_THAT(line.Str("ts"),
                MatchesRegex(R"([0-9-]{10}T[0-9:]{8}\.[0-9]{3}Z)"));
    EXPECT_FALSE(line.Str("level").empty()) << text;
    EXPECT_TRUE(line.Has("msg")) << text;
    lines.push_back(std::move(line));
  }
  return lines;
}

// The lines about job `id`, in order.
std::vector<Line> JobLines(const std::vector<Line>& lines, uint64_t id) {
  std::vector<Line> out;
  for (const Line& line : lines) {
    if (line.Num("job_id") == static_cast<double>(id)) out.push_back(line);
  }
  return out;
}

std::vector<std::string> Messages(const std::vector<Line>& lines) {
  std::vector<std::string> out;
  for (const Line& line : lines) out.push_back(line.Str("msg"));
  return out;
}

class LogTest : public DaemonClientTest {
 protected:
  v1::LeasedJob MustLease(const std::string& worker, uint64_t expected_id) {
    v1::LeaseResponse response;
    grpc::Status status = Lease(*worker_, LeaseReq(worker, 5000), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.jobs_size(), 1);
    if (response.jobs_size() != 1) return v1::LeasedJob();
    EXPECT_EQ(response.jobs(0).job().id(), expected_id);
    return response.jobs(0);
  }

  void MustComplete(const v1::LeasedJob& leased) {
    v1::AckResult result;
    ASSERT_TRUE(
        Complete(*worker_, leased.job().id(), leased.lease_token(), &result)
            .ok());
    EXPECT_EQ(result.code(), 0) << result.message();
  }

  void MustFail(const v1::LeasedJob& leased, const std::string& error,
                bool retryable) {
    v1::AckResult result;
    ASSERT_TRUE(Fail(*worker_, leased.job().id(), leased.lease_token(), error,
                     retryable, &result)
                    .ok());
    EXPECT_EQ(result.code(), 0) << result.message();
  }

};

TEST_F(LogTest, JsonDebugLogHasOneLinePerLifecycleEvent) {
  FairqdProcess daemon(kJsonDebug);
  ASSERT_TRUE(daemon.Start()) << daemon.error();
  Connect(daemon);

  // a: enqueued, leased, completed.
  uint64_t a = MustEnqueue(Spec("acme", "a"));
  MustComplete(MustLease("w1", a));

  // b: fails (retryable, with a multi-line error), is retried, fails for
  // good, dies, is requeued from the dead letters and completes.
  const std::string error = "disk \"full\"\n\tat C:\\data";
  v1::JobSpec b_spec = WithFastRetry(Spec("globex", "b"));
  b_spec.set_max_attempts(2);
  uint64_t b = MustEnqueue(b_spec);
  MustFail(MustLease("w2", b), error, true);
  MustFail(MustLease("w2", b), "bad input", false);
  v1::RequeueDeadLettersRequest requeue;
  requeue.set_job_id(b);
  v1::RequeueDeadLettersResponse requeued;
  ASSERT_TRUE(
      Call(*admin_, &v1::Admin::Stub::RequeueDeadLetters, requeue, &requeued)
          .ok());
  ASSERT_EQ(requeued.requeued(), 1u);
  MustComplete(MustLease("w2", b));

  // c: delayed, then canceled.
  v1::JobSpec c_spec = Spec("acme", "c");
  *c_spec.mutable_delay() = Millis(60'000);
  uint64_t c = MustEnqueue(c_spec);
  v1::Job canceled;
  ASSERT_TRUE(CancelJob(*producer_, c, &canceled).ok());

  // d: its 1 s lease lapses; the long poll gets it again once it does.
  v1::JobSpec d_spec = WithFastRetry(Spec("initech", "d"));
  *d_spec.mutable_lease_duration() = Millis(1000);
  uint64_t d = MustEnqueue(d_spec);
  MustLease("w3", d);
  MustComplete(MustLease("w3", d));

  // A request protobuf cannot parse: its complaint is logged at debug.
  // (The silencer keeps this test's own protobuf quiet about sending it.)
  uint64_t ignored = 0;
  {
    google::protobuf::LogSilencer silence;
    EXPECT_FALSE(Enqueue(*producer_, Spec("bad\xff"), &ignored).ok());
  }

  ASSERT_EQ(daemon.Terminate(), 0);
  std::vector<Line> lines = ParseJsonLines(daemon.Log());
  ASSERT_FALSE(lines.empty());

  // The multi-line configuration dump is one line too.
  EXPECT_THAT(lines[0].Str("msg"), StartsWith("effective configuration:\n"));
  EXPECT_THAT(lines[0].Str("msg"),
              HasSubstr("\nlog: level debug, format json"));

  EXPECT_THAT(Messages(JobLines(lines, a)),
              ElementsAre("job enqueued", "job leased", "job completed"));
  for (const Line& line : JobLines(lines, a)) {
    EXPECT_EQ(line.Str("level"), "debug");
    EXPECT_EQ(line.Str("tenant"), "acme");
    EXPECT_EQ(line.Str("pool"), "default");
  }
  std::vector<Line> a_lines = JobLines(lines, a);
  ASSERT_EQ(a_lines.size(), 3u);
  EXPECT_EQ(a_lines[1].Str("worker"), "w1");
  EXPECT_EQ(a_lines[1].Num("attempt"), 1);
  EXPECT_TRUE(a_lines[1].Has("deadline"));

  std::vector<Line> b_lines = JobLines(lines, b);
  EXPECT_THAT(Messages(b_lines),
              ElementsAre("job enqueued", "job leased", "job failed",
                          "job retry scheduled", "job ready", "job leased",
                          "job failed", "job dead", "job requeued from dead",
                          "job leased", "job completed"));
  ASSERT_EQ(b_lines.size(), 11u);
  for (const Line& line : b_lines) EXPECT_EQ(line.Str("tenant"), "globex");
  EXPECT_EQ(b_lines[2].Num("attempt"), 1);
  EXPECT_TRUE(b_lines[2].Bool("retryable"));
  EXPECT_EQ(b_lines[2].Str("error"), error);
  EXPECT_THAT(b_lines[3].Str("due"),
              MatchesRegex(R"([0-9-]{10}T[0-9:]{8}\.[0-9]{3}Z)"));
  EXPECT_EQ(b_lines[5].Num("attempt"), 2);
  EXPECT_FALSE(b_lines[6].Bool("retryable"));
  EXPECT_TRUE(b_lines[6].Has("retryable"));
  EXPECT_EQ(b_lines[7].Str("error"), "bad input");
  EXPECT_EQ(b_lines[9].Num("attempt"), 1);  // requeued: attempts start over

  EXPECT_THAT(Messages(JobLines(lines, c)),
              ElementsAre("job enqueued", "job canceled"));

  std::vector<Line> d_lines = JobLines(lines, d);
  EXPECT_THAT(Messages(d_lines),
              ElementsAre("job enqueued", "job leased", "lease expired",
                          "job retry scheduled", "job ready", "job leased",
                          "job completed"));
  ASSERT_EQ(d_lines.size(), 7u);
  EXPECT_EQ(d_lines[2].Str("tenant"), "initech");
  EXPECT_EQ(d_lines[2].Num("attempt"), 1);
  EXPECT_EQ(d_lines[5].Num("attempt"), 2);

  int protobuf_lines = 0;
  for (const Line& line : lines) {
    EXPECT_THAT(line.Str("level"), ::testing::AnyOf("debug", "info"))
        << line.Str("msg");
    if (line.Str("source") == "protobuf") {
      ++protobuf_lines;
      EXPECT_EQ(line.Str("level"), "debug");
      EXPECT_THAT(line.Str("msg"), HasSubstr("invalid UTF-8"));
    }
  }
  EXPECT_EQ(protobuf_lines, 1);
}

// Bad requests are answered with an error status and counted in metrics;
// at info they leave no trace in the log.
TEST_F(LogTest, ClientErrorsAreNotLoggedAtInfo) {
  FairqdProcess daemon("log: {level: info, format: json}\n");
  ASSERT_TRUE(daemon.Start()) << daemon.error();
  Connect(daemon);
  uint64_t id = 0;
  google::protobuf::LogSilencer silence;  // this test's own protobuf
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Enqueue(*producer_, Spec(""), &id).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_FALSE(Enqueue(*producer_, Spec("bad\xff"), &id).ok());
    v1::AckResult result;
    ASSERT_TRUE(Complete(*worker_, 12345, 678, &result).ok());
    EXPECT_EQ(result.code(), grpc::StatusCode::NOT_FOUND);
    v1::Job job;
    EXPECT_EQ(GetJob(*producer_, 12345, &job).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  ASSERT_EQ(daemon.Terminate(), 0);
  std::vector<Line> lines = ParseJsonLines(daemon.Log());
  ASSERT_FALSE(lines.empty());  // startup and shutdown lines at least
  for (const Line& line : lines) {
    EXPECT_EQ(line.Str("level"), "info") << line.Str("msg");
    EXPECT_FALSE(line.Has("job_id") || line.Has("tenant") || line.Has("source"))
        << line.Str("msg");
  }
}

// SIGHUP re-applies the log settings: text at info before, JSON at debug
// after. Once the reloaded tenant weight shows, the new format is on (the
// log settings are applied first).
TEST_F(LogTest, ReloadSwitchesFormatAndLevel) {
  FairqdProcess daemon("tenants:\n  - {name: acme, weight: 1}\n");
  ASSERT_TRUE(daemon.Start()) << daemon.error();
  Connect(daemon);
  uint64_t before = MustEnqueue(Spec("acme"));
  auto weight = [&] {
    v1::GetTenantRequest request;
    request.set_name("acme");
    v1::Tenant tenant;
    EXPECT_TRUE(
        Call(*admin_, &v1::Admin::Stub::GetTenant, request, &tenant).ok());
    return tenant.weight();
  };
  ASSERT_TRUE(daemon.Reload(std::string(kJsonDebug) +
                            "tenants:\n  - {name: acme, weight: 3}\n"));
  ASSERT_TRUE(Eventually([&] { return weight() == 3; }));
  uint64_t after = MustEnqueue(Spec("acme"));
  ASSERT_EQ(daemon.Terminate(), 0);

  std::string log = daemon.Log();
  EXPECT_THAT(log, StartsWith("["));  // text
  size_t first_json = 0;
  std::istringstream in(log);
  for (std::string text; std::getline(in, text) && !text.starts_with("{");) {
    ++first_json;
    EXPECT_THAT(text, ::testing::Not(HasSubstr("job enqueued")));
  }
  std::vector<Line> lines = ParseJsonLines(log, first_json);
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(JobLines(lines, before).empty());  // it was info then
  EXPECT_THAT(Messages(JobLines(lines, after)), ElementsAre("job enqueued"));
}

}  // namespace
}  // namespace fairq::testing
