// The Admin service against a real fairqd: tenant settings (and that they
// survive a restart), queue statistics, purge, dead letters, admission
// quotas, and the standard gRPC health service.
#include <gmock/gmock.h>
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "google/protobuf/util/message_differencer.h"
#include "tests/integration/client_util.h"
#include "tests/integration/daemon_client_test.h"
#include "tests/integration/fairqd_process.h"

namespace fairq::testing {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

class AdminTest : public DaemonClientTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.Start()) << daemon_.error();
    Connect(daemon_);
  }

  v1::LeasedJob MustLease(const std::vector<std::string>& pools = {}) {
    v1::LeaseResponse response;
    grpc::Status status =
        Lease(*worker_, LeaseReq("w1", 5000, 1, pools), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.jobs_size(), 1);
    return response.jobs_size() > 0 ? response.jobs(0) : v1::LeasedJob();
  }

  // Leases one job of `tenant` (the only one with work) and kills it.
  uint64_t MakeDeadLetter(const std::string& tenant) {
    uint64_t id = MustEnqueue(Spec(tenant, "dead of " + tenant));
    v1::LeasedJob leased = MustLease();
    EXPECT_EQ(leased.job().id(), id);
    v1::AckResult result;
    EXPECT_TRUE(
        Fail(*worker_, id, leased.lease_token(), "fatal", false, &result).ok());
    EXPECT_EQ(result.code(), grpc::StatusCode::OK);
    return id;
  }

  // Makes `count` dead letters of `tenant` at once, each with `error`, and
  // returns their ids, oldest first.
  std::vector<uint64_t> MakeDeadLetters(const std::string& tenant, int count,
                                        const std::string& error) {
    std::vector<uint64_t> ids;
    for (int from = 0; from < count; from += 1000) {
      int n = std::min(count - from, 1000);
      v1::EnqueueBatchResponse enqueued;
      EXPECT_TRUE(EnqueueBatch(*producer_,
                               std::vector<v1::JobSpec>(n, Spec(tenant, "x")),
                               &enqueued)
                      .ok());
      // A reply holds at most 237 jobs (docs/api.md): lease until all came.
      for (int leased_n = 0; leased_n < n;) {
        v1::LeaseResponse leased;
        EXPECT_TRUE(Lease(*worker_, LeaseReq("w1", 5000, n), &leased).ok());
        if (leased.jobs_size() == 0) break;
        leased_n += leased.jobs_size();
        FailAll(leased, error, ids);
      }
    }
    EXPECT_EQ(ids.size(), static_cast<size_t>(count));
    return ids;
  }

  // Fails each of `leased`'s jobs for good with `error`; appends their ids.
  void FailAll(const v1::LeaseResponse& leased, const std::string& error,
               std::vector<uint64_t>& ids) {
    v1::FailRequest fail;
    for (const v1::LeasedJob& job : leased.jobs()) {
      ids.push_back(job.job().id());
      v1::Failure* failure = fail.add_failures();
      failure->set_job_id(job.job().id());
      failure->set_lease_token(job.lease_token());
      failure->set_error(error);
    }
    v1::AckResponse acked;
    EXPECT_TRUE(Call(*worker_, &v1::Worker::Stub::Fail, fail, &acked).ok());
  }

  // One RequeueDeadLetters call for `tenant`'s dead letters in `pool`.
  v1::RequeueDeadLettersResponse RequeueDeadOf(const std::string& tenant,
                                               const std::string& pool = "",
                                               uint64_t after_job_id = 0) {
    v1::RequeueDeadLettersRequest request;
    request.mutable_filter()->set_tenant(tenant);
    request.mutable_filter()->set_pool(pool);
    request.mutable_filter()->set_after_job_id(after_job_id);
    v1::RequeueDeadLettersResponse response;
    grpc::Status status =
        Call(*admin_, &v1::Admin::Stub::RequeueDeadLetters, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  v1::Tenant SetTenant(const v1::Tenant& tenant) {
    v1::SetTenantRequest request;
    *request.mutable_tenant() = tenant;
    v1::Tenant response;
    grpc::Status status =
        Call(*admin_, &v1::Admin::Stub::SetTenant, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  grpc::Status GetTenant(const std::string& name, v1::Tenant* tenant) {
    v1::GetTenantRequest request;
    request.set_name(name);
    return Call(*admin_, &v1::Admin::Stub::GetTenant, request, tenant);
  }

  // The stats of `tenant` in `pool`; a default message when there are none.
  v1::TenantStats StatsOf(const std::string& tenant,
                          const std::string& pool = "default") {
    v1::GetQueueStatsRequest request;
    request.set_tenant(tenant);
    request.set_pool(pool);
    v1::GetQueueStatsResponse response;
    grpc::Status status =
        Call(*admin_, &v1::Admin::Stub::GetQueueStats, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_LE(response.tenants_size(), 1);
    return response.tenants_size() == 1 ? response.tenants(0)
                                        : v1::TenantStats();
  }

  std::vector<uint64_t> DeadLetterIds(const std::string& tenant) {
    v1::ListDeadLettersRequest request;
    request.set_tenant(tenant);
    v1::ListDeadLettersResponse response;
    grpc::Status status =
        Call(*admin_, &v1::Admin::Stub::ListDeadLetters, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::vector<uint64_t> ids;
    for (const v1::Job& job : response.jobs()) ids.push_back(job.id());
    return ids;
  }

  FairqdProcess daemon_;
};

TEST_F(AdminTest, TenantSettingsPersistAcrossARestart) {
  v1::Tenant acme;
  acme.set_name("acme");
  acme.set_org("corp");
  acme.set_weight(2.5);
  acme.mutable_cap()->set_slots(3);
  acme.set_cap_mode(v1::CAP_MODE_HARD);
  acme.mutable_floor()->set_slots(1);
  acme.mutable_quotas()->set_max_queued(100);
  acme.mutable_quotas()->set_enqueue_rate(50);
  acme.mutable_quotas()->set_enqueue_burst(80);
  v1::Tenant set = SetTenant(acme);
  EXPECT_TRUE(MessageDifferencer::Equals(set, acme)) << set.DebugString();

  v1::Tenant beta;
  beta.set_name("beta");
  beta.mutable_cap()->set_share(0.5);
  v1::Tenant set_beta = SetTenant(beta);  // weight 0 on input means 1
  EXPECT_EQ(set_beta.weight(), 1.0);

  v1::PauseTenantRequest pause;
  pause.set_name("beta");
  v1::Tenant paused;
  ASSERT_TRUE(
      Call(*admin_, &v1::Admin::Stub::PauseTenant, pause, &paused).ok());
  EXPECT_TRUE(paused.paused());
  // SetTenant leaves the paused flag to Pause/Resume.
  EXPECT_TRUE(SetTenant(beta).paused());
  // A tenant created by its first job appears too.
  MustEnqueue(Spec("auto"));

  auto expect_state = [&](const char* when) {
    SCOPED_TRACE(when);
    v1::Tenant got;
    ASSERT_TRUE(GetTenant("acme", &got).ok());
    EXPECT_TRUE(MessageDifferencer::Equals(got, acme)) << got.DebugString();
    ASSERT_TRUE(GetTenant("beta", &got).ok());
    EXPECT_TRUE(got.paused());
    EXPECT_EQ(got.cap().share(), 0.5);
    EXPECT_EQ(got.weight(), 1.0);
    v1::ListTenantsResponse list;
    ASSERT_TRUE(Call(*admin_, &v1::Admin::Stub::ListTenants,
                     v1::ListTenantsRequest(), &list)
                    .ok());
    std::vector<std::string> names;
    for (const v1::Tenant& tenant : list.tenants())
      names.push_back(tenant.name());
    EXPECT_THAT(names, ::testing::ElementsAre("acme", "auto", "beta"));
    EXPECT_EQ(GetTenant("nobody", &got).error_code(),
              grpc::StatusCode::NOT_FOUND);
  };
  expect_state("before the restart");
  // Close the connection first: fairqd gives connected clients up to 5 s to
  // leave after its GOAWAY before it exits, which would only slow the test.
  producer_.reset();
  worker_.reset();
  admin_.reset();
  ASSERT_EQ(daemon_.Terminate(), 0) << daemon_.Log();
  ASSERT_TRUE(daemon_.Start()) << daemon_.error();
  Connect(daemon_);
  expect_state("after the restart");
}

// A masked SetTenant takes only the fields it names; the tenant they make
// is what is checked. Operator A read cap 4, B raised it to 10, A sets a
// floor of 6 on top of the cap A read: taken (it was refused as "floor
// exceeds cap 4"). A floor over the cap in force is still refused.
TEST_F(AdminTest, AMaskedSetTenantIsCheckedAfterTheMerge) {
  v1::Tenant raised;
  raised.set_name("t");
  raised.mutable_cap()->set_slots(10);
  SetTenant(raised);
  v1::SetTenantRequest request;
  request.mutable_tenant()->set_name("t");
  request.mutable_tenant()->mutable_cap()->set_slots(4);  // stale
  request.mutable_tenant()->mutable_floor()->set_slots(6);
  request.mutable_update_mask()->add_paths("floor");
  v1::Tenant merged;
  grpc::Status status =
      Call(*admin_, &v1::Admin::Stub::SetTenant, request, &merged);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(merged.cap().slots(), 10u);
  EXPECT_EQ(merged.floor().slots(), 6u);
  request.mutable_tenant()->mutable_floor()->set_slots(20);
  status = Call(*admin_, &v1::Admin::Stub::SetTenant, request, &merged);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("floor"));
}

// Depth per state, the oldest ready job's age, usage.
TEST_F(AdminTest, QueueStatsCountEachState) {
  uint64_t leased_id = MustEnqueue(Spec("acme", "leased"));
  v1::LeasedJob leased = MustLease();
  ASSERT_EQ(leased.job().id(), leased_id);
  MakeDeadLetter("acme");
  MustEnqueue(Spec("acme", "ready"));
  v1::JobSpec later = Spec("acme", "scheduled");
  *later.mutable_delay() = Millis(3600'000);
  MustEnqueue(later);
  MustEnqueue(Spec("beta", "other tenant"));
  // Let the ready job age a little on the daemon's clock.
  ASSERT_TRUE(LetTimePass(*worker_, 50).ok());

  v1::TenantStats stats = StatsOf("acme");
  EXPECT_EQ(stats.tenant(), "acme");
  EXPECT_EQ(stats.pool(), "default");
  EXPECT_EQ(stats.ready(), 1u);
  EXPECT_EQ(stats.scheduled(), 1u);
  EXPECT_EQ(stats.leased(), 1u);
  EXPECT_EQ(stats.dead(), 1u);
  EXPECT_GT(ToMillis(stats.oldest_ready_age()), 0);
  EXPECT_LT(ToMillis(stats.oldest_ready_age()), 60'000);
  EXPECT_GT(stats.worker_seconds(), 0) << "the failed attempt is charged";

  // Unfiltered: every tenant with jobs, in the default pool only.
  v1::GetQueueStatsResponse all;
  ASSERT_TRUE(Call(*admin_, &v1::Admin::Stub::GetQueueStats,
                   v1::GetQueueStatsRequest(), &all)
                  .ok());
  std::vector<std::string> tenants;
  for (const v1::TenantStats& s : all.tenants()) {
    if (s.pool() == "default") tenants.push_back(s.tenant());
  }
  EXPECT_THAT(tenants, ::testing::UnorderedElementsAre("acme", "beta"));

  // Once nothing is ready, the age is zero.
  v1::LeaseResponse drain;
  ASSERT_TRUE(Lease(*worker_, LeaseReq("w1", 0, 5), &drain).ok());
  EXPECT_EQ(drain.jobs_size(), 2);
  stats = StatsOf("acme");
  EXPECT_EQ(stats.ready(), 0u);
  EXPECT_EQ(stats.leased(), 2u);
  EXPECT_EQ(ToMillis(stats.oldest_ready_age()), 0);
}

// PurgeTenant cancels READY and SCHEDULED jobs (of one pool, or all) and
// leaves leased ones alone.
TEST_F(AdminTest, PurgeRemovesOnlyQueuedJobs) {
  uint64_t leased_id = MustEnqueue(Spec("acme", "leased"));
  v1::LeasedJob leased = MustLease();
  ASSERT_EQ(leased.job().id(), leased_id);
  std::vector<uint64_t> doomed = {MustEnqueue(Spec("acme", "r1")),
                                  MustEnqueue(Spec("acme", "r2"))};
  v1::JobSpec later = Spec("acme", "scheduled");
  *later.mutable_delay() = Millis(3600'000);
  doomed.push_back(MustEnqueue(later));
  v1::JobSpec gpu = Spec("acme", "gpu");
  gpu.set_pool("gpu");
  uint64_t gpu_id = MustEnqueue(gpu);
  uint64_t other_id = MustEnqueue(Spec("beta", "not purged"));

  v1::PurgeTenantRequest request;
  request.set_tenant("acme");
  request.set_pool("gpu");
  v1::PurgeTenantResponse response;
  ASSERT_TRUE(
      Call(*admin_, &v1::Admin::Stub::PurgeTenant, request, &response).ok());
  EXPECT_EQ(response.purged(), 1u);
  v1::Job job;
  EXPECT_EQ(GetJob(*producer_, gpu_id, &job).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(StatsOf("acme").ready(), 2u) << "other pools are untouched";

  request.clear_pool();
  ASSERT_TRUE(
      Call(*admin_, &v1::Admin::Stub::PurgeTenant, request, &response).ok());
  EXPECT_EQ(response.purged(), 3u);
  for (uint64_t id : doomed) {
    EXPECT_EQ(GetJob(*producer_, id, &job).error_code(),
              grpc::StatusCode::NOT_FOUND)
        << id;
  }
  v1::TenantStats stats = StatsOf("acme");
  EXPECT_EQ(stats.ready(), 0u);
  EXPECT_EQ(stats.scheduled(), 0u);
  EXPECT_EQ(stats.leased(), 1u);
  EXPECT_EQ(StatsOf("beta").ready(), 1u);

  // The leased job still completes; the queue holds only beta's job.
  v1::AckResult result;
  ASSERT_TRUE(
      Complete(*worker_, leased_id, leased.lease_token(), &result).ok());
  EXPECT_EQ(result.code(), grpc::StatusCode::OK) << result.message();
  v1::LeaseResponse rest;
  ASSERT_TRUE(Lease(*worker_, LeaseReq("w1", 0, 5), &rest).ok());
  ASSERT_EQ(rest.jobs_size(), 1);
  EXPECT_EQ(rest.jobs(0).job().id(), other_id);

  request.set_tenant("nobody");
  EXPECT_EQ(Call(*admin_, &v1::Admin::Stub::PurgeTenant, request, &response)
                .error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(AdminTest, DeadLettersArePagedAndRequeuedByFilter) {
  uint64_t a1 = MakeDeadLetter("acme");
  uint64_t b1 = MakeDeadLetter("beta");
  uint64_t a2 = MakeDeadLetter("acme");

  v1::ListDeadLettersRequest page_request;
  page_request.set_page_size(2);
  v1::ListDeadLettersResponse page;
  ASSERT_TRUE(
      Call(*admin_, &v1::Admin::Stub::ListDeadLetters, page_request, &page)
          .ok());
  ASSERT_EQ(page.jobs_size(), 2);
  EXPECT_EQ(page.jobs(0).id(), a1);
  EXPECT_EQ(page.jobs(1).id(), b1);
  EXPECT_TRUE(page.more());
  page_request.set_after_job_id(page.jobs(1).id());
  ASSERT_TRUE(
      Call(*admin_, &v1::Admin::Stub::ListDeadLetters, page_request, &page)
          .ok());
  ASSERT_EQ(page.jobs_size(), 1);
  EXPECT_EQ(page.jobs(0).id(), a2);
  EXPECT_FALSE(page.more());
  EXPECT_THAT(DeadLetterIds("acme"), ::testing::ElementsAre(a1, a2));

  EXPECT_EQ(RequeueDeadOf("acme").requeued(), 2u);
  EXPECT_THAT(DeadLetterIds("acme"), ::testing::IsEmpty());
  EXPECT_THAT(DeadLetterIds("beta"), ::testing::ElementsAre(b1));
  for (uint64_t id : {a1, a2}) {
    v1::Job job;
    ASSERT_TRUE(GetJob(*producer_, id, &job).ok());
    EXPECT_EQ(job.state(), v1::JOB_STATE_READY);
    EXPECT_EQ(job.attempts(), 0u);
  }
  v1::TenantStats acme = StatsOf("acme");
  EXPECT_EQ(acme.ready(), 2u);
  EXPECT_EQ(acme.dead(), 0u);
  EXPECT_EQ(StatsOf("beta").dead(), 1u);

  // A pool filter that matches none of beta's jobs requeues nothing.
  EXPECT_EQ(RequeueDeadOf("beta", "gpu").requeued(), 0u);
  EXPECT_THAT(DeadLetterIds("beta"), ::testing::ElementsAre(b1));
}

// A filter's matches are moved a call's worth (1,000) at a time, oldest
// first, so that no call holds every dead job of a tenant in memory; `more`
// says to call again, after `last_job_id`. A call after an id moves only
// the dead letters past it.
TEST_F(AdminTest, RequeueByFilterMovesACallsWorthAtATime) {
  constexpr int kDead = 1002;
  std::vector<uint64_t> ids = MakeDeadLetters("acme", kDead, "fatal");
  ASSERT_EQ(StatsOf("acme").dead(), static_cast<uint64_t>(kDead));

  v1::RequeueDeadLettersResponse response = RequeueDeadOf("acme");
  EXPECT_EQ(response.requeued(), 1000u);
  EXPECT_TRUE(response.more());
  EXPECT_EQ(response.last_job_id(), ids[999]);
  EXPECT_THAT(DeadLetterIds("acme"),
              ::testing::ElementsAre(ids[1000], ids[1001]));
  response = RequeueDeadOf("acme", "", ids[1000]);
  EXPECT_EQ(response.requeued(), 1u);
  EXPECT_FALSE(response.more());
  EXPECT_EQ(response.last_job_id(), ids[1001]);
  EXPECT_THAT(DeadLetterIds("acme"), ::testing::ElementsAre(ids[1000]));
  response = RequeueDeadOf("acme", "", ids[999]);
  EXPECT_EQ(response.requeued(), 1u);
  EXPECT_EQ(response.last_job_id(), ids[1000]);
  EXPECT_EQ(StatsOf("acme").ready(), static_cast<uint64_t>(kDead));
}

// Dead letters with large payloads: a listing page stops at 3 MiB, under
// the client's 4 MiB receive limit, and a requeue by filter at 32 MiB, so
// that neither holds every dead job in memory.
TEST_F(AdminTest, DeadLetterReadsAreBoundedInBytes) {
  constexpr int kDead = 34;  // of 1,000,000 bytes each: 32.4 MiB in all
  v1::JobSpec big = Spec("acme", std::string(1'000'000, 'p'));
  for (int i = 0; i < kDead; ++i) {
    MustEnqueue(big);
    v1::LeasedJob leased = MustLease();
    v1::AckResult result;
    ASSERT_TRUE(Fail(*worker_, leased.job().id(), leased.lease_token(), "fatal",
                     false, &result)
                    .ok());
  }
  v1::ListDeadLettersRequest list;
  list.set_tenant("acme");
  v1::ListDeadLettersResponse page;
  grpc::Status status =
      Call(*admin_, &v1::Admin::Stub::ListDeadLetters, list, &page);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(page.jobs_size(), 3);
  EXPECT_TRUE(page.more());

  v1::RequeueDeadLettersResponse response = RequeueDeadOf("acme");
  EXPECT_EQ(response.requeued(), 33u);
  EXPECT_TRUE(response.more());
  EXPECT_EQ(StatsOf("acme").dead(), 1u);
}

// The page's size counts each job's last error (up to 4 KiB) too: 1,000
// small jobs with long errors would be over 4 MiB.
TEST_F(AdminTest, ADeadLetterPageCountsTheErrorsToo) {
  constexpr int kDead = 1000;
  MakeDeadLetters("acme", kDead, std::string(4096, 'e'));
  v1::ListDeadLettersRequest list;
  list.set_page_size(kDead);
  v1::ListDeadLettersResponse page;
  grpc::Status status =
      Call(*admin_, &v1::Admin::Stub::ListDeadLetters, list, &page);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_LT(page.jobs_size(), kDead);
  EXPECT_GT(page.jobs_size(), 500);  // 3 MiB of ~4.2 KB jobs: ~740
  EXPECT_TRUE(page.more());
}

// max_queued counts READY + SCHEDULED jobs; beyond it Enqueue gets
// RESOURCE_EXHAUSTED with the retry trailer, and a batch gets per-job codes.
TEST_F(AdminTest, MaxQueuedQuotaRejectsWithARetryDelay) {
  v1::Tenant tenant;
  tenant.set_name("capped");
  tenant.mutable_quotas()->set_max_queued(2);
  SetTenant(tenant);
  v1::JobSpec keyed = Spec("capped", "1");
  keyed.set_idempotency_key("k1");
  uint64_t first = MustEnqueue(keyed);
  v1::JobSpec later = Spec("capped", "2");
  *later.mutable_delay() = Millis(3600'000);  // SCHEDULED counts too
  MustEnqueue(later);

  v1::EnqueueRequest request;
  *request.mutable_job() = Spec("capped", "3");
  v1::EnqueueResponse response;
  std::multimap<std::string, std::string> trailers;
  grpc::Status status = Call(*producer_, &v1::Producer::Stub::Enqueue, request,
                             &response, 10, &trailers);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("max_queued"));
  ASSERT_EQ(trailers.count(kRetryAfterTrailer), 1u);
  EXPECT_GT(std::stoll(trailers.find(kRetryAfterTrailer)->second), 0);
  // Retrying an accepted job is not refused: nothing new is queued.
  uint64_t again = 0;
  bool duplicate = false;
  ASSERT_TRUE(Enqueue(*producer_, keyed, &again, &duplicate).ok());
  EXPECT_EQ(again, first);
  EXPECT_TRUE(duplicate);
  // Other tenants are not limited.
  MustEnqueue(Spec("free", "x"));

  v1::EnqueueBatchResponse batch;
  ASSERT_TRUE(
      EnqueueBatch(*producer_, {Spec("capped", "4"), Spec("free", "y")}, &batch)
          .ok());
  ASSERT_EQ(batch.results_size(), 2);
  EXPECT_EQ(batch.results(0).code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(batch.results(0).job_id(), 0u);
  EXPECT_GT(ToMillis(batch.results(0).retry_after()), 0);
  EXPECT_EQ(batch.results(1).code(), grpc::StatusCode::OK);

  // A leased job is no longer queued: room for one more.
  v1::LeaseResponse leased;
  ASSERT_TRUE(Lease(*worker_, LeaseReq("w1", 0, 3), &leased).ok());
  bool took_first = false;
  for (const v1::LeasedJob& job : leased.jobs()) {
    took_first |= job.job().id() == first;
  }
  ASSERT_TRUE(took_first);
  ASSERT_TRUE(EnqueueBatch(*producer_,
                           {Spec("capped", "5"), Spec("capped", "6")}, &batch)
                  .ok());
  ASSERT_EQ(batch.results_size(), 2);
  EXPECT_EQ(batch.results(0).code(), grpc::StatusCode::OK);
  EXPECT_EQ(batch.results(1).code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

// enqueue_rate with enqueue_burst: a burst beyond the bucket is refused.
TEST_F(AdminTest, EnqueueRateQuotaRejectsABurstBeyondItsDepth) {
  v1::Tenant tenant;
  tenant.set_name("metered");
  tenant.mutable_quotas()->set_enqueue_rate(0.1);  // one token per 10 s
  tenant.mutable_quotas()->set_enqueue_burst(3);
  SetTenant(tenant);

  std::vector<v1::JobSpec> burst(5, Spec("metered"));
  v1::EnqueueBatchResponse batch;
  ASSERT_TRUE(EnqueueBatch(*producer_, burst, &batch).ok());
  ASSERT_EQ(batch.results_size(), 5);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(batch.results(i).code(), grpc::StatusCode::OK) << i;
  }
  for (int i = 3; i < 5; ++i) {
    EXPECT_EQ(batch.results(i).code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << i;
    // The bucket is empty: the next token is up to 10 s away.
    EXPECT_GT(ToMillis(batch.results(i).retry_after()), 0) << i;
    EXPECT_LE(ToMillis(batch.results(i).retry_after()), 10'000) << i;
  }

  v1::EnqueueRequest request;
  *request.mutable_job() = Spec("metered");
  v1::EnqueueResponse response;
  std::multimap<std::string, std::string> trailers;
  grpc::Status status = Call(*producer_, &v1::Producer::Stub::Enqueue, request,
                             &response, 10, &trailers);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  ASSERT_EQ(trailers.count(kRetryAfterTrailer), 1u);
  EXPECT_GT(std::stoll(trailers.find(kRetryAfterTrailer)->second), 0);
  EXPECT_EQ(StatsOf("metered").ready(), 3u);
}

// grpc.health.v1.Health/Check with the overall service name "". Debian's
// grpc++ ships no generated health stub, so the call goes through the
// generic stub with the two tiny messages encoded by hand:
// HealthCheckRequest{service: ""} is empty; HealthCheckResponse{status:
// SERVING} is field 1, varint 1: bytes 08 01.
TEST_F(AdminTest, HealthServiceReportsServing) {
  grpc::GenericStub stub(daemon_.Channel());
  grpc::ClientContext context;
  context.set_deadline(Deadline());
  grpc::Slice empty;
  grpc::ByteBuffer request(&empty, 1);  // an empty message
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(),
                 &request, &response,
                 [&](grpc::Status status) { done.set_value(status); });
  auto finished = done.get_future();
  ASSERT_EQ(finished.wait_for(std::chrono::seconds(15)),
            std::future_status::ready);
  grpc::Status status = finished.get();
  ASSERT_TRUE(status.ok()) << status.error_message();
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  EXPECT_EQ(bytes, std::string("\x08\x01", 2)) << "not SERVING";
}

}  // namespace
}  // namespace fairq::testing
