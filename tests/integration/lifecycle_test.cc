// The job lifecycle against a real fairqd: enqueue, lease, heartbeat,
// complete, fail and retry, dead letters, cancel, idempotency, delays, pause,
// lapsed leases and Lease calls whose client went away.
//
// Each test starts its own fairqd (temp data dir, port 0). Waits are bounded
// long polls: a Lease with a `wait` returns as soon as a job is ready, so a
// test that waits for the daemon's timers (delays, backoffs, lease expiry)
// takes only as long as the timer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "google/protobuf/util/time_util.h"
#include "tests/integration/client_util.h"
#include "tests/integration/daemon_client_test.h"
#include "tests/integration/fairqd_process.h"
#include "tests/integration/http_get.h"

namespace fairq::testing {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

int64_t ElapsedMs(Clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                               since)
      .count();
}

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class LifecycleTest : public DaemonClientTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.Start()) << daemon_.error();
    Connect(daemon_);
  }

  // Enqueues `spec`, failing the test (and returning 0) if it is refused.
  uint64_t MustEnqueue(const v1::JobSpec& spec) {
    uint64_t id = DaemonClientTest::MustEnqueue(spec);
    EXPECT_NE(id, 0u);
    return id;
  }

  // Long-polls up to `wait_ms` for exactly one job.
  v1::LeasedJob MustLease(int64_t wait_ms = 5000,
                          const std::string& worker = "w1") {
    v1::LeaseResponse response;
    grpc::Status status = Lease(*worker_, LeaseReq(worker, wait_ms), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.jobs_size(), 1) << "no job within " << wait_ms << " ms";
    return response.jobs_size() > 0 ? response.jobs(0) : v1::LeasedJob();
  }

  v1::JobState StateOf(uint64_t id) {
    v1::Job job;
    grpc::Status status = GetJob(*producer_, id, &job);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return job.state();
  }

  void ExpectCompletes(const v1::LeasedJob& leased) {
    v1::AckResult result;
    grpc::Status status =
        Complete(*worker_, leased.job().id(), leased.lease_token(), &result);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(result.code(), grpc::StatusCode::OK) << result.message();
  }

  // Waits until `count` workers are live in the default pool, as /metrics
  // shows them: a Lease call counts from its arrival, so a call that is
  // waiting is then known to wait.
  bool WaitForDefaultPoolWorkers(int count) {
    const std::string line =
        "\nfairq_workers{pool=\"default\"} " + std::to_string(count) + "\n";
    std::string error;
    bool scraped = true;
    bool seen = Eventually([&] {
      std::string body;
      scraped = HttpGet(daemon_.metrics_port(), "/metrics", &body, &error);
      return !scraped || body.find(line) != std::string::npos;
    });
    if (!scraped) ADD_FAILURE() << error;
    return scraped && seen;
  }

  FairqdProcess daemon_{"", "127.0.0.1:0", "127.0.0.1:0"};
};

TEST_F(LifecycleTest, EnqueueLeaseHeartbeatComplete) {
  v1::JobSpec spec = Spec("acme", "payload-1");
  *spec.mutable_lease_duration() = Millis(10'000);
  (*spec.mutable_labels())["kind"] = "report";
  uint64_t id = MustEnqueue(spec);

  v1::Job ready;
  ASSERT_TRUE(GetJob(*producer_, id, &ready).ok());
  EXPECT_EQ(ready.state(), v1::JOB_STATE_READY);
  EXPECT_EQ(ready.attempts(), 0u);
  EXPECT_EQ(ready.spec().payload(), "payload-1");
  EXPECT_GT(ready.enqueued_at().seconds(), 0);

  int64_t before_lease = WallMs();
  v1::LeasedJob leased = MustLease();
  int64_t after_lease = WallMs();
  EXPECT_EQ(leased.job().id(), id);
  EXPECT_EQ(leased.job().state(), v1::JOB_STATE_LEASED);
  EXPECT_EQ(leased.job().spec().tenant(), "acme");
  EXPECT_EQ(leased.job().spec().payload(), "payload-1");
  EXPECT_EQ(leased.job().spec().labels().at("kind"), "report");
  EXPECT_EQ(leased.job().attempts(), 1u);
  EXPECT_TRUE(leased.job().last_error().empty());
  EXPECT_NE(leased.lease_token(), 0u);
  // Deadline = grant time + the job's 10 s lease (1 s slack for clock steps).
  int64_t deadline = ToMillis(leased.deadline());
  EXPECT_GE(deadline, before_lease + 10'000 - 1000);
  EXPECT_LE(deadline, after_lease + 10'000 + 1000);
  EXPECT_EQ(ToMillis(leased.lease_duration()), 10'000);  // clock-free
  EXPECT_EQ(StateOf(id), v1::JOB_STATE_LEASED);

  // A heartbeat some time later moves the deadline out by that much.
  ASSERT_TRUE(LetTimePass(*worker_, 200).ok());
  v1::HeartbeatResponse beat;
  grpc::Status status = Heartbeat(*worker_, id, leased.lease_token(), &beat);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_GE(ToMillis(beat.deadline()), deadline + 150);
  EXPECT_FALSE(beat.yield()) << "no other tenant waits";
  EXPECT_EQ(ToMillis(beat.lease_duration()), 10'000);

  ExpectCompletes(leased);
  // Finished jobs are removed at once.
  v1::Job gone;
  EXPECT_EQ(GetJob(*producer_, id, &gone).error_code(),
            grpc::StatusCode::NOT_FOUND);
  // The same Complete again (a worker that lost the answer) is answered as
  // the first was; another report of the finished job finds no job.
  v1::AckResult again;
  ASSERT_TRUE(Complete(*worker_, id, leased.lease_token(), &again).ok());
  EXPECT_EQ(again.code(), grpc::StatusCode::OK) << again.message();
  ASSERT_TRUE(
      Fail(*worker_, id, leased.lease_token(), "late", true, &again).ok());
  EXPECT_EQ(again.code(), grpc::StatusCode::NOT_FOUND);
}

// Heartbeats keep a 2 s lease alive past its first deadline.
TEST_F(LifecycleTest, HeartbeatsKeepALeaseAlivePastItsFirstDeadline) {
  v1::JobSpec spec = WithFastRetry(Spec("acme"));
  *spec.mutable_lease_duration() = Millis(2000);
  uint64_t id = MustEnqueue(spec);
  v1::LeasedJob leased = MustLease();
  ASSERT_EQ(leased.job().id(), id);
  Clock::time_point leased_at = Clock::now();  // the grant was before this
  // Beat every 500 ms until 2.1 s after the grant: the last beats fall after
  // the first deadline, and each leaves 1.5 s of slack for a slow machine.
  while (ElapsedMs(leased_at) < 2100) {
    ASSERT_TRUE(LetTimePass(*worker_, 500).ok());
    v1::HeartbeatResponse beat;
    grpc::Status status = Heartbeat(*worker_, id, leased.lease_token(), &beat);
    ASSERT_TRUE(status.ok()) << "after " << ElapsedMs(leased_at)
                             << " ms: " << status.error_message();
  }
  v1::Job job;
  ASSERT_TRUE(GetJob(*producer_, id, &job).ok());
  EXPECT_EQ(job.state(), v1::JOB_STATE_LEASED);
  EXPECT_EQ(job.attempts(), 1u);
  ExpectCompletes(leased);
}

// A Lease waiting on an empty queue is answered as soon as a job arrives,
// not when its wait runs out.
TEST_F(LifecycleTest, WaitingLeaseIsAnsweredWhenAJobArrives) {
  auto waiting = std::async(std::launch::async, [&] {
    v1::LeaseResponse response;
    Clock::time_point start = Clock::now();
    grpc::Status status =
        Lease(*worker_, LeaseReq("waiter", 20'000), &response);
    return std::make_tuple(status, response, ElapsedMs(start));
  });
  ASSERT_TRUE(WaitForDefaultPoolWorkers(1)) << "the Lease never waited";
  uint64_t id = MustEnqueue(Spec("acme", "wake-up"));

  ASSERT_EQ(waiting.wait_for(std::chrono::seconds(15)),
            std::future_status::ready);
  auto [status, response, elapsed_ms] = waiting.get();
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.jobs_size(), 1);
  EXPECT_EQ(response.jobs(0).job().id(), id);
  EXPECT_EQ(response.jobs(0).job().spec().payload(), "wake-up");
  // The spec named no lease: the broker's default_lease_seconds.
  EXPECT_EQ(ToMillis(response.jobs(0).lease_duration()), 30'000);
  EXPECT_LT(elapsed_ms, 5000) << "answered by its 20 s wait, not the job";
}

TEST_F(LifecycleTest, EnqueueBatchReportsEachJobInOrder) {
  v1::JobSpec bad = Spec("acme", "bad");
  bad.set_priority(5000);
  v1::EnqueueBatchResponse response;
  grpc::Status status = EnqueueBatch(
      *producer_, {Spec("acme", "first"), bad, Spec("beta", "third")},
      &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.results_size(), 3);
  EXPECT_EQ(response.results(0).code(), grpc::StatusCode::OK);
  EXPECT_EQ(response.results(1).code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.results(1).message(), HasSubstr("jobs[1].priority"));
  EXPECT_EQ(response.results(1).job_id(), 0u);
  EXPECT_EQ(response.results(2).code(), grpc::StatusCode::OK);
  EXPECT_NE(response.results(0).job_id(), response.results(2).job_id());
  for (auto [index, payload] : {std::pair{0, "first"}, std::pair{2, "third"}}) {
    v1::Job job;
    ASSERT_TRUE(
        GetJob(*producer_, response.results(index).job_id(), &job).ok());
    EXPECT_EQ(job.spec().payload(), payload);
    EXPECT_EQ(job.state(), v1::JOB_STATE_READY);
  }
}

// Retryable failures go SCHEDULED and come back with attempts and
// last_error; the last allowed attempt's failure makes the job DEAD.
TEST_F(LifecycleTest, RetryableFailuresRetryUntilMaxAttemptsThenDie) {
  // A 500 ms backoff (+-20%) is long enough to see SCHEDULED.
  v1::JobSpec spec = WithFastRetry(Spec("acme", "flaky"), 500, 500);
  spec.set_max_attempts(2);
  uint64_t id = MustEnqueue(spec);

  v1::LeasedJob first = MustLease();
  ASSERT_EQ(first.job().id(), id);
  EXPECT_EQ(first.job().attempts(), 1u);
  Clock::time_point failed_at = Clock::now();
  v1::AckResult result;
  ASSERT_TRUE(
      Fail(*worker_, id, first.lease_token(), "boom-1", true, &result).ok());
  EXPECT_EQ(result.code(), grpc::StatusCode::OK) << result.message();
  v1::Job waiting;
  ASSERT_TRUE(GetJob(*producer_, id, &waiting).ok());
  EXPECT_EQ(waiting.attempts(), 1u);
  EXPECT_EQ(waiting.last_error(), "boom-1");

  v1::LeasedJob second = MustLease();
  ASSERT_EQ(second.job().id(), id);
  EXPECT_GE(ElapsedMs(failed_at), 390) << "leased before its backoff ended";
  EXPECT_EQ(second.job().attempts(), 2u);
  EXPECT_EQ(second.job().last_error(), "boom-1");
  EXPECT_EQ(second.job().spec().payload(), "flaky");
  EXPECT_NE(second.lease_token(), first.lease_token());

  ASSERT_TRUE(
      Fail(*worker_, id, second.lease_token(), "boom-2", true, &result).ok());
  EXPECT_EQ(result.code(), grpc::StatusCode::OK) << result.message();
  v1::Job dead;
  ASSERT_TRUE(GetJob(*producer_, id, &dead).ok());
  EXPECT_EQ(dead.state(), v1::JOB_STATE_DEAD);
  EXPECT_EQ(dead.attempts(), 2u);
  EXPECT_EQ(dead.last_error(), "boom-2");

  v1::ListDeadLettersRequest list;
  list.set_tenant("acme");
  v1::ListDeadLettersResponse letters;
  ASSERT_TRUE(
      Call(*admin_, &v1::Admin::Stub::ListDeadLetters, list, &letters).ok());
  ASSERT_EQ(letters.jobs_size(), 1);
  EXPECT_EQ(letters.jobs(0).id(), id);
  EXPECT_EQ(letters.jobs(0).state(), v1::JOB_STATE_DEAD);
  EXPECT_EQ(letters.jobs(0).attempts(), 2u);
  EXPECT_EQ(letters.jobs(0).last_error(), "boom-2");
  EXPECT_EQ(letters.jobs(0).spec().payload(), "flaky");
  EXPECT_FALSE(letters.more());

  // A dead job is not leased again.
  v1::LeaseResponse nothing;
  ASSERT_TRUE(Lease(*worker_, LeaseReq("w1", 0), &nothing).ok());
  EXPECT_EQ(nothing.jobs_size(), 0);

  // While its backoff runs a failed job is SCHEDULED, with the time it will
  // be READY again (a minute here: no machine is that slow).
  uint64_t parked =
      MustEnqueue(WithFastRetry(Spec("acme", "parked"), 60'000, 60'000));
  v1::LeasedJob leased = MustLease();
  ASSERT_EQ(leased.job().id(), parked);
  ASSERT_TRUE(
      Fail(*worker_, parked, leased.lease_token(), "boom", true, &result).ok());
  ASSERT_TRUE(GetJob(*producer_, parked, &waiting).ok());
  EXPECT_EQ(waiting.state(), v1::JOB_STATE_SCHEDULED);
  EXPECT_GT(ToMillis(waiting.ready_at()), WallMs() + 30'000);
}

TEST_F(LifecycleTest, NonRetryableFailureGoesDeadAtOnce) {
  v1::JobSpec spec = WithFastRetry(Spec("acme"));
  spec.set_max_attempts(5);
  uint64_t id = MustEnqueue(spec);
  v1::LeasedJob leased = MustLease();
  v1::AckResult result;
  ASSERT_TRUE(
      Fail(*worker_, id, leased.lease_token(), "bad input", false, &result)
          .ok());
  EXPECT_EQ(result.code(), grpc::StatusCode::OK) << result.message();
  v1::Job dead;
  ASSERT_TRUE(GetJob(*producer_, id, &dead).ok());
  EXPECT_EQ(dead.state(), v1::JOB_STATE_DEAD);
  EXPECT_EQ(dead.attempts(), 1u);
  EXPECT_EQ(dead.last_error(), "bad input");
  // Acks for a dead job find no live job.
  ASSERT_TRUE(Complete(*worker_, id, leased.lease_token(), &result).ok());
  EXPECT_EQ(result.code(), grpc::StatusCode::NOT_FOUND);
}

// RequeueDeadLetters by id and by tenant: the job is READY again with a
// fresh attempt count, and runs again.
TEST_F(LifecycleTest, RequeuedDeadLettersRunAgainWithFreshAttempts) {
  v1::JobSpec spec = WithFastRetry(Spec("acme", "again"));
  spec.set_max_attempts(1);
  uint64_t id = MustEnqueue(spec);
  v1::LeasedJob leased = MustLease();
  v1::AckResult result;
  ASSERT_TRUE(
      Fail(*worker_, id, leased.lease_token(), "x", true, &result).ok());
  ASSERT_EQ(StateOf(id), v1::JOB_STATE_DEAD) << "max_attempts 1 is exhausted";

  v1::RequeueDeadLettersRequest by_id;
  by_id.set_job_id(id);
  v1::RequeueDeadLettersResponse requeued;
  ASSERT_TRUE(
      Call(*admin_, &v1::Admin::Stub::RequeueDeadLetters, by_id, &requeued)
          .ok());
  EXPECT_EQ(requeued.requeued(), 1u);
  v1::Job ready;
  ASSERT_TRUE(GetJob(*producer_, id, &ready).ok());
  EXPECT_EQ(ready.state(), v1::JOB_STATE_READY);
  EXPECT_EQ(ready.attempts(), 0u);
  // Requeuing it again by id: it is no longer a dead letter.
  EXPECT_EQ(
      Call(*admin_, &v1::Admin::Stub::RequeueDeadLetters, by_id, &requeued)
          .error_code(),
      grpc::StatusCode::NOT_FOUND);

  // It runs again as attempt 1, and dies again (non-retryable this time).
  v1::LeasedJob again = MustLease();
  ASSERT_EQ(again.job().id(), id);
  EXPECT_EQ(again.job().attempts(), 1u);
  EXPECT_EQ(again.job().spec().payload(), "again");
  ASSERT_TRUE(
      Fail(*worker_, id, again.lease_token(), "y", false, &result).ok());
  ASSERT_EQ(StateOf(id), v1::JOB_STATE_DEAD);

  v1::RequeueDeadLettersRequest by_tenant;
  by_tenant.mutable_filter()->set_tenant("acme");
  ASSERT_TRUE(
      Call(*admin_, &v1::Admin::Stub::RequeueDeadLetters, by_tenant, &requeued)
          .ok());
  EXPECT_EQ(requeued.requeued(), 1u);
  ASSERT_TRUE(GetJob(*producer_, id, &ready).ok());
  EXPECT_EQ(ready.state(), v1::JOB_STATE_READY);
  EXPECT_EQ(ready.attempts(), 0u);
  v1::LeasedJob third = MustLease();
  EXPECT_EQ(third.job().id(), id);
  EXPECT_EQ(third.job().attempts(), 1u);
  ExpectCompletes(third);
}

TEST_F(LifecycleTest, CancelReadyAndScheduledButNotLeasedJobs) {
  // READY: canceled, gone, and never leased.
  uint64_t ready_id = MustEnqueue(Spec("acme", "ready"));
  v1::Job canceled;
  ASSERT_TRUE(CancelJob(*producer_, ready_id, &canceled).ok());
  EXPECT_EQ(canceled.id(), ready_id);
  EXPECT_EQ(canceled.state(), v1::JOB_STATE_CANCELED);
  EXPECT_EQ(canceled.spec().payload(), "ready");
  v1::Job gone;
  EXPECT_EQ(GetJob(*producer_, ready_id, &gone).error_code(),
            grpc::StatusCode::NOT_FOUND);

  // SCHEDULED (due in an hour): canceled and gone.
  v1::JobSpec later = Spec("acme", "later");
  *later.mutable_delay() = Millis(3600'000);
  uint64_t scheduled_id = MustEnqueue(later);
  EXPECT_EQ(StateOf(scheduled_id), v1::JOB_STATE_SCHEDULED);
  ASSERT_TRUE(CancelJob(*producer_, scheduled_id, &canceled).ok());
  EXPECT_EQ(canceled.state(), v1::JOB_STATE_CANCELED);
  EXPECT_EQ(GetJob(*producer_, scheduled_id, &gone).error_code(),
            grpc::StatusCode::NOT_FOUND);

  // LEASED: refused, and the lease is untouched.
  uint64_t leased_id = MustEnqueue(Spec("acme", "leased"));
  v1::LeasedJob leased = MustLease();
  ASSERT_EQ(leased.job().id(), leased_id) << "the canceled job was leased";
  grpc::Status status = CancelJob(*producer_, leased_id, &canceled);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(StateOf(leased_id), v1::JOB_STATE_LEASED);
  ExpectCompletes(leased);

  // Unknown and finished ids.
  EXPECT_EQ(CancelJob(*producer_, 987654321, &canceled).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(CancelJob(*producer_, leased_id, &canceled).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(CancelJob(*producer_, ready_id, &canceled).error_code(),
            grpc::StatusCode::NOT_FOUND);

  // DEAD: refused.
  uint64_t dead_id = MustEnqueue(Spec("acme", "dead"));
  v1::LeasedJob doomed = MustLease();
  ASSERT_EQ(doomed.job().id(), dead_id);
  v1::AckResult result;
  ASSERT_TRUE(
      Fail(*worker_, dead_id, doomed.lease_token(), "no", false, &result).ok());
  EXPECT_EQ(CancelJob(*producer_, dead_id, &canceled).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(StateOf(dead_id), v1::JOB_STATE_DEAD);
}

TEST_F(LifecycleTest, IdempotencyKeysAreScopedToTheTenant) {
  v1::JobSpec spec = Spec("acme", "once");
  spec.set_idempotency_key("order-17");
  uint64_t first = 0, second = 0, other = 0;
  bool duplicate = true;
  ASSERT_TRUE(Enqueue(*producer_, spec, &first, &duplicate).ok());
  EXPECT_FALSE(duplicate);
  ASSERT_TRUE(Enqueue(*producer_, spec, &second, &duplicate).ok());
  EXPECT_TRUE(duplicate);
  EXPECT_EQ(second, first);

  v1::JobSpec beta = spec;
  beta.set_tenant("beta");
  ASSERT_TRUE(Enqueue(*producer_, beta, &other, &duplicate).ok());
  EXPECT_FALSE(duplicate);
  EXPECT_NE(other, first);

  // In a batch: a key seen earlier, and a key repeated within the batch.
  v1::JobSpec fresh = Spec("acme", "batch");
  fresh.set_idempotency_key("order-18");
  v1::JobSpec unkeyed = Spec("acme", "no key");
  v1::EnqueueBatchResponse batch;
  ASSERT_TRUE(
      EnqueueBatch(*producer_, {spec, fresh, fresh, unkeyed, unkeyed}, &batch)
          .ok());
  ASSERT_EQ(batch.results_size(), 5);
  for (const v1::EnqueueResult& result : batch.results()) {
    EXPECT_EQ(result.code(), grpc::StatusCode::OK) << result.message();
  }
  EXPECT_EQ(batch.results(0).job_id(), first);
  EXPECT_TRUE(batch.results(0).duplicate());
  EXPECT_FALSE(batch.results(1).duplicate());
  EXPECT_EQ(batch.results(2).job_id(), batch.results(1).job_id());
  EXPECT_TRUE(batch.results(2).duplicate());
  EXPECT_FALSE(batch.results(3).duplicate());
  EXPECT_FALSE(batch.results(4).duplicate());
  EXPECT_NE(batch.results(3).job_id(), batch.results(4).job_id());

  // Nothing extra was queued: acme holds order-17, order-18 and two unkeyed.
  v1::GetQueueStatsRequest stats_request;
  stats_request.set_tenant("acme");
  v1::GetQueueStatsResponse stats;
  ASSERT_TRUE(
      Call(*admin_, &v1::Admin::Stub::GetQueueStats, stats_request, &stats)
          .ok());
  ASSERT_EQ(stats.tenants_size(), 1);
  EXPECT_EQ(stats.tenants(0).ready(), 4u);
}

// Jobs with a delay or a not_before time are not leased before they are
// due, and are leased as soon as they are.
TEST_F(LifecycleTest, DelayedJobsAreLeasedWhenDueAndNotBefore) {
  v1::JobSpec delayed = Spec("acme", "delay");
  *delayed.mutable_delay() = Millis(300);
  Clock::time_point start = Clock::now();
  uint64_t id = MustEnqueue(delayed);
  v1::LeasedJob leased = MustLease(5000);
  int64_t waited = ElapsedMs(start);
  EXPECT_EQ(leased.job().id(), id);
  EXPECT_GE(waited, 295) << "leased before its delay ran out";
  EXPECT_LT(waited, 3000) << "not leased promptly once due";
  ExpectCompletes(leased);

  v1::JobSpec timed = Spec("acme", "not_before");
  *timed.mutable_not_before() =
      google::protobuf::util::TimeUtil::MillisecondsToTimestamp(WallMs() + 300);
  start = Clock::now();
  id = MustEnqueue(timed);
  leased = MustLease(5000);
  waited = ElapsedMs(start);
  EXPECT_EQ(leased.job().id(), id);
  EXPECT_GE(waited, 280) << "leased before not_before";
  EXPECT_LT(waited, 3000) << "not leased promptly once due";
  ExpectCompletes(leased);

  // A not_before in the past means now.
  *timed.mutable_not_before() =
      google::protobuf::util::TimeUtil::MillisecondsToTimestamp(WallMs() -
                                                                60'000);
  id = MustEnqueue(timed);
  EXPECT_EQ(StateOf(id), v1::JOB_STATE_READY);
  v1::LeaseResponse now;
  ASSERT_TRUE(Lease(*worker_, LeaseReq("w1", 0), &now).ok());
  ASSERT_EQ(now.jobs_size(), 1);
  EXPECT_EQ(now.jobs(0).job().id(), id);
}

TEST_F(LifecycleTest, PausedTenantKeepsItsJobsUntilResumed) {
  uint64_t held = MustEnqueue(Spec("paused", "held"));
  v1::PauseTenantRequest pause;
  pause.set_name("paused");
  v1::Tenant tenant;
  ASSERT_TRUE(
      Call(*admin_, &v1::Admin::Stub::PauseTenant, pause, &tenant).ok());
  EXPECT_TRUE(tenant.paused());
  // Still accepts jobs while paused.
  uint64_t held_too = MustEnqueue(Spec("paused", "held too"));
  uint64_t runs = MustEnqueue(Spec("other", "runs"));

  // Both tenants' jobs are ready; only the unpaused one is handed out.
  v1::LeaseResponse response;
  ASSERT_TRUE(Lease(*worker_, LeaseReq("w1", 0, 3), &response).ok());
  ASSERT_EQ(response.jobs_size(), 1);
  EXPECT_EQ(response.jobs(0).job().id(), runs);
  ExpectCompletes(response.jobs(0));
  // And nothing comes within a 300 ms wait either.
  ASSERT_TRUE(Lease(*worker_, LeaseReq("w1", 300, 3), &response).ok());
  EXPECT_EQ(response.jobs_size(), 0);
  EXPECT_EQ(StateOf(held), v1::JOB_STATE_READY);

  // A worker waiting when the tenant resumes gets its jobs at once.
  auto waiting = std::async(std::launch::async, [&] {
    v1::LeaseResponse got;
    grpc::Status status = Lease(*worker_, LeaseReq("w2", 20'000, 2), &got);
    return std::make_pair(status, got);
  });
  ASSERT_TRUE(WaitForDefaultPoolWorkers(2)) << "w2's Lease never waited";
  Clock::time_point resumed_at = Clock::now();
  ASSERT_TRUE(
      Call(*admin_, &v1::Admin::Stub::ResumeTenant, pause, &tenant).ok());
  EXPECT_FALSE(tenant.paused());
  ASSERT_EQ(waiting.wait_for(std::chrono::seconds(15)),
            std::future_status::ready);
  auto [status, got] = waiting.get();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_LT(ElapsedMs(resumed_at), 5000);
  ASSERT_GE(got.jobs_size(), 1);
  EXPECT_EQ(got.jobs(0).job().spec().tenant(), "paused");
  std::vector<uint64_t> ids;
  for (const v1::LeasedJob& job : got.jobs()) ids.push_back(job.job().id());
  EXPECT_THAT(ids, ::testing::IsSubsetOf({held, held_too}));

  v1::PauseTenantRequest unknown;
  unknown.set_name("nobody");
  EXPECT_EQ(Call(*admin_, &v1::Admin::Stub::PauseTenant, unknown, &tenant)
                .error_code(),
            grpc::StatusCode::NOT_FOUND);
}

// A lease that lapses (no heartbeat) is a failed attempt: the job is
// redelivered, and the old token can no longer ack or extend it.
TEST_F(LifecycleTest, LapsedLeaseIsRedeliveredAndItsTokenIsStale) {
  v1::JobSpec spec = WithFastRetry(Spec("acme", "slow"), 0, 50);
  *spec.mutable_lease_duration() = Millis(1000);
  uint64_t id = MustEnqueue(spec);
  Clock::time_point start = Clock::now();
  v1::LeasedJob first = MustLease();
  ASSERT_EQ(first.job().id(), id);
  EXPECT_EQ(first.job().attempts(), 1u);

  v1::LeasedJob second = MustLease(10'000, "w2");
  ASSERT_EQ(second.job().id(), id);
  EXPECT_GE(ElapsedMs(start), 990) << "redelivered before the lease lapsed";
  EXPECT_EQ(second.job().attempts(), 2u);
  EXPECT_FALSE(second.job().last_error().empty());
  EXPECT_NE(second.lease_token(), first.lease_token());

  // The old token: every ack is refused and nothing changes.
  v1::HeartbeatResponse beat;
  EXPECT_EQ(Heartbeat(*worker_, id, first.lease_token(), &beat).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  v1::AckResult result;
  ASSERT_TRUE(Complete(*worker_, id, first.lease_token(), &result).ok());
  EXPECT_EQ(result.code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(result.message(), HasSubstr("lease_token"));
  ASSERT_TRUE(
      Fail(*worker_, id, first.lease_token(), "late", false, &result).ok());
  EXPECT_EQ(result.code(), grpc::StatusCode::FAILED_PRECONDITION);
  v1::Job job;
  ASSERT_TRUE(GetJob(*producer_, id, &job).ok());
  EXPECT_EQ(job.state(), v1::JOB_STATE_LEASED);
  EXPECT_EQ(job.attempts(), 2u);
  EXPECT_NE(job.last_error(), "late");

  // The current token still works.
  ASSERT_TRUE(Heartbeat(*worker_, id, second.lease_token(), &beat).ok());
  ExpectCompletes(second);
}

// A Lease whose client goes away must not swallow jobs: whether fairqd
// drops the waiting call before a job arrives, or grants the job and then
// finds the reply undeliverable, the job is back in the queue at once (not
// after its 30 s lease), with the undelivered attempt not counted.
//
// Deterministic: the cancel (or the client's deadline) is sent on the same
// HTTP/2 connection before the Enqueue, so fairqd sees the call canceled
// before it can grant it the job. Which of the two paths above fairqd takes
// varies from run to run (gRPC's threads race), so several rounds are run;
// every path must give the same result.
TEST_F(LifecycleTest, LeaseWhoseClientWentAwayReturnsItsJobsAtOnce) {
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    bool by_deadline = round % 2 == 1;
    grpc::ClientContext context;
    // Waits 20 s for work; by_deadline rounds give up after 300 ms instead.
    context.set_deadline(Deadline(by_deadline ? 0.3 : 25));
    v1::LeaseRequest request = LeaseReq("gone", 20'000, 2);
    v1::LeaseResponse abandoned;
    std::promise<grpc::Status> finished;
    worker_->async()->Lease(&context, &request, &abandoned,
                            [&](grpc::Status s) { finished.set_value(s); });
    auto done = finished.get_future();
    if (by_deadline) {
      ASSERT_EQ(done.wait_for(std::chrono::seconds(10)),
                std::future_status::ready);
    } else {
      // Vary how long the call waits before its client leaves.
      ASSERT_TRUE(LetTimePass(*worker_, round * 20).ok());
      context.TryCancel();
    }
    uint64_t id = MustEnqueue(Spec("acme", "round " + std::to_string(round)));
    ASSERT_EQ(done.wait_for(std::chrono::seconds(10)),
              std::future_status::ready);
    grpc::Status status = done.get();
    EXPECT_EQ(status.error_code(), by_deadline
                                       ? grpc::StatusCode::DEADLINE_EXCEEDED
                                       : grpc::StatusCode::CANCELLED);

    Clock::time_point start = Clock::now();
    v1::LeasedJob leased = MustLease(5000, "present");
    ASSERT_EQ(leased.job().id(), id) << "the job stayed with the gone call";
    EXPECT_LT(ElapsedMs(start), 4000);
    EXPECT_EQ(leased.job().attempts(), 1u)
        << "the undelivered attempt was counted";
    ExpectCompletes(leased);
  }
}

// Lease calls waiting on one stub's connection. The destructor cancels
// those still waiting and waits for every callback (each call's deadline
// bounds that), so no call outlives the state it reports to, however the
// test ends.
class WaitingLeases {
 public:
  WaitingLeases(v1::Worker::Stub& stub, int count) {
    for (int i = 0; i < count; ++i) {
      auto call = std::make_unique<Call>();
      call->context.set_deadline(Deadline(60));
      call->request = LeaseReq("crowd-" + std::to_string(i), 30'000);
      Call* c = call.get();
      calls_.push_back(std::move(call));
      stub.async()->Lease(&c->context, &c->request, &c->response,
                          [this, c](grpc::Status) {
                            std::lock_guard<std::mutex> lock(mu_);
                            ++ended_;
                            given_a_job_ += c->response.jobs_size();
                            changed_.notify_all();
                          });
    }
  }
  ~WaitingLeases() {
    for (auto& call : calls_) call->context.TryCancel();
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [this] { return ended_ == calls_.size(); });
  }

  // Jobs given to the calls that ended, once one has (within 10 s).
  std::optional<int> JobsOnceOneEnded() {
    std::unique_lock<std::mutex> lock(mu_);
    if (!changed_.wait_for(lock, std::chrono::seconds(10),
                           [this] { return ended_ > 0; })) {
      return std::nullopt;
    }
    return given_a_job_;
  }

 private:
  struct Call {
    grpc::ClientContext context;
    v1::LeaseRequest request;
    v1::LeaseResponse response;
  };
  std::vector<std::unique_ptr<Call>> calls_;
  std::mutex mu_;
  std::condition_variable changed_;
  size_t ended_ = 0;
  int given_a_job_ = 0;
};

// fairqd takes at most 1,024 calls at once on one connection (HTTP/2's
// SETTINGS_MAX_CONCURRENT_STREAMS; gRPC's own default is unbounded), so
// calls it has not read cannot pile up in its memory without end
// (docs/architecture.md). A call past that waits on its client until one
// of the connection's calls ends; other connections are served meanwhile.
TEST_F(LifecycleTest, CallsPastAConnectionsStreamLimitWaitForOneToEnd) {
  constexpr int kStreamLimit = 1024;
  grpc::ChannelArguments own_connection;
  own_connection.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto crowded = v1::Worker::NewStub(grpc::CreateCustomChannel(
      "127.0.0.1:" + std::to_string(daemon_.port()),
      grpc::InsecureChannelCredentials(), own_connection));
  WaitingLeases waiting(*crowded, kStreamLimit);
  ASSERT_TRUE(WaitForDefaultPoolWorkers(kStreamLimit));

  grpc::ClientContext past_the_limit;
  past_the_limit.set_deadline(Deadline(1));
  v1::LeaseResponse response;
  EXPECT_EQ(crowded->Lease(&past_the_limit, LeaseReq("one-more", 0), &response)
                .error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED)
      << "a call past the limit was served";

  MustEnqueue(Spec("acme", "for one of the crowd"));  // another connection
  EXPECT_EQ(waiting.JobsOnceOneEnded(), std::optional<int>(1));
  grpc::ClientContext after_one_ended;
  after_one_ended.set_deadline(Deadline(10));
  EXPECT_TRUE(
      crowded->Lease(&after_one_ended, LeaseReq("one-more", 0), &response)
          .ok());
}

}  // namespace
}  // namespace fairq::testing
