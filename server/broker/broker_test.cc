// The broker's lifecycle rules, one case at a time, on BrokerFixture.
#include "server/broker/broker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "google/protobuf/util/time_util.h"
#include "server/broker/broker_fixture.h"
#include "server/config/tenant_settings.h"
#include "store/fault_injection_env.h"

namespace fairq::server {
namespace {

using google::protobuf::util::TimeUtil;

class BrokerTest : public BrokerFixture {
 protected:
  // A job of `tenant` whose lease lasts `lease_ms` unless heartbeated.
  static v1::JobSpec SpecWithLease(const std::string& tenant,
                                   int64_t lease_ms) {
    v1::JobSpec spec;
    spec.set_tenant(tenant);
    *spec.mutable_lease_duration() = TimeUtil::MillisecondsToDuration(lease_ms);
    return spec;
  }
  // The next lease is job `id` (enqueued by Enqueue("a")), its reply held
  // until the turn is applied: the job is read from the store, as a job
  // with a ready entry must be.
  void ExpectLeasedAfterItsWrite(uint64_t id) {
    Turn turn(store_->NewBatch());
    auto call = LeaseIn(turn);
    ASSERT_EQ(call->response.jobs_size(), 1);
    EXPECT_EQ(call->response.jobs(0).job().id(), id);
    EXPECT_TRUE(turn.replies_before_apply.empty());
    ASSERT_TRUE(Commit(turn).ok());
    EXPECT_EQ(call->response.jobs(0).job().spec().payload(), "payload-a");
  }
  // The default pool's live capacity, as a scrape sees it.
  uint32_t LiveSlots() {
    uint32_t slots = 0;
    Command command = MetricsSnapshotCommand{
        [&](const metrics::BrokerState& state, int64_t) {
          slots = state.pools.empty() ? 0 : state.pools[0].slots;
        },
        [](const Status&) {}};
    Turn1(&command);
    return slots;
  }
};

TEST_F(BrokerTest, EnqueueLeaseComplete) {
  uint64_t id = Enqueue("a");
  auto lease = Lease();
  ASSERT_TRUE(lease->done && lease->done->ok());
  ASSERT_EQ(lease->response.jobs_size(), 1);
  const v1::LeasedJob& job = lease->response.jobs(0);
  EXPECT_EQ(job.job().id(), id);
  EXPECT_EQ(job.job().spec().payload(), "payload-a");  // read back from store
  EXPECT_EQ(job.job().attempts(), 1u);
  EXPECT_NE(job.lease_token(), 0u);
  EXPECT_EQ(CompleteCode(id, job.lease_token()), 0);
  EXPECT_EQ(broker_->live_jobs(), 0u);
  EXPECT_FALSE(store_->GetJob(id)->has_value());  // removed on success
}

TEST_F(BrokerTest, WaitingLeaseIsAnsweredWhenAJobArrives) {
  auto lease = Lease(/*wait_ms=*/30'000);
  EXPECT_FALSE(lease->done);
  uint64_t id = Enqueue("a");
  ASSERT_TRUE(lease->done);
  ASSERT_EQ(lease->response.jobs_size(), 1);
  EXPECT_EQ(lease->response.jobs(0).job().id(), id);
}

// A call waiting on two pools is answered through the first with work and
// is then gone from both: the other pool's next job goes to the next call.
TEST_F(BrokerTest, AWaitingLeaseOnTwoPoolsIsAnsweredOnce) {
  auto both = Lease(/*wait_ms=*/30'000, 1, {"x", "y"});
  v1::JobSpec spec;
  spec.set_tenant("a");
  spec.set_pool("y");
  uint64_t in_y = Enqueue(spec);
  ASSERT_TRUE(both->done && both->done->ok());
  ASSERT_EQ(both->response.jobs_size(), 1);
  EXPECT_EQ(both->response.jobs(0).job().id(), in_y);
  both->done.reset();

  auto only_x = Lease(/*wait_ms=*/30'000, 1, {"x"});
  EXPECT_FALSE(only_x->done);
  spec.set_pool("x");
  uint64_t in_x = Enqueue(spec);
  EXPECT_FALSE(both->done);  // answered once only
  ASSERT_TRUE(only_x->done && only_x->done->ok());
  ASSERT_EQ(only_x->response.jobs_size(), 1);
  EXPECT_EQ(only_x->response.jobs(0).job().id(), in_x);
}

TEST_F(BrokerTest, ACanceledWaitingLeaseGetsNoJob) {
  auto lease = Lease(/*wait_ms=*/30'000);
  Command cancel = LeaseCanceledCommand{next_waiter_ - 1};
  Turn1(&cancel);
  ASSERT_TRUE(lease->done);
  EXPECT_EQ(lease->done->code(), StatusCode::kCancelled);
  lease->done.reset();
  Enqueue("a");
  EXPECT_FALSE(lease->done);
  EXPECT_EQ(lease->response.jobs_size(), 0);
  EXPECT_EQ(Stats("a").ready(), 1u);
}

TEST_F(BrokerTest, WaitingLeaseEndsEmptyAtItsDeadline) {
  auto lease = Lease(/*wait_ms=*/500);
  EXPECT_FALSE(lease->done);
  ASSERT_TRUE(broker_->NextDeadline().has_value());
  EXPECT_EQ(*broker_->NextDeadline(), now_ + 500);
  Advance(500);
  ASSERT_TRUE(lease->done && lease->done->ok());
  EXPECT_EQ(lease->response.jobs_size(), 0);
}

TEST_F(BrokerTest, StaleTokenChangesNothing) {
  uint64_t id = Enqueue("a");
  auto lease = Lease();
  uint64_t token = lease->response.jobs(0).lease_token();
  EXPECT_EQ(CompleteCode(id, token + 1), static_cast<int32_t>(StatusCode::kFailedPrecondition));
  EXPECT_EQ(CompleteCode(id + 100, token), static_cast<int32_t>(StatusCode::kNotFound));
  EXPECT_EQ(CompleteCode(id, token), 0);
}

// A worker that lost the answer to its report sends it again: an exact
// repeat (job, lease token, outcome) is answered as the first was and
// changes nothing. Another outcome is still refused, and after a restart
// the broker no longer knows the report.
TEST_F(BrokerTest, AnExactRepeatOfATakenReportIsAnsweredAsTheFirstWas) {
  constexpr auto kNotFound = static_cast<int32_t>(StatusCode::kNotFound);
  constexpr auto kStale = static_cast<int32_t>(StatusCode::kFailedPrecondition);
  uint64_t done = Enqueue("a");
  uint64_t failed = Enqueue("a");
  auto lease = Lease(/*wait_ms=*/0, /*max_jobs=*/2);
  ASSERT_EQ(lease->response.jobs_size(), 2);
  uint64_t done_token = lease->response.jobs(0).lease_token();
  uint64_t failed_token = lease->response.jobs(1).lease_token();

  EXPECT_EQ(CompleteCode(done, done_token), 0);
  EXPECT_EQ(CompleteCode(done, done_token), 0);
  EXPECT_EQ(FailCode(done, done_token), kNotFound);
  EXPECT_EQ(FailCode(failed, failed_token), 0);
  EXPECT_EQ(FailCode(failed, failed_token), 0);
  EXPECT_EQ(CompleteCode(failed, failed_token), kStale);
  EXPECT_EQ(Stats("a").scheduled(), 1u);
  Advance(2000);  // past the retry's backoff (1 s +-20%)
  auto retry = Lease();
  ASSERT_EQ(retry->response.jobs_size(), 1);
  EXPECT_EQ(retry->response.jobs(0).job().attempts(), 2u);  // one failure

  Reopen();
  EXPECT_EQ(CompleteCode(done, done_token), kNotFound);
}

// The timers of completed leases are purged once they outnumber the live
// ones (timer_queue.h). A lease held across many purges, and heartbeated
// between them (its entry is pushed again at the new deadline), must lapse
// at its deadline all the same.
TEST_F(BrokerTest, ALeaseHeldWhileThousandsCompleteStillLapses) {
  uint64_t held_id = Enqueue(SpecWithLease("held", 60'000));
  auto lease = Lease();
  ASSERT_EQ(lease->response.jobs_size(), 1);
  const uint64_t held_token = lease->response.jobs(0).lease_token();
  v1::JobSpec quick;
  quick.set_tenant("quick");
  // Leases and completes 5 x kSlack jobs of "quick".
  auto churn = [&] {
    v1::EnqueueBatchResponse enqueued;
    Command fill = EnqueueCommand{
        std::vector<const v1::JobSpec*>(5 * TimerQueue::kSlack, &quick),
        &enqueued, [](const Status&) {}};
    Turn1(&fill);
    ASSERT_EQ(enqueued.results_size(),
              static_cast<int>(5 * TimerQueue::kSlack));
    size_t completed = 0;
    // Bounded: each round completes at least one job, or ends the loop.
    for (size_t round = 0; round < 5 * TimerQueue::kSlack; ++round) {
      auto call = Lease(0, 256);
      if (call->response.jobs_size() == 0) break;
      completed += call->response.jobs_size();
      v1::CompleteRequest request;
      for (const v1::LeasedJob& job : call->response.jobs()) {
        v1::Completion* completion = request.add_completions();
        completion->set_job_id(job.job().id());
        completion->set_lease_token(job.lease_token());
      }
      v1::AckResponse response;
      Command complete =
          CompleteCommand{&request, &response, [](const Status&) {}};
      Turn1(&complete);
      for (const v1::AckResult& result : response.results()) {
        ASSERT_EQ(result.code(), 0) << result.message();
      }
    }
    EXPECT_EQ(completed, 5 * TimerQueue::kSlack);
    EXPECT_EQ(Stats("quick").ready(), 0u);
  };
  churn();
  Advance(30'000);
  ASSERT_TRUE(Heartbeat(held_id, held_token).ok());  // now due at 90 s
  Advance(30'000);  // the first deadline passes: pushed again
  churn();
  Advance(29'000);
  EXPECT_EQ(Stats("held").leased(), 1u);
  Advance(1'000);
  EXPECT_EQ(Stats("held").leased(), 0u);
  EXPECT_EQ(Stats("held").scheduled(), 1u);  // retried after its backoff
}

// The same for a delayed job while thousands of others are scheduled and
// canceled.
TEST_F(BrokerTest, ADelayedJobStaysDueWhileThousandsAreCanceled) {
  v1::JobSpec later;
  later.set_tenant("later");
  *later.mutable_delay() = TimeUtil::MillisecondsToDuration(60'000);
  Enqueue(later);
  v1::JobSpec canceled = later;
  canceled.set_tenant("canceled");
  for (size_t i = 0; i < 3 * TimerQueue::kSlack; ++i) {
    v1::Job job;
    job.set_id(Enqueue(canceled));
    std::optional<Status> done;
    Command cancel = CancelJobCommand{&job, [&](const Status& s) { done = s; }};
    Turn1(&cancel);
    ASSERT_TRUE(done && done->ok()) << (done ? done->ToString() : "no reply");
  }
  EXPECT_EQ(Stats("canceled").scheduled(), 0u);
  Advance(59'000);
  EXPECT_EQ(Stats("later").scheduled(), 1u);
  Advance(1'000);
  EXPECT_EQ(Stats("later").ready(), 1u);
}

// A cancel whose job ended after the service read its record: finished is
// NOT_FOUND and dead is FAILED_PRECONDITION, as when the read saw the end.
TEST_F(BrokerTest, ACancelRacingTheJobsEndAnswersAsAfterIt) {
  auto cancel = [&](uint64_t id) {
    std::optional<Status> done = Cancel(id);
    return done ? done->code() : StatusCode::kOk;
  };
  uint64_t finished = Enqueue("a");
  auto lease = Lease();
  ASSERT_EQ(CompleteCode(finished, lease->response.jobs(0).lease_token()), 0);
  EXPECT_EQ(cancel(finished), StatusCode::kNotFound);
  uint64_t dead = Enqueue("a");
  lease = Lease();
  ASSERT_EQ(FailCode(dead, lease->response.jobs(0).lease_token(), false), 0);
  EXPECT_EQ(cancel(dead), StatusCode::kFailedPrecondition);
}

// A worker that heartbeats a job for a while and then dies held its slot
// all that time: the lapse charges the tenant from the grant, not one lease
// length.
TEST_F(BrokerTest, AHeartbeatedLeaseThatLapsesIsChargedFromItsGrant) {
  uint64_t id = Enqueue(SpecWithLease("a", 10'000));
  auto lease = Lease();
  ASSERT_EQ(lease->response.jobs_size(), 1);
  for (int beat = 0; beat < 3; ++beat) {
    Advance(8'000);
    ASSERT_TRUE(Heartbeat(id, lease->response.jobs(0).lease_token()).ok());
  }
  Advance(10'000);  // t = 34 s: the last beat's lease lapses
  EXPECT_EQ(Stats("a").scheduled(), 1u);
  EXPECT_DOUBLE_EQ(Stats("a").worker_seconds(), 34);
}

// After a restart a lease's lapse charges what it held before (at most its
// granted length) and since, not the hours fairqd was down.
TEST_F(BrokerTest, ARestoredLeasesLapseDoesNotChargeTheDowntime) {
  Enqueue(SpecWithLease("a", 10'000));
  ASSERT_EQ(Lease()->response.jobs_size(), 1);
  now_ += 2 * 3600 * 1000;  // down for two hours
  Reopen();
  Advance(10'000);  // the restored lease lapses, 10 s after the restart
  EXPECT_EQ(Stats("a").scheduled(), 1u);
  EXPECT_DOUBLE_EQ(Stats("a").worker_seconds(), 20);
}

// Retries wait min(max_backoff, initial_backoff x 2^(n-1)) after the n-th
// failure, +-20% (docs/api.md): 100, 200, 400, 800 ms, then 1 s, the cap.
TEST_F(BrokerTest, RetryBackoffDoublesUpToItsCapWithJitter) {
  v1::JobSpec spec;
  spec.set_tenant("a");
  spec.set_max_attempts(6);
  *spec.mutable_retry()->mutable_initial_backoff() =
      TimeUtil::MillisecondsToDuration(100);
  *spec.mutable_retry()->mutable_max_backoff() =
      TimeUtil::MillisecondsToDuration(1000);
  uint64_t id = Enqueue(spec);
  for (int64_t base : {100, 200, 400, 800, 1000}) {
    auto lease = Lease();
    ASSERT_EQ(lease->response.jobs_size(), 1) << "after " << base;
    ASSERT_EQ(FailCode(id, lease->response.jobs(0).lease_token()), 0);
    v1::Job job;
    GetJob(id, &job);
    ASSERT_EQ(job.state(), v1::JOB_STATE_SCHEDULED);
    int64_t wait = TimeUtil::TimestampToMilliseconds(job.ready_at()) - now_;
    EXPECT_GE(wait, base * 8 / 10) << "base " << base;
    EXPECT_LE(wait, base * 12 / 10) << "base " << base;
    Advance(wait);
  }
}

// max_queued_total bounds READY + SCHEDULED jobs of every tenant together:
// past it an enqueue is refused (RESOURCE_EXHAUSTED) until a job leaves.
TEST_F(BrokerTest, TheBrokerWideQueueLimitRefusesPastIt) {
  config_.max_queued_total = 3;
  Reopen();
  Enqueue("a");
  Enqueue("b");
  Enqueue(SpecWithLease("c", 60'000));
  v1::EnqueueResult refused = EnqueueRefused("d");
  EXPECT_EQ(refused.code(),
            static_cast<int32_t>(StatusCode::kResourceExhausted));
  EXPECT_NE(refused.message().find("max_queued_total"), std::string::npos)
      << refused.message();
  ASSERT_EQ(Lease()->response.jobs_size(), 1);  // leased: no longer queued
  EXPECT_EQ(EnqueueRefused("d").code(), 0);
}

TEST_F(BrokerTest, LapsedLeasesAreRetriedThenDead) {
  v1::JobSpec spec = SpecWithLease("a", 1000);
  spec.set_max_attempts(2);
  *spec.mutable_retry()->mutable_initial_backoff() =
      TimeUtil::MillisecondsToDuration(100);
  uint64_t id = Enqueue(spec);
  auto first = Lease();
  uint64_t old_token = first->response.jobs(0).lease_token();
  Advance(1000);  // lapses: SCHEDULED with ~100 ms backoff
  EXPECT_EQ(Stats("a").scheduled(), 1u);
  Advance(200);   // due again
  auto second = Lease();
  ASSERT_EQ(second->response.jobs_size(), 1);
  EXPECT_EQ(second->response.jobs(0).job().attempts(), 2u);
  EXPECT_EQ(second->response.jobs(0).job().last_error(), "lease expired");
  EXPECT_EQ(CompleteCode(id, old_token),
            static_cast<int32_t>(StatusCode::kFailedPrecondition));
  Advance(1000);  // second lapse: attempts used up
  EXPECT_EQ(Stats("a").dead(), 1u);
  auto dead = store_->GetDead(id);
  ASSERT_TRUE(dead.ok() && dead->has_value());
  EXPECT_EQ((*dead)->attempts(), 2u);
  // Kept with the dead letter, so that filters need not read the job.
  EXPECT_EQ((*dead)->tenant(), "a");
  EXPECT_EQ((*dead)->pool(), "default");
}

// GetJob of a job that died after the service read the store (its dead
// letter not applied then) is answered DEAD, not NOT_FOUND ("finished",
// which a producer would take for success); the service then reads the
// letter, applied by the time the reply comes. A job that did finish is
// NOT_FOUND.
TEST_F(BrokerTest, GetJobOfAJobJustDeadSaysDead) {
  v1::JobSpec spec = SpecWithLease("a", 1000);
  spec.set_max_attempts(1);
  uint64_t id = Enqueue(spec);
  auto lease = Lease();
  ASSERT_EQ(lease->response.jobs_size(), 1);
  EXPECT_EQ(FailCode(id, lease->response.jobs(0).lease_token(),
                     /*retryable=*/false),
            0);
  v1::Job job;
  std::optional<Status> done = GetJob(id, &job);
  ASSERT_TRUE(done.has_value());
  EXPECT_TRUE(done->ok()) << done->ToString();
  EXPECT_EQ(job.state(), v1::JOB_STATE_DEAD);

  uint64_t other = Enqueue("a");
  auto second = Lease();
  ASSERT_EQ(second->response.jobs_size(), 1);
  EXPECT_EQ(CompleteCode(other, second->response.jobs(0).lease_token()), 0);
  v1::Job finished;
  done = GetJob(other, &finished);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->code(), StatusCode::kNotFound);
}

// A tenant stored by a build from before enqueue_rate had its floor, with
// a rate under it: the broker still restores (the check made fairqd refuse
// to start), with the rate raised to the floor and stored so.
TEST_F(BrokerTest, AStoredRateUnderTheFloorIsRaisedAtRestore) {
  Enqueue("t");  // creates tenant t
  auto stored = [&] {
    std::vector<v1::TenantRecord> found;
    EXPECT_TRUE(store_
                    ->ScanTenants([&](const v1::TenantRecord& record) {
                      if (record.config().name() == "t")
                        found.push_back(record);
                      return true;
                    })
                    .ok());
    return found;
  };
  std::vector<v1::TenantRecord> records = stored();
  ASSERT_EQ(records.size(), 1u);
  records[0].mutable_config()->mutable_quotas()->set_enqueue_rate(1e-5);
  std::vector<store::WriteBatch> batches;
  batches.push_back(store_->NewBatch());
  batches.back().PutTenant(records[0]);
  ASSERT_TRUE(store_->Commit(batches).ok());
  ASSERT_NO_FATAL_FAILURE(Reopen());
  v1::Tenant tenant;
  std::optional<Status> done;
  Command get =
      GetTenantCommand{"t", &tenant, [&](const Status& s) { done = s; }};
  Turn1(&get);
  ASSERT_TRUE(done.has_value() && done->ok());
  EXPECT_EQ(tenant.quotas().enqueue_rate(), config::kMinEnqueueRate);
  records = stored();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].config().quotas().enqueue_rate(),
            config::kMinEnqueueRate);
}

// A heartbeat that waited in the dispatcher's queue through a stall is
// handled in a turn that starts after its lease's deadline, before that
// turn's timers: it keeps the lease.
TEST_F(BrokerTest, AHeartbeatQueuedThroughAStallKeepsItsLease) {
  v1::JobSpec spec = SpecWithLease("a", 1000);
  uint64_t id = Enqueue(spec);
  auto lease = Lease();
  ASSERT_EQ(lease->response.jobs_size(), 1);
  uint64_t token = lease->response.jobs(0).lease_token();
  now_ += 1500;  // no turn in between
  EXPECT_EQ(Heartbeat(id, token).code(), StatusCode::kOk);
  Advance(900);  // within the extended lease
  EXPECT_EQ(Stats("a").leased(), 1u);
  EXPECT_EQ(CompleteCode(id, token), 0);
}

// A job that leaves its lease to the broker is restored with the default
// of the restart, which may be shorter than the one it was leased under;
// each heartbeat's answer says how long the lease now lasts, so the worker
// can beat often enough.
TEST_F(BrokerTest, AHeartbeatSaysHowLongTheLeaseNowLasts) {
  config_.default_lease_seconds = 30;
  uint64_t id = Enqueue("a");
  auto lease = Lease();
  ASSERT_EQ(lease->response.jobs_size(), 1);
  EXPECT_EQ(lease->response.jobs(0).lease_duration().seconds(), 30);
  uint64_t token = lease->response.jobs(0).lease_token();
  v1::HeartbeatResponse beat;
  ASSERT_EQ(Heartbeat(id, token, &beat).code(), StatusCode::kOk);
  EXPECT_EQ(beat.lease_duration().seconds(), 30);

  config_.default_lease_seconds = 5;
  Reopen();
  now_ += 1000;
  ASSERT_EQ(Heartbeat(id, token, &beat).code(), StatusCode::kOk);
  EXPECT_EQ(beat.lease_duration().seconds(), 5);
  EXPECT_EQ(TimeUtil::TimestampToMilliseconds(beat.deadline()), now_ + 5000);
}

// Heartbeats are not written, so a lease kept alive past its granted
// deadline is restored from that deadline, now passed. Its worker still
// beats at the pace of the grant's 30 s until an answer says 5 s, so the
// restored lease lasts the granted 30 s, not the new default.
TEST_F(BrokerTest, ARestoredLeaseLastsTheLengthItWasGrantedWith) {
  config_.default_lease_seconds = 30;
  uint64_t id = Enqueue("a");
  auto lease = Lease();
  ASSERT_EQ(lease->response.jobs_size(), 1);
  uint64_t token = lease->response.jobs(0).lease_token();
  now_ += 20'000;
  ASSERT_EQ(Heartbeat(id, token).code(), StatusCode::kOk);
  now_ += 20'000;  // past the written deadline
  config_.default_lease_seconds = 5;
  Reopen();
  Advance(29'000);
  EXPECT_EQ(Stats("a").leased(), 1u);
  v1::HeartbeatResponse beat;
  ASSERT_EQ(Heartbeat(id, token, &beat).code(), StatusCode::kOk);
  EXPECT_EQ(beat.lease_duration().seconds(), 5);
}

// A Lease that does not wait, handled in the turn in which a delayed job
// falls due, gets that job.
TEST_F(BrokerTest, ALeaseThatDoesNotWaitSeesJobsDueInItsTurn) {
  v1::JobSpec spec;
  spec.set_tenant("a");
  *spec.mutable_delay() = TimeUtil::MillisecondsToDuration(1000);
  uint64_t id = Enqueue(spec);
  now_ += 1000;  // no turn in between
  auto lease = Lease();
  ASSERT_EQ(lease->response.jobs_size(), 1);
  EXPECT_EQ(lease->response.jobs(0).job().id(), id);
}

// A requeue built from a dead letter read before another requeue revived
// (and finished) the job does nothing: no ghost job, no negative count.
TEST_F(BrokerTest, AStaleDeadLetterRequeueDoesNothing) {
  v1::JobSpec spec = SpecWithLease("a", 1000);
  spec.set_max_attempts(1);
  uint64_t id = Enqueue(spec);
  ASSERT_EQ(Lease()->response.jobs_size(), 1);
  Advance(1000);  // lapses with no attempt left: DEAD
  ASSERT_EQ(Stats("a").dead(), 1u);
  auto record = store_->GetJob(id);
  ASSERT_TRUE(record.ok() && record->has_value());
  auto requeue = [&] {
    v1::RequeueDeadLettersResponse response;
    Command command = RequeueDeadCommand{{**record}, &response,
                                         [](const Status&) {}};
    Turn1(&command);
    return response.requeued();
  };
  EXPECT_EQ(requeue(), 1u);
  auto lease = Lease();
  ASSERT_EQ(lease->response.jobs_size(), 1);
  EXPECT_EQ(CompleteCode(id, lease->response.jobs(0).lease_token()), 0);
  EXPECT_EQ(requeue(), 0u);  // read before the first requeue: stale now
  // The same by id, as RequeueDeadLetters{job_id} sends it: the job is no
  // longer a dead letter, which is NOT_FOUND (it answered OK, 0 requeued).
  v1::RequeueDeadLettersResponse by_id;
  std::optional<Status> done;
  Command command = RequeueDeadCommand{
      {**record}, &by_id, [&](const Status& s) { done = s; }, /*by_id=*/true};
  Turn1(&command);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->code(), StatusCode::kNotFound);
  EXPECT_EQ(Stats("a").dead(), 0u);
  EXPECT_EQ(Stats("a").ready(), 0u);
  EXPECT_EQ(Lease()->response.jobs_size(), 0);
}

TEST_F(BrokerTest, RestartKeepsEveryStateAndLeases) {
  uint64_t ready = Enqueue("a");
  uint64_t leased = Enqueue("a");
  v1::JobSpec later;
  later.set_tenant("a");
  *later.mutable_delay() = TimeUtil::MillisecondsToDuration(60'000);
  Enqueue(later);
  auto lease = Lease();
  ASSERT_EQ(lease->response.jobs(0).job().id(), ready);  // arrival order
  uint64_t token = lease->response.jobs(0).lease_token();
  Reopen();
  v1::TenantStats stats = Stats("a");
  EXPECT_EQ(stats.ready(), 1u);
  EXPECT_EQ(stats.leased(), 1u);
  EXPECT_EQ(stats.scheduled(), 1u);
  EXPECT_EQ(CompleteCode(ready, token), 0);  // the live worker finishes
  auto next = Lease();
  EXPECT_EQ(next->response.jobs(0).job().id(), leased);
  uint64_t fresh = Enqueue("a");
  EXPECT_GT(fresh, leased);  // ids are never reused after a restart
}

std::vector<uint64_t> StoredReadyJobs(const store::Store& store) {
  std::vector<uint64_t> ids;
  EXPECT_TRUE(store
                  .ScanReady([&](const store::ReadyKey&, const v1::ReadyEntry& e) {
                    ids.push_back(e.job_id());
                    return true;
                  })
                  .ok());
  return ids;
}

// Fresh jobs have no ready entry; a requeued one has, and after a restart it
// sits between them by ready time, as before.
TEST_F(BrokerTest, RestartKeepsTheOrderOfFreshAndRequeuedJobs) {
  uint64_t j1 = Enqueue("a");
  Advance(10);
  uint64_t j2 = Enqueue("a");
  Advance(10);
  auto lease = Lease();
  ASSERT_EQ(lease->response.jobs(0).job().id(), j1);
  Command undelivered = LeaseUndeliveredCommand{
      {{j1, lease->response.jobs(0).lease_token()}}};
  Turn1(&undelivered);  // j1 is READY again, behind j2
  Advance(10);
  uint64_t j3 = Enqueue("a");
  EXPECT_EQ(StoredReadyJobs(*store_), std::vector<uint64_t>{j1});
  Reopen();
  std::vector<uint64_t> order;
  for (int i = 0; i < 3; ++i) order.push_back(Lease()->response.jobs(0).job().id());
  EXPECT_EQ(order, (std::vector<uint64_t>{j2, j1, j3}));
  EXPECT_TRUE(StoredReadyJobs(*store_).empty());
}

// A reply built from a store read waits for the durable stage of its turn
// (after the fsync of everything applied before it), never the early one.
TEST_F(BrokerTest, ASyncBarrierRepliesOnlyAfterItsTurnIsDurable) {
  std::optional<Status> done;
  Command barrier = SyncBarrierCommand{NotFound("job: 7 is gone"),
                                       [&](const Status& s) { done = s; }};
  Turn turn(store_->NewBatch());
  broker_->Handle(barrier, now_, turn);
  EXPECT_FALSE(done);
  EXPECT_TRUE(turn.replies_before_sync.empty());
  ASSERT_EQ(turn.replies.size(), 1u);
  ASSERT_TRUE(Commit(turn).ok());
  ASSERT_TRUE(done);
  EXPECT_EQ(done->code(), StatusCode::kNotFound);
}

// A lease whose specs all came from the payload cache is answered before its
// batch is applied; one that must read a spec from the store waits for the
// apply (the read must see it) but not for the sync.
TEST_F(BrokerTest, ALeaseRepliesBeforeTheApplyUnlessItReadsTheStore) {
  uint64_t stored = Enqueue("a");
  Reopen();  // the payload cache starts empty: `stored` must be read
  uint64_t cached = Enqueue("a");
  for (uint64_t want : {stored, cached}) {
    Turn turn(store_->NewBatch());
    auto call = LeaseIn(turn);
    ASSERT_EQ(call->response.jobs_size(), 1);
    EXPECT_EQ(call->response.jobs(0).job().id(), want);
    EXPECT_EQ(turn.replies_before_apply.size(), want == cached ? 1u : 0u);
    EXPECT_EQ(turn.replies_before_sync.size(), want == stored ? 1u : 0u);
    std::vector<Reply> early = std::move(turn.replies_before_apply);
    for (Reply& reply : early) reply(Status::Ok());
    EXPECT_EQ(call->done.has_value(), want == cached);
    ASSERT_TRUE(Commit(turn).ok());
    ASSERT_TRUE(call->done && call->done->ok());
    EXPECT_EQ(call->response.jobs(0).job().spec().payload(), "payload-a");
  }
}

// After a restart no spec is cached. The first lease reads its job from
// the store and asks for the ids from it on to be read ahead; a lease of an
// id in that range asks for nothing more. Once the records read are cached,
// a lease is answered from them before its batch is applied, and keeps the
// read-ahead a range ahead.
TEST_F(BrokerTest, ALeaseThatReadsTheStoreStartsAReadAheadForTheNext) {
  std::vector<uint64_t> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(Enqueue("a"));
  Reopen();
  ASSERT_EQ(Lease()->response.jobs(0).job().id(), ids[0]);
  std::vector<IdRange> asked = broker_->TakeReadAheadRequests();
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].begin, ids[0]);
  EXPECT_EQ(asked[0].end, ids[0] + ReadAheadPlanner::kSpan);
  ASSERT_EQ(Lease()->response.jobs(0).job().id(), ids[1]);
  EXPECT_TRUE(broker_->TakeReadAheadRequests().empty());

  EXPECT_EQ(ReadAhead(asked[0].begin, asked[0].end), 4u);
  Turn turn(store_->NewBatch());
  auto call = LeaseIn(turn);
  ASSERT_EQ(call->response.jobs_size(), 1);
  EXPECT_EQ(call->response.jobs(0).job().id(), ids[2]);
  EXPECT_EQ(turn.replies_before_apply.size(), 1u);
  const v1::Job received = AsReceived(call->response).jobs(0).job();
  EXPECT_EQ(received.spec().payload(), "payload-a");
  EXPECT_EQ(received.spec().tenant(), "a");
  EXPECT_TRUE(received.has_enqueued_at());
  std::vector<IdRange> next = broker_->TakeReadAheadRequests();
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].begin, asked[0].end);
  EXPECT_EQ(next[0].end, asked[0].end + ReadAheadPlanner::kSpan);
  ASSERT_TRUE(Commit(turn).ok());
}

// A job READY again after a failed attempt has a ready entry: a crash that
// forgot its lease would not let its worker adopt it (broker_restore.cc),
// so its lease is never answered before the apply, read ahead or not.
TEST_F(BrokerTest, ARetriedJobIsNotLeasedFromTheReadAhead) {
  uint64_t id = Enqueue("a");
  auto first = Lease();
  ASSERT_EQ(first->response.jobs_size(), 1);
  EXPECT_EQ(FailCode(id, first->response.jobs(0).lease_token()), 0);
  Advance(10'000);  // past the 1 s retry backoff
  ASSERT_EQ(ReadAhead(id, id + 1), 1u);
  ExpectLeasedAfterItsWrite(id);
}

// Jobs leased moments after their enqueue find their specs cached then:
// no read-ahead.
TEST_F(BrokerTest, LeasesOfJobsCachedAtEnqueueReadNothingAhead) {
  Enqueue("a");
  Enqueue("b");
  EXPECT_EQ(Lease(0, 2)->response.jobs_size(), 2);
  EXPECT_TRUE(broker_->TakeReadAheadRequests().empty());
}

// With more than 16,384 jobs READY (half the payload cache at 100-byte
// payloads), a new job's spec is not cached at enqueue, as it would not
// stay cached until its turn. Each job here is leased at once (its priority
// is higher): the one enqueued with 16,384 READY comes from the cache, the
// one enqueued with 16,386 from the store.
TEST_F(BrokerTest, WithADeepBacklogNewJobsAreNotCachedAtEnqueue) {
  v1::JobSpec low;
  low.set_tenant("a");
  low.set_payload("low");
  auto fill = [&](size_t jobs) {
    v1::EnqueueBatchResponse response;
    std::optional<Status> done;
    Command command =
        EnqueueCommand{std::vector<const v1::JobSpec*>(jobs, &low), &response,
                       [&](const Status& s) { done = s; }};
    Turn1(&command);
    ASSERT_TRUE(done && done->ok());
  };
  v1::JobSpec high = low;
  high.set_priority(10);
  fill(16'383);
  for (size_t more : {0, 2}) {
    if (more > 0) fill(more);
    high.set_payload("high " + std::to_string(more));
    uint64_t id = Enqueue(high);
    Turn turn(store_->NewBatch());
    auto call = LeaseIn(turn);
    ASSERT_EQ(call->response.jobs_size(), 1);
    EXPECT_EQ(call->response.jobs(0).job().id(), id);
    EXPECT_EQ(turn.replies_before_apply.empty(), more == 2) << more;
    ASSERT_TRUE(Commit(turn).ok());
    EXPECT_EQ(call->response.jobs(0).job().spec().payload(), high.payload());
  }
}

// Leases answered before their batch was applied, then a process crash:
// the store never saw them, but their workers hold them. A worker's first
// report after the restart (Heartbeat, Complete, Fail or Release) adopts
// its lease instead of running the job a second time.
TEST_F(BrokerTest, ALeaseLostBeforeItsWriteIsAdoptedByItsWorkerAfterARestart) {
  const auto stale = static_cast<int32_t>(StatusCode::kFailedPrecondition);
  std::vector<uint64_t> ids;
  std::vector<uint64_t> tokens;
  for (int i = 0; i < 5; ++i) ids.push_back(Enqueue("a"));
  for (int i = 0; i < 5; ++i) {
    v1::LeaseResponse answered = LeaseNotWritten();
    ASSERT_EQ(answered.jobs_size(), 1);
    tokens.push_back(answered.jobs(0).lease_token());
  }
  Reopen();
  EXPECT_EQ(Stats("a").ready(), 5u);

  EXPECT_EQ(CompleteCode(ids[0], tokens[0]), 0);
  EXPECT_EQ(Heartbeat(ids[1], tokens[1]).code(), StatusCode::kOk);
  EXPECT_EQ(Stats("a").leased(), 1u);
  EXPECT_EQ(CompleteCode(ids[1], tokens[1]), 0);  // now a lease like others
  EXPECT_EQ(FailCode(ids[2], tokens[2]), 0);
  EXPECT_EQ(Stats("a").scheduled(), 1u);  // a retry, after its backoff
  EXPECT_EQ(ReleaseCode(ids[4], tokens[4]), 0);  // READY, behind ids[3]
  EXPECT_EQ(ReleaseCode(ids[4], tokens[4]), 0);  // a repeat
  EXPECT_EQ(Stats("a").ready(), 2u);
  // Leased again after the restart: the old token is stale, as always.
  auto again = Lease();
  ASSERT_EQ(again->response.jobs_size(), 1);
  EXPECT_EQ(again->response.jobs(0).job().id(), ids[3]);
  EXPECT_EQ(again->response.jobs(0).job().attempts(), 1u);
  EXPECT_EQ(CompleteCode(ids[3], tokens[3]), stale);
  // Back in its queue, the job is no longer one the crash may have left
  // leased: a report for it is refused.
  Command undelivered = LeaseUndeliveredCommand{
      {{ids[3], again->response.jobs(0).lease_token()}}};
  Turn1(&undelivered);
  EXPECT_EQ(CompleteCode(ids[3], tokens[3]), stale);
  // Nor is a job enqueued since the restart.
  EXPECT_EQ(CompleteCode(Enqueue("a"), 7), stale);
  // The released job, after another restart: not adoptable (it has an
  // entry of its own), and its released attempt still not counted.
  Reopen();
  EXPECT_EQ(ReleaseCode(ids[4], tokens[4]), stale);
  auto all = Lease(/*wait_ms=*/0, /*max_jobs=*/3);
  ASSERT_EQ(all->response.jobs_size(), 3);
  auto released = std::find_if(
      all->response.jobs().begin(), all->response.jobs().end(),
      [&](const v1::LeasedJob& job) { return job.job().id() == ids[4]; });
  ASSERT_NE(released, all->response.jobs().end());
  EXPECT_EQ(released->job().attempts(), 1u);
}

// What cannot have a lease lost that way is not adopted: a job requeued
// with an entry of its own (its lease was written), and any job once a
// lease duration has passed since the restart (a lost lease has lapsed by
// then).
TEST_F(BrokerTest, OnlyJobsThatCanHaveALostLeaseAreAdopted) {
  const auto stale = static_cast<int32_t>(StatusCode::kFailedPrecondition);
  uint64_t requeued = Enqueue("a");
  auto first = Lease();
  Command undelivered = LeaseUndeliveredCommand{
      {{requeued, first->response.jobs(0).lease_token()}}};
  Turn1(&undelivered);
  uint64_t late = Enqueue("a");
  Reopen();
  EXPECT_EQ(CompleteCode(requeued, 7), stale);
  Advance(config_.default_lease_seconds * 1000 + 1);
  EXPECT_EQ(CompleteCode(late, 7), stale);
}

// A job read ahead while it could still be adopted, then adopted: its
// attempt's lease is now written, so a crash would bring it back with a
// ready entry, never adoptable again. Its next lease must not go out before
// the write, so the spec read ahead is dropped at the adoption.
TEST_F(BrokerTest, AnAdoptedJobsNextLeaseIsNotAnsweredBeforeItsWrite) {
  uint64_t id = Enqueue("a");
  v1::LeaseResponse lost = LeaseNotWritten();
  ASSERT_EQ(lost.jobs_size(), 1);
  Reopen();
  ASSERT_EQ(ReadAhead(id, id + 1), 1u);
  EXPECT_EQ(FailCode(id, lost.jobs(0).lease_token()), 0);  // adopts, retries
  Advance(10'000);  // past the 1 s retry backoff
  ExpectLeasedAfterItsWrite(id);
}

// A worker whose every slot runs a long job calls Lease no more, but its
// slots are still the pool's: a share cap is taken of them. Four workers of
// one slot; "a" may hold half. w1 and w2 run its jobs for a minute while w3
// and w4 keep polling. When w1 finishes and asks again, "a" may still hold
// two: w1 gets the next job.
TEST_F(BrokerTest, ABusyWorkersSlotsStayInItsPoolsCapacity) {
  v1::Tenant capped = config::DefaultTenantSettings();
  capped.set_name("a");
  capped.mutable_cap()->set_share(0.5);
  capped.set_cap_mode(v1::CAP_MODE_HARD);
  config_.tenants = {capped};
  config_.worker_liveness_seconds = 30;
  Reopen();
  auto lease_as = [&](const std::string& worker) {
    auto call = NewLeaseCall();
    call->request.set_worker_id(worker);
    call->request.set_slots(1);
    Command command = LeaseCommandFor(call.get());
    Turn1(&command);
    return call;
  };
  for (const char* worker : {"w1", "w2", "w3", "w4"}) {
    EXPECT_EQ(lease_as(worker)->response.jobs_size(), 0);
  }
  std::vector<uint64_t> ids;
  for (int i = 0; i < 4; ++i)
    ids.push_back(Enqueue(SpecWithLease("a", 100'000)));
  auto first = lease_as("w1");
  ASSERT_EQ(first->response.jobs_size(), 1);
  ASSERT_EQ(lease_as("w2")->response.jobs_size(), 1);
  EXPECT_EQ(lease_as("w3")->response.jobs_size(), 0);  // "a" holds 2 of 4
  for (int64_t at : {20'000, 20'000, 21'000}) {        // to t = 61 s
    Advance(at);
    EXPECT_EQ(lease_as("w3")->response.jobs_size(), 0);
    EXPECT_EQ(lease_as("w4")->response.jobs_size(), 0);
  }
  ASSERT_EQ(CompleteCode(first->response.jobs(0).job().id(),
                         first->response.jobs(0).lease_token()),
            0);
  EXPECT_EQ(lease_as("w1")->response.jobs_size(), 1);
}

// A worker waiting in a long poll is there: it counts until its wait ends
// and a window after, so an idle worker that polls again as its wait ends
// never drops out of the capacity.
TEST_F(BrokerTest, ALeaseCallCountsUntilItsWaitEnds) {
  config_.worker_liveness_seconds = 30;
  Reopen();
  auto waiting = Lease(30'000);
  EXPECT_FALSE(waiting->done.has_value());
  Advance(30'000);  // the wait ends with no job
  ASSERT_TRUE(waiting->done.has_value());
  EXPECT_EQ(LiveSlots(), 8u);
  Advance(29'999);
  EXPECT_EQ(LiveSlots(), 8u);
  Advance(1);
  EXPECT_EQ(LiveSlots(), 0u);
}

// Every way a lease ends gives its worker back to the liveness window: a
// worker whose leases all ended, one way or another, leaves its pool's
// capacity a window after the last. Leases restored by a restart count
// against the worker they name.
TEST_F(BrokerTest, EveryWayALeaseEndsReleasesItsWorker) {
  std::vector<uint64_t> ids;
  for (int i = 0; i < 5; ++i)
    ids.push_back(Enqueue(SpecWithLease("a", 60'000)));
  ids.push_back(Enqueue(SpecWithLease("a", 1'000)));  // leased last
  auto leased = Lease(0, 6);
  ASSERT_EQ(leased->response.jobs_size(), 6);
  auto token = [&](int i) { return leased->response.jobs(i).lease_token(); };
  Reopen();  // restores the six leases, w1's; w1 has not polled since
  EXPECT_EQ(LiveSlots(), 0u);
  EXPECT_EQ(Lease()->response.jobs_size(), 0);  // w1 polls: all are leased
  EXPECT_EQ(LiveSlots(), 8u);
  EXPECT_EQ(CompleteCode(ids[0], token(0)), 0);
  EXPECT_EQ(FailCode(ids[1], token(1)), 0);
  EXPECT_EQ(FailCode(ids[2], token(2), false), 0);
  Command undelivered = LeaseUndeliveredCommand{{{ids[3], token(3)}}};
  Turn1(&undelivered);
  Advance(40'000);  // job 5's restored lease lapses; job 4's is held
  EXPECT_EQ(LiveSlots(), 8u);
  EXPECT_EQ(CompleteCode(ids[4], token(4)), 0);
  Advance(29'999);
  EXPECT_EQ(LiveSlots(), 8u);
  Advance(1);
  EXPECT_EQ(LiveSlots(), 0u);
}

TEST_F(BrokerTest, UndeliveredLeaseReturnsAtOnceWithoutUsingAnAttempt) {
  uint64_t id = Enqueue("a");
  auto lease = Lease();
  Command undelivered = LeaseUndeliveredCommand{
      {{id, lease->response.jobs(0).lease_token()}}};
  Turn1(&undelivered);
  auto again = Lease();
  ASSERT_EQ(again->response.jobs_size(), 1);
  EXPECT_EQ(again->response.jobs(0).job().attempts(), 1u);
}

// A worker gives back a job it never started: READY at once, its attempt
// not counted (so a job on its last attempt is not sent DEAD), through a
// restart too. A repeat is answered OK; the released token is stale.
TEST_F(BrokerTest, AReleasedJobIsReadyAtOnceWithoutUsingAnAttempt) {
  constexpr auto kNotFound = static_cast<int32_t>(StatusCode::kNotFound);
  constexpr auto kStale = static_cast<int32_t>(StatusCode::kFailedPrecondition);
  v1::JobSpec spec;
  spec.set_tenant("a");
  spec.set_max_attempts(1);
  uint64_t id = Enqueue(spec);
  for (int round = 0; round < 2; ++round) {
    auto lease = Lease();
    ASSERT_EQ(lease->response.jobs_size(), 1) << "round " << round;
    EXPECT_EQ(lease->response.jobs(0).job().attempts(), 1u);
    uint64_t token = lease->response.jobs(0).lease_token();
    EXPECT_EQ(ReleaseCode(id, token), 0);
    EXPECT_EQ(ReleaseCode(id, token), 0);  // a repeat
    EXPECT_EQ(CompleteCode(id, token), kStale);
    EXPECT_EQ(Stats("a").ready(), 1u);
    EXPECT_EQ(Stats("a").leased(), 0u);
    Reopen();
  }
  EXPECT_EQ(ReleaseCode(id, 12345), kStale);
  EXPECT_EQ(ReleaseCode(id + 100, 12345), kNotFound);
  auto last = Lease();
  ASSERT_EQ(last->response.jobs_size(), 1);
  EXPECT_EQ(CompleteCode(id, last->response.jobs(0).lease_token()), 0);
  EXPECT_EQ(Stats("a").dead(), 0u);
}

// A Lease answered with an error (its jobs' specs could not be read): the
// attempt counts, and the job is retried after a backoff, so that a job
// whose record cannot be read goes DEAD in the end instead of being handed
// out again at once, forever.
TEST_F(BrokerTest, ALeaseWhoseAnswerFailedIsAFailedAttempt) {
  v1::JobSpec spec;
  spec.set_tenant("a");
  spec.set_max_attempts(2);
  uint64_t id = Enqueue(spec);
  for (uint32_t attempt = 1; attempt <= 2; ++attempt) {
    auto lease = Lease();
    ASSERT_EQ(lease->response.jobs_size(), 1) << "attempt " << attempt;
    Command failed = LeaseUndeliveredCommand{
        {{id, lease->response.jobs(0).lease_token()}}, /*failed=*/true};
    Turn1(&failed);
    if (attempt == 1) {
      EXPECT_EQ(Stats("a").scheduled(), 1u);  // not READY at once
      Advance(10'000);                        // past the retry's backoff
    }
  }
  EXPECT_EQ(Stats("a").dead(), 1u);
}

TEST_F(BrokerTest, IdempotencyKeyReturnsTheFirstJob) {
  v1::JobSpec spec;
  spec.set_tenant("a");
  spec.set_idempotency_key("k1");
  uint64_t first = Enqueue(spec);
  v1::EnqueueBatchResponse response;
  Command again = EnqueueCommand{{&spec}, &response, [](const Status&) {}};
  Turn1(&again);
  EXPECT_EQ(response.results(0).job_id(), first);
  EXPECT_TRUE(response.results(0).duplicate());
  Reopen();  // the window survives a restart
  v1::EnqueueBatchResponse after;
  Command third = EnqueueCommand{{&spec}, &after, [](const Status&) {}};
  Turn1(&third);
  EXPECT_EQ(after.results(0).job_id(), first);
}

// A key names its job for idempotency_window_seconds from its enqueue, not
// after: then the same key makes a new job, and a restart keeps the new one.
TEST_F(BrokerTest, IdempotencyKeyExpiresAfterItsWindow) {
  config_.idempotency_window_seconds = 60;
  Reopen();
  v1::JobSpec spec;
  spec.set_tenant("a");
  spec.set_idempotency_key("k1");
  uint64_t first = Enqueue(spec);
  Advance(59'999);
  v1::EnqueueResult inside = EnqueueResultOf(spec);
  EXPECT_EQ(inside.job_id(), first);
  EXPECT_TRUE(inside.duplicate());
  Advance(1);  // 60 s after the first enqueue
  v1::EnqueueResult after = EnqueueResultOf(spec);
  EXPECT_NE(after.job_id(), first);
  EXPECT_FALSE(after.duplicate());
  Reopen();
  v1::EnqueueResult restarted = EnqueueResultOf(spec);
  EXPECT_EQ(restarted.job_id(), after.job_id());
  EXPECT_TRUE(restarted.duplicate());
}

TEST_F(BrokerTest, BacklogQuotaRejectsWithARetryHint) {
  v1::Tenant tenant = config_.tenant_defaults.settings;
  tenant.set_name("a");
  tenant.mutable_quotas()->set_max_queued(2);
  v1::Tenant out;
  Command set = SetTenantCommand{&tenant, &out, [](const Status&) {}};
  Turn1(&set);
  Enqueue("a");
  Enqueue("a");
  v1::EnqueueResult third = EnqueueRefused("a");
  EXPECT_EQ(third.code(), static_cast<int32_t>(StatusCode::kResourceExhausted));
  EXPECT_GT(TimeUtil::DurationToMilliseconds(third.retry_after()), 0);
}

// SetTenant with an update mask changes the named settings of the tenant
// as the broker holds it, in one command, and checks the result whole.
TEST_F(BrokerTest, AMaskedSetTenantChangesOnlyWhatItNames) {
  config_.tenant_defaults.settings.set_weight(4);
  config_.tenant_defaults.settings.mutable_quotas()->set_max_queued(50);
  Reopen();
  auto set = [&](const v1::Tenant& tenant,
                 const google::protobuf::FieldMask* mask, v1::Tenant* out) {
    std::optional<Status> done;
    Command command =
        SetTenantCommand{.tenant = &tenant,
                         .response = out,
                         .done = [&](const Status& s) { done = s; },
                         .mask = mask};
    Turn1(&command);
    return done.value_or(Internal("no reply"));
  };
  v1::Tenant full;
  full.set_name("a");
  full.set_weight(3);
  full.mutable_cap()->set_slots(4);
  v1::Tenant out;
  ASSERT_TRUE(set(full, nullptr, &out).ok());

  v1::Tenant change;
  change.set_name("a");
  change.set_weight(5);
  change.mutable_floor()->set_slots(6);  // not named: ignored
  google::protobuf::FieldMask weight;
  weight.add_paths("weight");
  ASSERT_TRUE(set(change, &weight, &out).ok());
  EXPECT_EQ(out.weight(), 5);
  EXPECT_EQ(out.cap().slots(), 4u);
  EXPECT_FALSE(out.has_floor());

  // A floor of 6 under the held cap of 4 is refused, and nothing changes.
  google::protobuf::FieldMask floor;
  floor.add_paths("floor");
  Status refused = set(change, &floor, &out);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("floor"), std::string::npos)
      << refused.message();
  ASSERT_TRUE(set(change, &weight, &out).ok());  // reads back what is held
  EXPECT_FALSE(out.has_floor());

  // Without a mask the same request replaces everything: the cap goes.
  change.clear_floor();
  ASSERT_TRUE(set(change, nullptr, &out).ok());
  EXPECT_FALSE(out.has_cap());

  // An empty mask leaves a known tenant as it is, and gives a new one the
  // config's tenant_defaults, as auto-creation does.
  google::protobuf::FieldMask none;
  ASSERT_TRUE(set(full, &none, &out).ok());
  EXPECT_EQ(out.weight(), 5);
  EXPECT_FALSE(out.has_cap());
  v1::Tenant fresh;
  fresh.set_name("b");
  fresh.set_weight(9);
  ASSERT_TRUE(set(fresh, &none, &out).ok());
  EXPECT_EQ(out.name(), "b");
  EXPECT_EQ(out.weight(), 4);
  EXPECT_EQ(out.quotas().max_queued(), 50u);
}

TEST_F(BrokerTest, AFailedWriteIsNeverAcknowledgedAndLaterWritesAreRefused) {
  store::FaultInjectionEnv disk;
  env_ = disk.env();
  Reopen();
  uint64_t kept = Enqueue("a");
  disk.FailAppends(true);  // the disk is full
  v1::JobSpec spec;
  spec.set_tenant("a");
  v1::EnqueueBatchResponse lost_response;
  std::optional<Status> lost;
  Command enqueue = EnqueueCommand{{&spec}, &lost_response,
                                   [&](const Status& s) { lost = s; }};
  Turn1(&enqueue);
  ASSERT_TRUE(lost.has_value());
  EXPECT_EQ(lost->code(), StatusCode::kUnavailable) << lost->ToString();
  disk.FailAppends(false);  // room again, but the store stays failed
  v1::EnqueueBatchResponse refused_response;
  std::optional<Status> refused;
  Command again = EnqueueCommand{{&spec}, &refused_response,
                                 [&](const Status& s) { refused = s; }};
  Turn1(&again);
  EXPECT_EQ(refused->code(), StatusCode::kUnavailable);
  EXPECT_NE(refused->message().find("failed state"), std::string::npos);
  EXPECT_EQ(Stats("a").ready(), 2u);  // reads still answer (memory ran ahead)
  env_ = nullptr;
  Reopen();  // what an operator's restart finds: only the acknowledged job
  EXPECT_EQ(Stats("a").ready(), 1u);
  auto lease = Lease();
  EXPECT_EQ(lease->response.jobs(0).job().id(), kept);
}

// A reply's jobs are bounded by what they could weigh: 256 MiB over the
// largest spec the limits allow (64 MiB payloads: 3 jobs, not 8).
TEST_F(BrokerTest, ALeaseReplyHoldsNoMoreThanItsByteBoundAllows) {
  config_.max_payload_bytes = 64u << 20;
  Reopen();
  for (int i = 0; i < 8; ++i) Enqueue("a");
  auto lease = Lease(0, /*max_jobs=*/8);
  EXPECT_EQ(lease->response.jobs_size(), 3);
  EXPECT_EQ(Lease(0, /*max_jobs=*/8)->response.jobs_size(), 3);
}

// Auto-creation and SetTenant stop at max_tenants and max_pools with
// RESOURCE_EXHAUSTED; what exists goes on, an enqueue refused for its pool
// makes no tenant, the config file's tenants are made whatever the limit,
// and a restart loads everything even under a lower limit.
TEST_F(BrokerTest, TenantsAndPoolsStopAtTheirLimits) {
  config_.max_tenants = 3;
  config_.max_pools = 2;  // "default" and one more
  Reopen();
  Enqueue("a");
  Enqueue("b");
  auto gpu = Lease(0, 1, {"gpu"});
  ASSERT_TRUE(gpu->done && gpu->done->ok());
  auto cpu = Lease(0, 1, {"cpu"});
  ASSERT_TRUE(cpu->done.has_value());
  EXPECT_EQ(cpu->done->code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(cpu->done->message(),
            "max_pools: the broker holds 2 pools; pool \"cpu\" is not created");
  v1::EnqueueResult in_cpu = EnqueueRefused("c", "cpu");
  EXPECT_EQ(in_cpu.code(),
            static_cast<int32_t>(StatusCode::kResourceExhausted));
  Enqueue("d");  // the third tenant: "c" was not made
  v1::EnqueueResult fourth = EnqueueRefused("e");
  EXPECT_EQ(fourth.code(),
            static_cast<int32_t>(StatusCode::kResourceExhausted));
  EXPECT_EQ(fourth.message(),
            "max_tenants: the broker holds 3 tenants; tenant \"e\" is not "
            "created");
  v1::Tenant f;
  f.set_name("f");
  v1::Tenant out;
  std::optional<Status> set;
  Command set_f = SetTenantCommand{&f, &out, [&](const Status& s) { set = s; }};
  Turn1(&set_f);
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(set->code(), StatusCode::kResourceExhausted);
  v1::Tenant a;
  a.set_name("a");
  a.set_weight(3);
  Command set_a = SetTenantCommand{&a, &out, [&](const Status& s) { set = s; }};
  Turn1(&set_a);
  EXPECT_TRUE(set->ok()) << set->ToString();  // changing one is not making one
  Command reload = SetTenantCommand{&f, &out, [&](const Status& s) { set = s; },
                                    /*from_config=*/true};
  set.reset();
  Turn1(&reload);
  ASSERT_TRUE(set.has_value());
  EXPECT_TRUE(set->ok()) << set->ToString();
  config_.max_tenants = 1;
  Reopen();
  EXPECT_EQ(Stats("a").ready() + Stats("b").ready() + Stats("d").ready(), 3u);
  EXPECT_EQ(Lease(0, 3)->response.jobs_size(), 3);
}

TEST_F(BrokerTest, FloodDoesNotStarveATrickle) {
  for (int i = 0; i < 200; ++i) Enqueue("flood");
  uint64_t trickle = Enqueue("trickle");
  auto lease = Lease(0, /*max_jobs=*/2);
  ASSERT_EQ(lease->response.jobs_size(), 2);
  EXPECT_EQ(lease->response.jobs(1).job().id(), trickle);  // second, not 201st
}

}  // namespace
}  // namespace fairq::server
