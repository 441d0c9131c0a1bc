// Malformed requests against a real fairqd: each is refused with the code the
// proto promises (mostly INVALID_ARGUMENT) and a message naming the field,
// nothing is queued, and the daemon keeps serving.
//
// fairqd runs with small limits and auto-creation off, so those limits can
// be hit cheaply.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "google/protobuf/stubs/logging.h"
#include "tests/integration/client_util.h"
#include "tests/integration/daemon_client_test.h"
#include "tests/integration/fairqd_process.h"

namespace fairq::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kConfig[] = R"(
max_payload_bytes: 1024
max_batch: 4
auto_create_tenants: false
auto_create_pools: false
pools:
  - default
  - gpu
tenants:
  - name: known
)";

class BadInputTest : public DaemonClientTest {
 protected:
  BadInputTest() : daemon_(kConfig) {}

  void SetUp() override {
    ASSERT_TRUE(daemon_.Start()) << daemon_.error();
    Connect(daemon_);
  }

  // After the bad requests: a good job still goes all the way through. It
  // uses the configured pool "gpu", which the tests leave empty otherwise.
  void ExpectStillServing() {
    v1::JobSpec spec = Spec("known", "fine");
    spec.set_pool("gpu");
    uint64_t id = 0;
    grpc::Status status = Enqueue(*producer_, spec, &id);
    ASSERT_TRUE(status.ok()) << status.error_message();
    v1::LeaseResponse leased;
    ASSERT_TRUE(
        Lease(*worker_, LeaseReq("w1", 5000, 1, {"gpu"}), &leased).ok());
    ASSERT_EQ(leased.jobs_size(), 1);
    EXPECT_EQ(leased.jobs(0).job().id(), id);
    EXPECT_EQ(leased.jobs(0).job().spec().payload(), "fine");
    v1::AckResult result;
    ASSERT_TRUE(
        Complete(*worker_, id, leased.jobs(0).lease_token(), &result).ok());
    EXPECT_EQ(result.code(), grpc::StatusCode::OK);
  }

  // Jobs the tenant has in any state, in any pool.
  uint64_t JobsOf(const std::string& tenant) {
    v1::GetQueueStatsRequest request;
    request.set_tenant(tenant);
    v1::GetQueueStatsResponse response;
    EXPECT_TRUE(
        Call(*admin_, &v1::Admin::Stub::GetQueueStats, request, &response)
            .ok());
    uint64_t jobs = 0;
    for (const v1::TenantStats& s : response.tenants()) {
      jobs += s.ready() + s.scheduled() + s.leased() + s.dead();
    }
    return jobs;
  }

  FairqdProcess daemon_;
};

// The call was refused as INVALID_ARGUMENT naming `field`.
void ExpectInvalid(const grpc::Status& status, const std::string& field) {
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr(field));
}

struct BadSpec {
  std::string name;
  std::function<void(v1::JobSpec&)> spoil;
  grpc::StatusCode code;
  std::string field;  // the message must name it
};

std::vector<BadSpec> BadSpecs() {
  using Code = grpc::StatusCode;
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  return {
      {"empty tenant", [](v1::JobSpec& s) { s.set_tenant(""); },
       Code::INVALID_ARGUMENT, "job.tenant"},
      {"tenant of 129 characters",
       [](v1::JobSpec& s) { s.set_tenant(std::string(129, 'a')); },
       Code::INVALID_ARGUMENT, "job.tenant"},
      {"tenant with a space", [](v1::JobSpec& s) { s.set_tenant("kno wn"); },
       Code::INVALID_ARGUMENT, "job.tenant"},
      {"tenant with a slash", [](v1::JobSpec& s) { s.set_tenant("known/x"); },
       Code::INVALID_ARGUMENT, "job.tenant"},
      {"tenant with unicode",
       [](v1::JobSpec& s) { s.set_tenant("kn\xc3\xb6wn"); },  // "knöwn"
       Code::INVALID_ARGUMENT, "job.tenant"},
      {"unknown tenant, auto-creation off",
       [](v1::JobSpec& s) { s.set_tenant("stranger"); }, Code::NOT_FOUND,
       "job.tenant: unknown tenant"},
      {"payload over max_payload_bytes",
       [](v1::JobSpec& s) { s.set_payload(std::string(1025, 'p')); },
       Code::INVALID_ARGUMENT, "job.payload"},
      {"negative cost",
       [](v1::JobSpec& s) { s.set_estimated_cost_seconds(-1); },
       Code::INVALID_ARGUMENT, "job.estimated_cost_seconds"},
      {"NaN cost", [=](v1::JobSpec& s) { s.set_estimated_cost_seconds(kNaN); },
       Code::INVALID_ARGUMENT, "job.estimated_cost_seconds"},
      {"infinite cost",
       [=](v1::JobSpec& s) { s.set_estimated_cost_seconds(kInf); },
       Code::INVALID_ARGUMENT, "job.estimated_cost_seconds"},
      {"priority 1001", [](v1::JobSpec& s) { s.set_priority(1001); },
       Code::INVALID_ARGUMENT, "job.priority"},
      {"priority -1001", [](v1::JobSpec& s) { s.set_priority(-1001); },
       Code::INVALID_ARGUMENT, "job.priority"},
      {"unknown pool, auto-creation off",
       [](v1::JobSpec& s) { s.set_pool("nope"); }, Code::INVALID_ARGUMENT,
       "job.pool: unknown pool"},
      {"pool with bad characters", [](v1::JobSpec& s) { s.set_pool("a b"); },
       Code::INVALID_ARGUMENT, "job.pool"},
      {"lease_duration 0",
       [](v1::JobSpec& s) { *s.mutable_lease_duration() = Millis(0); },
       Code::INVALID_ARGUMENT, "job.lease_duration"},
      {"lease_duration over 12 h",
       [](v1::JobSpec& s) {
         *s.mutable_lease_duration() = Millis(12 * 3600'000 + 1000);
       },
       Code::INVALID_ARGUMENT, "job.lease_duration"},
      {"negative delay",
       [](v1::JobSpec& s) { *s.mutable_delay() = Millis(-1000); },
       Code::INVALID_ARGUMENT, "job.delay"},
      {"delay a nanosecond below 0",
       [](v1::JobSpec& s) { s.mutable_delay()->set_nanos(-1); },
       Code::INVALID_ARGUMENT, "job.delay"},
      {"not_before in the year 9999",
       [](v1::JobSpec& s) {
         s.mutable_not_before()->set_seconds(253'402'300'799);
       },
       Code::INVALID_ARGUMENT, "job.not_before"},
      {"max_attempts 1001", [](v1::JobSpec& s) { s.set_max_attempts(1001); },
       Code::INVALID_ARGUMENT, "job.max_attempts"},
      {"idempotency key of 257 bytes",
       [](v1::JobSpec& s) { s.set_idempotency_key(std::string(257, 'k')); },
       Code::INVALID_ARGUMENT, "job.idempotency_key"},
      {"65 labels",
       [](v1::JobSpec& s) {
         for (int i = 0; i < 65; ++i) {
           (*s.mutable_labels())["k" + std::to_string(i)] = "v";
         }
       },
       Code::INVALID_ARGUMENT, "job.labels"},
      {"100 KiB of unknown fields",
       [](v1::JobSpec& s) {
         s.GetReflection()->MutableUnknownFields(&s)->AddLengthDelimited(
             99, std::string(100 << 10, 'u'));
       },
       Code::INVALID_ARGUMENT, "job.size: "},
      {"a label value of 1025 bytes",
       [](v1::JobSpec& s) {
         (*s.mutable_labels())["gpu"] = std::string(1025, 'v');
       },
       Code::INVALID_ARGUMENT,
       "job.labels[\"gpu\"]: values must be at most 1024 bytes, got 1025"},
      {"a label key of 200 bytes",
       [](v1::JobSpec& s) {
         (*s.mutable_labels())[std::string(200, 'k')] = "v";
       },
       Code::INVALID_ARGUMENT,
       "job.labels[\"" + std::string(32, 'k') +
           "...\"]: keys must be 1-128 bytes, got 200"},
      {"max_backoff below initial_backoff",
       [](v1::JobSpec& s) { s = WithFastRetry(s, 2000, 1000); },
       Code::INVALID_ARGUMENT, "job.retry.max_backoff"},
  };
}

TEST_F(BadInputTest, EnqueueNamesTheBadField) {
  for (const BadSpec& bad : BadSpecs()) {
    SCOPED_TRACE(bad.name);
    v1::JobSpec spec = Spec("known", "x");
    bad.spoil(spec);
    grpc::Status status = Enqueue(*producer_, spec);
    EXPECT_EQ(status.error_code(), bad.code) << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr(bad.field));
  }
  EXPECT_EQ(JobsOf("known"), 0u) << "a refused job was queued";
  ExpectStillServing();
}

// Within a batch the same problems are per-job results; the good jobs of
// the batch go in.
TEST_F(BadInputTest, BatchReportsBadJobsAndAcceptsTheRest) {
  for (const BadSpec& bad : BadSpecs()) {
    SCOPED_TRACE(bad.name);
    v1::JobSpec spoiled = Spec("known", "x");
    bad.spoil(spoiled);
    v1::EnqueueBatchResponse response;
    grpc::Status status = EnqueueBatch(
        *producer_, {Spec("known", "good"), spoiled, Spec("known", "good")},
        &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(response.results_size(), 3);
    EXPECT_EQ(response.results(0).code(), grpc::StatusCode::OK);
    EXPECT_NE(response.results(0).job_id(), 0u);
    EXPECT_EQ(response.results(1).code(), bad.code);
    EXPECT_EQ(response.results(1).job_id(), 0u);
    std::string field = bad.field;
    if (field.rfind("job.", 0) == 0) field = "jobs[1]." + field.substr(4);
    EXPECT_THAT(response.results(1).message(), HasSubstr(field));
    EXPECT_EQ(response.results(2).code(), grpc::StatusCode::OK);
  }
  EXPECT_EQ(JobsOf("known"), 2 * BadSpecs().size());

  ExpectStillServing();
}

// A message larger than max_batch of the largest specs (here 4 of 1 KiB
// payloads: under 400 KiB) is refused by gRPC before it is parsed, whatever
// method it is for.
TEST_F(BadInputTest, AnOversizedMessageIsRefusedBeforeItIsRead) {
  v1::JobSpec huge = Spec("known", std::string(1 << 20, 'p'));
  v1::EnqueueBatchResponse response;
  grpc::Status status = EnqueueBatch(*producer_, {huge}, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << status.error_message();
  v1::HeartbeatRequest beat;
  beat.set_job_id(1);
  beat.GetReflection()->MutableUnknownFields(&beat)->AddLengthDelimited(
      99, std::string(1 << 20, 'u'));
  v1::HeartbeatResponse answer;
  status = Call(*worker_, &v1::Worker::Stub::Heartbeat, beat, &answer);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << status.error_message();
  EXPECT_EQ(JobsOf("known"), 0u);
  ExpectStillServing();
}

// Text that is not UTF-8 in a string field: protobuf cannot parse the
// request, so gRPC refuses the whole call before fairqd sees it, as
// docs/api.md says (here a label's value, and one bad error text in a Fail
// batch).
TEST_F(BadInputTest, TextThatIsNotUtf8IsRefusedByGrpcAsUnparsable) {
  google::protobuf::LogSilencer silence;  // this side warns as it sends
  v1::JobSpec spec = Spec("known", "p");
  (*spec.mutable_labels())["k"] = "bad\xff";
  uint64_t id = 0;
  grpc::Status status = Enqueue(*producer_, spec, &id);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(status.error_message(), "Unable to parse request");
  v1::FailRequest fail;
  for (const char* error : {"fine", "bad\xff"}) {
    v1::Failure* failure = fail.add_failures();
    failure->set_job_id(1);
    failure->set_error(error);
  }
  v1::AckResponse acks;
  status = Call(*worker_, &v1::Worker::Stub::Fail, fail, &acks);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(JobsOf("known"), 0u);
  ExpectStillServing();
}

TEST_F(BadInputTest, BatchSizeIsBounded) {
  v1::EnqueueBatchResponse response;
  grpc::Status status = EnqueueBatch(
      *producer_, std::vector<v1::JobSpec>(5, Spec("known")), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("jobs"));
  status = EnqueueBatch(*producer_, {}, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("jobs"));
  EXPECT_EQ(JobsOf("known"), 0u);
  // max_batch itself is fine.
  ASSERT_TRUE(EnqueueBatch(*producer_,
                           std::vector<v1::JobSpec>(4, Spec("known")),
                           &response)
                  .ok());
  EXPECT_EQ(response.results_size(), 4);
  EXPECT_EQ(JobsOf("known"), 4u);
}

TEST_F(BadInputTest, LeaseRequestIsChecked) {
  struct Case {
    std::string name;
    std::function<void(v1::LeaseRequest&)> spoil;
    grpc::StatusCode code;
    std::string field;
  };
  using Code = grpc::StatusCode;
  std::vector<Case> cases = {
      {"slots 0", [](v1::LeaseRequest& r) { r.set_slots(0); },
       Code::INVALID_ARGUMENT, "slots"},
      {"slots 10001", [](v1::LeaseRequest& r) { r.set_slots(10001); },
       Code::INVALID_ARGUMENT, "slots"},
      {"max_jobs above slots", [](v1::LeaseRequest& r) { r.set_max_jobs(2); },
       Code::INVALID_ARGUMENT, "max_jobs"},
      {"wait over 30 s",
       [](v1::LeaseRequest& r) { *r.mutable_wait() = Millis(30'001); },
       Code::INVALID_ARGUMENT, "wait"},
      {"negative wait",
       [](v1::LeaseRequest& r) { *r.mutable_wait() = Millis(-1); },
       Code::INVALID_ARGUMENT, "wait"},
      {"empty worker_id", [](v1::LeaseRequest& r) { r.set_worker_id(""); },
       Code::INVALID_ARGUMENT, "worker_id"},
      {"pool with bad characters",
       [](v1::LeaseRequest& r) { r.add_pools("gpu/1"); },
       Code::INVALID_ARGUMENT, "pools[0]"},
      {"unknown pool, auto-creation off",
       [](v1::LeaseRequest& r) { r.add_pools("nope"); }, Code::INVALID_ARGUMENT,
       "pools[0]: unknown pool"},
      {"a pool named twice",
       [](v1::LeaseRequest& r) {
         r.add_pools("gpu");
         r.add_pools("default");
         r.add_pools("gpu");
       },
       Code::INVALID_ARGUMENT, "pools[2]: the same as pools[0]"},
      {"65 pools",
       [](v1::LeaseRequest& r) {
         for (int i = 0; i < 65; ++i) r.add_pools("p" + std::to_string(i));
       },
       Code::INVALID_ARGUMENT, "pools: at most 64"},
  };
  for (const Case& bad : cases) {
    SCOPED_TRACE(bad.name);
    v1::LeaseRequest request = LeaseReq("w1", 0);
    bad.spoil(request);
    v1::LeaseResponse response;
    grpc::Status status =
        Call(*worker_, &v1::Worker::Stub::Lease, request, &response);
    EXPECT_EQ(status.error_code(), bad.code) << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr(bad.field));
  }
  ExpectStillServing();
}

TEST_F(BadInputTest, AcksAreChecked) {
  v1::CompleteRequest complete;
  v1::AckResponse response;
  grpc::Status status =
      Call(*worker_, &v1::Worker::Stub::Complete, complete, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("completions"));

  v1::Completion* done = complete.add_completions();
  done->set_job_id(1);
  done->set_lease_token(1);
  *done->mutable_runtime() = Millis(-5);
  status = Call(*worker_, &v1::Worker::Stub::Complete, complete, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("completions[0].runtime"));

  for (int i = 0; i < 5; ++i)
    *complete.add_completions() = complete.completions(0);
  complete.mutable_completions(0)->clear_runtime();
  status = Call(*worker_, &v1::Worker::Stub::Complete, complete, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << "6 completions with max_batch 4";

  v1::FailRequest fail;
  status = Call(*worker_, &v1::Worker::Stub::Fail, fail, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("failures"));
  v1::Failure* failure = fail.add_failures();
  failure->set_job_id(1);
  failure->set_error(std::string(4097, 'e'));
  status = Call(*worker_, &v1::Worker::Stub::Fail, fail, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("failures[0].error"));
  failure->set_error("e");
  *failure->mutable_runtime() = Millis(-1);
  status = Call(*worker_, &v1::Worker::Stub::Fail, fail, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("failures[0].runtime"));

  v1::ReleaseRequest release;
  status = Call(*worker_, &v1::Worker::Stub::Release, release, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("leases"));
  for (int i = 0; i < 5; ++i) release.add_leases()->set_job_id(424242);
  status = Call(*worker_, &v1::Worker::Stub::Release, release, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << "5 leases with max_batch 4";
  release.mutable_leases()->DeleteSubrange(1, 4);
  status = Call(*worker_, &v1::Worker::Stub::Release, release, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.results_size(), 1);
  EXPECT_EQ(response.results(0).code(), grpc::StatusCode::NOT_FOUND);

  // Well-formed acks for jobs that do not exist: per-item NOT_FOUND.
  v1::AckResult result;
  ASSERT_TRUE(Complete(*worker_, 424242, 1, &result).ok());
  EXPECT_EQ(result.code(), grpc::StatusCode::NOT_FOUND);
  ASSERT_TRUE(Fail(*worker_, 424242, 1, "e", true, &result).ok());
  EXPECT_EQ(result.code(), grpc::StatusCode::NOT_FOUND);
  v1::HeartbeatResponse beat;
  EXPECT_EQ(Heartbeat(*worker_, 424242, 1, &beat).error_code(),
            grpc::StatusCode::NOT_FOUND);
  ExpectStillServing();
}

// The broker takes a runtime at nanosecond precision: one that is out of
// range only below a millisecond must be refused here, not reach the
// scheduler's own check (which aborted fairqd). The lease stays intact.
TEST_F(BadInputTest, RuntimesAreCheckedToTheNanosecond) {
  uint64_t id = 0;
  v1::JobSpec spec = Spec("known", "p");
  spec.set_pool("gpu");
  ASSERT_TRUE(Enqueue(*producer_, spec, &id).ok());
  v1::LeaseResponse leased;
  ASSERT_TRUE(Lease(*worker_, LeaseReq("w1", 5000, 1, {"gpu"}), &leased).ok());
  ASSERT_EQ(leased.jobs_size(), 1);
  const uint64_t token = leased.jobs(0).lease_token();

  v1::CompleteRequest complete;
  v1::Completion* done = complete.add_completions();
  done->set_job_id(id);
  done->set_lease_token(token);
  done->mutable_runtime()->set_nanos(-1);
  v1::AckResponse response;
  grpc::Status status =
      Call(*worker_, &v1::Worker::Stub::Complete, complete, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("completions[0].runtime"));

  v1::FailRequest fail;
  v1::Failure* failure = fail.add_failures();
  failure->set_job_id(id);
  failure->set_lease_token(token);
  failure->mutable_runtime()->set_seconds(1'000'000'000);  // the most allowed
  failure->mutable_runtime()->set_nanos(500'000);
  status = Call(*worker_, &v1::Worker::Stub::Fail, fail, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("failures[0].runtime"));

  v1::AckResult result;
  ASSERT_TRUE(Complete(*worker_, id, token, &result).ok());
  EXPECT_EQ(result.code(), grpc::StatusCode::OK);
  ExpectStillServing();
}

TEST_F(BadInputTest, UnknownJobIdsAreNotFound) {
  v1::Job job;
  EXPECT_EQ(GetJob(*producer_, 424242, &job).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(GetJob(*producer_, 0, &job).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(CancelJob(*producer_, 424242, &job).error_code(),
            grpc::StatusCode::NOT_FOUND);
  ExpectStillServing();
}

TEST_F(BadInputTest, AdminRequestsAreChecked) {
  auto set_tenant = [&](const v1::Tenant& tenant) {
    v1::SetTenantRequest request;
    *request.mutable_tenant() = tenant;
    v1::Tenant response;
    return Call(*admin_, &v1::Admin::Stub::SetTenant, request, &response);
  };
  v1::Tenant tenant;
  grpc::Status status = set_tenant(tenant);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("name"));
  tenant.set_name("new");
  tenant.set_weight(-1);
  status = set_tenant(tenant);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("weight"));
  tenant.set_weight(1);
  tenant.mutable_cap()->set_share(1.5);
  status = set_tenant(tenant);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("cap"));
  tenant.clear_cap();
  tenant.mutable_quotas()->set_enqueue_rate(-2);
  status = set_tenant(tenant);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("enqueue_rate"));
  tenant.set_org("a b");
  tenant.clear_quotas();
  status = set_tenant(tenant);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("org"));
  tenant.clear_org();
  v1::SetTenantRequest masked;
  *masked.mutable_tenant() = tenant;
  masked.mutable_update_mask()->add_paths("weight");
  masked.mutable_update_mask()->add_paths("paused");
  v1::Tenant masked_reply;
  ExpectInvalid(
      Call(*admin_, &v1::Admin::Stub::SetTenant, masked, &masked_reply),
      "update_mask.paths[1]: \"paused\" is not a setting");

  // None of those created the tenant: with auto-creation off its jobs are
  // still refused.
  v1::Tenant got;
  v1::GetTenantRequest get;
  get.set_name("new");
  EXPECT_EQ(Call(*admin_, &v1::Admin::Stub::GetTenant, get, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Enqueue(*producer_, Spec("new")).error_code(),
            grpc::StatusCode::NOT_FOUND);

  v1::ListDeadLettersRequest list;
  list.set_page_size(1001);
  v1::ListDeadLettersResponse letters;
  status = Call(*admin_, &v1::Admin::Stub::ListDeadLetters, list, &letters);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("page_size"));
  // A filter's name that breaks the naming rule is an error, not a filter
  // that quietly matches nothing.
  list.set_page_size(10);
  list.set_tenant("a b");
  ExpectInvalid(
      Call(*admin_, &v1::Admin::Stub::ListDeadLetters, list, &letters),
      "tenant:");
  v1::GetQueueStatsRequest stats;
  v1::GetQueueStatsResponse stats_response;
  stats.set_pool("gpu/1");
  ExpectInvalid(
      Call(*admin_, &v1::Admin::Stub::GetQueueStats, stats, &stats_response),
      "pool:");

  v1::RequeueDeadLettersRequest requeue;
  requeue.mutable_filter();  // no tenant
  v1::RequeueDeadLettersResponse requeued;
  status =
      Call(*admin_, &v1::Admin::Stub::RequeueDeadLetters, requeue, &requeued);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("filter.tenant"));
  requeue.mutable_filter()->set_tenant("known");
  requeue.mutable_filter()->set_pool("a b");
  ExpectInvalid(
      Call(*admin_, &v1::Admin::Stub::RequeueDeadLetters, requeue, &requeued),
      "filter.pool:");
  requeue.set_job_id(424242);
  EXPECT_EQ(
      Call(*admin_, &v1::Admin::Stub::RequeueDeadLetters, requeue, &requeued)
          .error_code(),
      grpc::StatusCode::NOT_FOUND);
  ExpectInvalid(Call(*admin_, &v1::Admin::Stub::RequeueDeadLetters,
                     v1::RequeueDeadLettersRequest(), &requeued),
                "job_id or filter");

  v1::PurgeTenantRequest purge;
  purge.set_tenant("stranger");
  v1::PurgeTenantResponse purged;
  EXPECT_EQ(
      Call(*admin_, &v1::Admin::Stub::PurgeTenant, purge, &purged).error_code(),
      grpc::StatusCode::NOT_FOUND);
  purge.set_tenant("known");
  purge.set_pool("nope");  // a valid name, as an unknown tenant is
  grpc::Status unknown_pool =
      Call(*admin_, &v1::Admin::Stub::PurgeTenant, purge, &purged);
  EXPECT_EQ(unknown_pool.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(unknown_pool.error_message(),
              HasSubstr("pool: unknown pool \"nope\""));
  purge.set_pool("a b");
  ExpectInvalid(Call(*admin_, &v1::Admin::Stub::PurgeTenant, purge, &purged),
                "pool:");
  purge.set_tenant("");
  ExpectInvalid(Call(*admin_, &v1::Admin::Stub::PurgeTenant, purge, &purged),
                "tenant:");

  // Names are checked before any lookup: no raw bytes echoed back.
  get.set_name("bad\x01name");
  ExpectInvalid(Call(*admin_, &v1::Admin::Stub::GetTenant, get, &got), "name:");
  v1::PauseTenantRequest pause;
  ExpectInvalid(Call(*admin_, &v1::Admin::Stub::PauseTenant, pause, &got),
                "name:");
  status = Call(*admin_, &v1::Admin::Stub::ResumeTenant, pause, &got);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  // A tenant made by SetTenant may enqueue even with auto-creation off.
  tenant.clear_org();
  ASSERT_TRUE(set_tenant(tenant).ok());
  EXPECT_TRUE(Enqueue(*producer_, Spec("new")).ok());
  ExpectStillServing();
}

}  // namespace
}  // namespace fairq::testing
