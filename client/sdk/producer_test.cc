// Producer against a real fairqd: batching by size and by time, Flush and
// flush on destruction, idempotency keys, RESOURCE_EXHAUSTED with its retry
// delay, and retries while the broker restarts.
//
// Each test starts its own fairqd (temp data dir, port 0). Every wait is
// bounded; none sleeps in the hope that something has happened.
#include "fairq/client/producer.h"

#include <chrono>
#include <future>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "client/sdk/tcp_relay.h"
#include "fairq/v1/fairq.grpc.pb.h"
#include "tests/integration/fairqd_process.h"

namespace fairq::client {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using Future = std::future<StatusOr<EnqueueResult>>;

constexpr auto kBound = std::chrono::seconds(10);

JobSpec Job(const std::string& tenant, const std::string& key = "") {
  JobSpec spec;
  spec.tenant = tenant;
  spec.payload = "p";
  spec.idempotency_key = key;
  return spec;
}

// The job's result, failing the test if it is not there within kBound.
StatusOr<EnqueueResult> Get(Future& future) {
  if (future.wait_for(kBound) != std::future_status::ready) {
    return Status(Code::kDeadlineExceeded, "test: no result in 10 s");
  }
  return future.get();
}

bool Ready(Future& future) {
  return future.wait_for(milliseconds(0)) == std::future_status::ready;
}

class ProducerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(daemon_.Start()) << daemon_.error(); }

  std::unique_ptr<Producer> MakeProducer(ProducerOptions options = {}) {
    auto producer = Producer::Create(daemon_.Channel(), std::move(options));
    EXPECT_TRUE(producer.ok()) << producer.status().ToString();
    return producer.ok() ? std::move(*producer) : nullptr;
  }

  // GetJob's state, or JOB_STATE_UNSPECIFIED when the job is unknown.
  v1::JobState StateOf(uint64_t id) {
    v1::GetJobRequest request;
    request.set_job_id(id);
    v1::Job job;
    grpc::ClientContext context;
    context.set_deadline(testing::Deadline());
    grpc::Status status = daemon_.Producer()->GetJob(&context, request, &job);
    return status.ok() ? job.state() : v1::JOB_STATE_UNSPECIFIED;
  }

  testing::FairqdProcess daemon_;
};

TEST_F(ProducerTest, BatchFlushesWhenFull) {
  ProducerOptions options;
  options.max_batch = 10;
  options.linger = std::chrono::seconds(30);  // only size or Flush send
  auto producer = MakeProducer(options);
  ASSERT_NE(producer, nullptr);
  std::vector<Future> futures;
  for (int i = 0; i < 25; ++i) futures.push_back(producer->EnqueueAsync(Job("t")));

  std::vector<uint64_t> ids;
  for (int i = 0; i < 20; ++i) {
    StatusOr<EnqueueResult> result = Get(futures[i]);
    ASSERT_TRUE(result.ok()) << i << ": " << result.status().ToString();
    ids.push_back(result->job_id);
  }
  // Two full batches went; the last five wait for more jobs or the linger.
  EXPECT_EQ(producer->stats().batches, 2u);
  for (int i = 20; i < 25; ++i) EXPECT_FALSE(Ready(futures[i])) << i;

  producer->Flush();
  for (int i = 20; i < 25; ++i) {
    ASSERT_TRUE(Ready(futures[i])) << i << ": Flush returned before it";
    StatusOr<EnqueueResult> result = futures[i].get();
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    ids.push_back(result->job_id);
  }
  EXPECT_EQ(producer->stats().batches, 3u);
  EXPECT_EQ(producer->stats().jobs_sent, 25u);
  // One result per job, in enqueue order: the broker numbers jobs as it
  // queues them, and batches go one after another.
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_GT(ids[i], ids[i - 1]) << i;
  EXPECT_EQ(StateOf(ids.front()), v1::JOB_STATE_READY);
  EXPECT_EQ(StateOf(ids.back()), v1::JOB_STATE_READY);
}

TEST_F(ProducerTest, BatchFlushesWhenLingerRunsOut) {
  ProducerOptions options;
  options.max_batch = 100;
  options.linger = milliseconds(50);
  auto producer = MakeProducer(options);
  ASSERT_NE(producer, nullptr);
  Clock::time_point start = Clock::now();
  Future future = producer->EnqueueAsync(Job("t"));
  StatusOr<EnqueueResult> result = Get(future);  // no Flush
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_GE(Clock::now() - start, milliseconds(50));
  EXPECT_NE(result->job_id, 0u);
  EXPECT_EQ(producer->stats().batches, 1u);
}

TEST_F(ProducerTest, DestructionFlushesBufferedJobs) {
  ProducerOptions options;
  options.linger = std::chrono::seconds(30);
  auto producer = MakeProducer(options);
  ASSERT_NE(producer, nullptr);
  std::vector<Future> futures;
  for (int i = 0; i < 3; ++i) futures.push_back(producer->EnqueueAsync(Job("t")));
  producer.reset();
  for (Future& future : futures) {
    ASSERT_TRUE(Ready(future));
    StatusOr<EnqueueResult> result = future.get();
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(StateOf(result->job_id), v1::JOB_STATE_READY);
  }
}

TEST_F(ProducerTest, IdempotencyKeysPassThrough) {
  auto producer = MakeProducer();
  ASSERT_NE(producer, nullptr);
  StatusOr<EnqueueResult> first = producer->Enqueue(Job("t", "key-1"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->duplicate);

  StatusOr<EnqueueResult> again = producer->Enqueue(Job("t", "key-1"));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(again->job_id, first->job_id);

  Future batched = producer->EnqueueAsync(Job("t", "key-1"));
  EXPECT_TRUE(producer->Flush(std::chrono::seconds(30)));  // all answered
  ASSERT_EQ(batched.wait_for(milliseconds(0)), std::future_status::ready);
  StatusOr<EnqueueResult> third = Get(batched);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_TRUE(third->duplicate);
  EXPECT_EQ(third->job_id, first->job_id);
}

TEST_F(ProducerTest, QuotaRefusalCarriesTheRetryDelay) {
  v1::SetTenantRequest set;
  set.mutable_tenant()->set_name("q");
  set.mutable_tenant()->mutable_quotas()->set_max_queued(1);
  v1::Tenant tenant;
  grpc::ClientContext context;
  context.set_deadline(testing::Deadline());
  ASSERT_TRUE(daemon_.Admin()->SetTenant(&context, set, &tenant).ok());
  auto producer = MakeProducer();
  ASSERT_NE(producer, nullptr);
  ASSERT_TRUE(producer->Enqueue(Job("q")).ok());

  // Enqueue: the delay comes from the fairq-retry-after-ms trailer.
  StatusOr<EnqueueResult> refused = producer->Enqueue(Job("q"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kResourceExhausted);
  EXPECT_EQ(refused.status().retry_after(), milliseconds(1000));  // backlog

  // EnqueueBatch: from the job's own result.
  Future batched = producer->EnqueueAsync(Job("q"));
  producer->Flush();
  StatusOr<EnqueueResult> refused_in_batch = Get(batched);
  ASSERT_FALSE(refused_in_batch.ok());
  EXPECT_EQ(refused_in_batch.status().code(), Code::kResourceExhausted);
  EXPECT_EQ(refused_in_batch.status().retry_after(), milliseconds(1000));
  EXPECT_EQ(producer->stats().retries, 0u);  // quotas are the caller's call
}

TEST_F(ProducerTest, BadInputIsRefusedWithoutACall) {
  ProducerOptions options;
  options.max_batch = 0;
  auto bad = Producer::Create(daemon_.Channel(), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("max_batch"), std::string::npos);
  options.max_batch = 100;
  options.linger = milliseconds::max();  // would overflow the clock
  EXPECT_EQ(Producer::Create(daemon_.Channel(), options).status().message(),
            "ProducerOptions.linger: must be between 0 and 24 h");

  auto producer = MakeProducer();
  ASSERT_NE(producer, nullptr);
  JobSpec both = Job("t");
  both.delay = milliseconds(10);
  both.not_before = std::chrono::system_clock::now();
  StatusOr<EnqueueResult> result = producer->Enqueue(both);
  EXPECT_EQ(result.status().code(), Code::kInvalidArgument);
  // Strings the broker's parser would refuse, with no word of the field.
  JobSpec binary = Job("t\xff");
  result = producer->Enqueue(binary);
  EXPECT_EQ(result.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(result.status().message(), "tenant: not valid UTF-8");
  binary = Job("t");
  binary.labels["k"] = "\xc3";
  EXPECT_EQ(producer->Enqueue(binary).status().message(),
            "labels: not valid UTF-8");
  binary.labels.clear();
  binary.payload = "\xff";  // bytes: anything goes
  EXPECT_TRUE(producer->Enqueue(binary).ok());
  // The broker's own validation comes back as it is.
  StatusOr<EnqueueResult> no_tenant = producer->Enqueue(Job(""));
  EXPECT_EQ(no_tenant.status().code(), Code::kInvalidArgument);
}

// A raw spec gets the same check: refused alone and before buffering, it
// does not fail the batch it would have joined (the broker's parser would
// have refused that whole call, good jobs with it). An empty callback
// sends its job all the same.
TEST_F(ProducerTest, ABadRawSpecIsRefusedAloneAndAnEmptyCallbackIsAllowed) {
  auto producer = MakeProducer();
  ASSERT_NE(producer, nullptr);
  v1::JobSpec bad;
  bad.set_tenant("t");
  bad.set_idempotency_key("k\xff");
  EXPECT_EQ(producer->Enqueue(bad).status().message(),
            "idempotency_key: not valid UTF-8");
  v1::JobSpec good;
  good.set_tenant("t");
  Future good_result = producer->EnqueueAsync(good);
  Future bad_result = producer->EnqueueAsync(bad);
  producer->EnqueueAsync(good, nullptr);
  producer->Flush();
  EXPECT_EQ(Get(bad_result).status().message(),
            "idempotency_key: not valid UTF-8");
  EXPECT_TRUE(Get(good_result).ok());
  EXPECT_EQ(producer->stats().jobs_sent, 2u);
}

// The broker goes away and comes back on the same data; the SDK reaches it
// through a relay whose port stays put while fairqd's changes.
TEST_F(ProducerTest, RetriesUnavailableUntilTheBrokerIsBack) {
  testing::TcpRelay relay;
  ASSERT_TRUE(relay.ok());
  relay.set_target(daemon_.port());
  std::promise<Code> first_retry;
  std::atomic<bool> retried{false};
  ProducerOptions options;
  options.linger = milliseconds(0);
  options.retry.max_attempts = 200;  // ~40 s of 200 ms backoffs: ample
  options.retry.initial_backoff = milliseconds(20);
  options.retry.max_backoff = milliseconds(200);
  options.on_retry = [&](const Status& failure, int, milliseconds) {
    if (!retried.exchange(true)) first_retry.set_value(failure.code());
  };
  auto created = Producer::Create(relay.address(), options);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::unique_ptr<Producer> producer = std::move(*created);
  ASSERT_TRUE(producer->Enqueue(Job("t")).ok());  // connected once

  // Clients cut off first: fairqd's SIGTERM drain waits up to 5 s for
  // open connections to go.
  relay.set_target(0);
  relay.DropConnections();
  ASSERT_EQ(daemon_.Terminate(), 0) << daemon_.Log();
  auto sync = std::async(std::launch::async,
                         [&] { return producer->Enqueue(Job("t", "once")); });
  Future batched = producer->EnqueueAsync(Job("t"));
  std::future<Code> retry = first_retry.get_future();
  ASSERT_EQ(retry.wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(retry.get(), Code::kUnavailable);

  ASSERT_TRUE(daemon_.Start()) << daemon_.error();
  relay.set_target(daemon_.port());
  ASSERT_EQ(sync.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  StatusOr<EnqueueResult> result = sync.get();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(StateOf(result->job_id), v1::JOB_STATE_READY);
  StatusOr<EnqueueResult> batched_result = Get(batched);
  ASSERT_TRUE(batched_result.ok()) << batched_result.status().ToString();
  EXPECT_EQ(StateOf(batched_result->job_id), v1::JOB_STATE_READY);
  // The two calls retried at least twice between them (the counter is the
  // producer's); the batched job, first sent while fairqd was down, got
  // through the outage too (above).
  EXPECT_GE(producer->stats().retries, 2u);
}

TEST(ProducerRetryBudgetTest, GivesUpAfterMaxAttempts) {
  testing::TcpRelay relay;  // with no target: every call is UNAVAILABLE
  ASSERT_TRUE(relay.ok());
  ProducerOptions options;
  options.retry.max_attempts = 3;
  options.retry.initial_backoff = milliseconds(10);
  options.retry.max_backoff = milliseconds(20);
  int retries = 0;
  options.on_retry = [&](const Status&, int, milliseconds) { ++retries; };
  auto producer = Producer::Create(relay.address(), options);
  ASSERT_TRUE(producer.ok());
  StatusOr<EnqueueResult> result = (*producer)->Enqueue(Job("t"));
  EXPECT_EQ(result.status().code(), Code::kUnavailable);
  EXPECT_EQ(retries, 2);
}

// Destruction sends what is buffered within close_timeout, not the whole
// retry budget of every batch in turn: against a broker that stays down the
// batch in flight stops retrying, and the batches not sent get
// DEADLINE_EXCEEDED. With these options three batches took 3 x 1,000
// attempts (about 100 s); close_timeout 0 fails what is buffered at once.
TEST(ProducerRetryBudgetTest, DestructionEndsAtCloseTimeout) {
  testing::TcpRelay relay;  // with no target: every call is UNAVAILABLE
  ASSERT_TRUE(relay.ok());
  ProducerOptions options;
  options.max_batch = 1;
  options.linger = milliseconds(0);
  options.retry.max_attempts = 1000;
  options.retry.initial_backoff = milliseconds(20);
  options.retry.max_backoff = milliseconds(50);
  options.close_timeout = milliseconds(0);
  std::atomic<int> retries{0};
  options.on_retry = [&](const Status&, int, milliseconds) { ++retries; };
  auto producer = Producer::Create(relay.address(), options);
  ASSERT_TRUE(producer.ok());
  std::vector<Future> results;
  for (int i = 0; i < 3; ++i) {
    results.push_back((*producer)->EnqueueAsync(Job("t")));
  }
  producer->reset();
  for (Future& result : results) {
    ASSERT_EQ(result.wait_for(milliseconds(0)), std::future_status::ready);
  }
  // The first was sent, and refused, or the sender had not reached it yet.
  Code first = results[0].get().status().code();
  EXPECT_TRUE(first == Code::kUnavailable || first == Code::kDeadlineExceeded);
  for (size_t i = 1; i < results.size(); ++i) {
    Status unsent = results[i].get().status();
    EXPECT_EQ(unsent.code(), Code::kDeadlineExceeded);
    EXPECT_NE(unsent.message().find("close_timeout"), std::string::npos)
        << unsent.message();
  }
  EXPECT_LT(retries.load(), 100);  // only the first batch's, before closing
}

// Flush(timeout) returns false when the jobs have no result by then, and
// leaves them to be sent (here, until close_timeout gives up on them).
TEST(ProducerRetryBudgetTest, FlushWithATimeoutSaysWhetherAllWereAnswered) {
  testing::TcpRelay relay;  // with no target: every call is UNAVAILABLE
  ASSERT_TRUE(relay.ok());
  ProducerOptions options;
  options.linger = std::chrono::seconds(30);  // only Flush sends
  options.retry.max_attempts = 1000;
  options.retry.initial_backoff = milliseconds(20);
  options.retry.max_backoff = milliseconds(50);
  options.close_timeout = milliseconds(0);
  auto producer = Producer::Create(relay.address(), options);
  ASSERT_TRUE(producer.ok());
  EXPECT_TRUE((*producer)->Flush(milliseconds(0)));  // nothing buffered
  Future result = (*producer)->EnqueueAsync(Job("t"));
  EXPECT_FALSE((*producer)->Flush(milliseconds(50)));
  EXPECT_NE(result.wait_for(milliseconds(0)), std::future_status::ready);
  producer->reset();
  EXPECT_NE(result.get().status().code(), Code::kOk);
}

// A broker that takes every batch and answers one result short, as a
// fairqd of another version might.
class ShortAnswerBroker final : public v1::Producer::Service {
 public:
  ShortAnswerBroker() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  ~ShortAnswerBroker() override {
    if (server_ != nullptr) server_->Shutdown();
  }
  bool ok() const { return server_ != nullptr; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  grpc::Status EnqueueBatch(grpc::ServerContext*,
                            const v1::EnqueueBatchRequest* request,
                            v1::EnqueueBatchResponse* response) override {
    for (int i = 1; i < request->jobs_size(); ++i) {
      response->add_results()->set_job_id(static_cast<uint64_t>(i));
    }
    return grpc::Status::OK;
  }

 private:
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

// A reply whose results cannot be matched to the jobs fails each of them,
// saying they may be enqueued: no job gets another's id.
TEST(ProducerReplyTest, AReplyOneResultShortFailsTheBatchSayingItWasTaken) {
  ShortAnswerBroker broker;
  ASSERT_TRUE(broker.ok());
  ProducerOptions options;
  options.linger = std::chrono::seconds(30);  // only Flush sends
  auto producer = Producer::Create(broker.address(), options);
  ASSERT_TRUE(producer.ok());
  Future first = (*producer)->EnqueueAsync(Job("t"));
  Future second = (*producer)->EnqueueAsync(Job("t"));
  ASSERT_TRUE((*producer)->Flush(kBound));
  for (Future* result : {&first, &second}) {
    Status status = result->get().status();
    EXPECT_EQ(status.code(), Code::kInternal);
    EXPECT_NE(status.message().find("1 results for 2 jobs"), std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find("may be enqueued"), std::string::npos);
  }
  EXPECT_EQ((*producer)->stats().retries, 0u);
}

}  // namespace
}  // namespace fairq::client
