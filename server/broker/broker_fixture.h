// BrokerFixture: a Broker in process for tests, with a real store in a temp
// directory, commands run as dispatcher turns (each committed as the writer
// would), and a clock the test moves. Single-threaded, as the dispatcher is.
#ifndef FAIRQ_SERVER_BROKER_BROKER_FIXTURE_H_
#define FAIRQ_SERVER_BROKER_BROKER_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "google/protobuf/util/time_util.h"
#include "server/broker/broker.h"
#include "store/store.h"
#include "tests/util/scoped_temp_dir.h"

namespace fairq::server {

class BrokerFixture : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void TearDown() override {
    broker_.reset();
    store_.reset();
  }

  void Open() {
    store_ = std::move(store::Store::Open({dir_.path(), false, env_})).value();
    // Each start draws other tokens, as a restarted fairqd does.
    broker_ = std::move(Broker::Create(config_, store_.get(),
                                       metrics::NoMetrics(), seed_ + opens_++))
                  .value();
    Turn turn(store_->NewBatch());
    ASSERT_TRUE(broker_->Restore(now_, turn).ok());
    ASSERT_TRUE(Commit(turn).ok());
  }
  void Reopen() {
    broker_.reset();
    store_.reset();
    Open();
  }

  // As the dispatcher and the writer do: reply to what need not wait for
  // the apply, apply and reply to what need not wait for the sync, sync and
  // reply to the rest.
  Status Commit(Turn& turn) {
    std::vector<Reply> early = std::move(turn.replies_before_apply);
    for (Reply& reply : early) reply(Status::Ok());
    std::vector<store::WriteBatch> batches;
    batches.push_back(std::move(turn.batch));
    Status status = store_->Apply(batches);
    for (Reply& reply : turn.replies_before_sync) reply(status);
    if (status.ok()) status = store_->SyncLog();
    for (Reply& reply : turn.replies) reply(status);
    return status;
  }

  // One dispatcher turn with the command (if any), then its commit.
  void Turn1(Command* command) {
    Turn turn(store_->NewBatch());
    std::vector<Command> commands;
    if (command) commands.push_back(std::move(*command));
    broker_->RunTurn(commands, now_, turn);
    // A failed commit reaches the calls' Done, which the test inspects.
    (void)Commit(turn);
  }
  void Advance(int64_t ms) {
    now_ += ms;
    Turn1(nullptr);
  }

  // One job's Enqueue in a turn of its own: its result.
  v1::EnqueueResult EnqueueResultOf(const v1::JobSpec& spec) {
    v1::EnqueueBatchResponse response;
    std::optional<Status> done;
    Command command =
        EnqueueCommand{{&spec}, &response, [&](const Status& s) { done = s; }};
    Turn1(&command);
    EXPECT_TRUE(done && done->ok());
    return response.results_size() > 0 ? response.results(0)
                                       : v1::EnqueueResult();
  }
  uint64_t Enqueue(const v1::JobSpec& spec) {
    v1::EnqueueResult result = EnqueueResultOf(spec);
    EXPECT_EQ(result.code(), 0) << result.message();
    return result.job_id();
  }
  // The jobs of one EnqueueBatch, in a turn of their own (so stored as one
  // page): their ids.
  std::vector<uint64_t> EnqueueBatch(const std::vector<v1::JobSpec>& specs) {
    std::vector<const v1::JobSpec*> pointers;
    for (const v1::JobSpec& spec : specs) pointers.push_back(&spec);
    v1::EnqueueBatchResponse response;
    std::optional<Status> done;
    Command command = EnqueueCommand{std::move(pointers), &response,
                                     [&](const Status& s) { done = s; }};
    Turn1(&command);
    EXPECT_TRUE(done && done->ok());
    std::vector<uint64_t> ids;
    for (const v1::EnqueueResult& result : response.results()) {
      EXPECT_EQ(result.code(), 0) << result.message();
      ids.push_back(result.job_id());
    }
    return ids;
  }
  // One job of `tenant` that the test expects refused: its result.
  v1::EnqueueResult EnqueueRefused(const std::string& tenant,
                                   const std::string& pool = "") {
    v1::JobSpec spec;
    spec.set_tenant(tenant);
    spec.set_pool(pool);
    return EnqueueResultOf(spec);
  }
  uint64_t Enqueue(const std::string& tenant) {
    v1::JobSpec spec;
    spec.set_tenant(tenant);
    spec.set_payload("payload-" + tenant);
    return Enqueue(spec);
  }

  // A Lease call that waits up to `wait_ms`; `done` says whether it ended.
  struct LeaseCall {
    v1::LeaseRequest request;
    v1::LeaseResponse response;
    std::optional<Status> done;
  };
  std::unique_ptr<LeaseCall> NewLeaseCall(
      int64_t wait_ms = 0, uint32_t max_jobs = 1,
      const std::vector<std::string>& pools = {}) {
    auto call = std::make_unique<LeaseCall>();
    call->request.set_worker_id("w1");
    for (const std::string& pool : pools) call->request.add_pools(pool);
    call->request.set_slots(8);
    call->request.set_max_jobs(max_jobs);
    *call->request.mutable_wait() =
        google::protobuf::util::TimeUtil::MillisecondsToDuration(wait_ms);
    return call;
  }
  Command LeaseCommandFor(LeaseCall* call) {
    return LeaseCommand{next_waiter_++, &call->request, &call->response,
                        [call](const Status& s) { call->done = s; }};
  }
  // Reads ids [begin, end) as the read-ahead thread does and hands the
  // records to the broker; returns how many there were.
  size_t ReadAhead(uint64_t begin, uint64_t end) {
    auto records = store_->ReadJobs(begin, end, 1 << 20);
    EXPECT_TRUE(records.ok()) << records.status().ToString();
    if (!records.ok()) return 0;
    size_t read = records->jobs.size();
    broker_->CacheReadAhead(std::move(records->jobs));
    return read;
  }

  // The reply as a client parses it. A spec read ahead goes out encoded, as
  // an unknown field of its Job (broker_lease.cc, AttachSpec): only on the
  // wire does it become the Job's spec.
  static v1::LeaseResponse AsReceived(const v1::LeaseResponse& response) {
    v1::LeaseResponse received;
    EXPECT_TRUE(received.ParseFromString(response.SerializeAsString()));
    return received;
  }

  // A one-job Lease handled in `turn`, which the caller commits.
  std::unique_ptr<LeaseCall> LeaseIn(Turn& turn) {
    auto call = NewLeaseCall();
    Command command = LeaseCommandFor(call.get());
    broker_->Handle(command, now_, turn);
    return call;
  }
  std::unique_ptr<LeaseCall> Lease(int64_t wait_ms = 0, uint32_t max_jobs = 1,
                                   const std::vector<std::string>& pools = {}) {
    auto call = NewLeaseCall(wait_ms, max_jobs, pools);
    Command command = LeaseCommandFor(call.get());
    Turn1(&command);
    return call;
  }

  Status Complete(uint64_t job, uint64_t token, v1::AckResponse* response) {
    v1::CompleteRequest request;
    v1::Completion* completion = request.add_completions();
    completion->set_job_id(job);
    completion->set_lease_token(token);
    *completion->mutable_runtime() =
        google::protobuf::util::TimeUtil::MillisecondsToDuration(10);
    std::optional<Status> done;
    Command command =
        CompleteCommand{&request, response, [&](const Status& s) { done = s; }};
    Turn1(&command);
    return *done;
  }
  // A one-job lease whose turn is then dropped unapplied, as a process
  // crash would drop it: the reply, if it went out before the write (its
  // spec came from the payload cache), else an empty one. The broker must
  // then be reopened, as after the crash.
  v1::LeaseResponse LeaseNotWritten(const std::string& pool = "") {
    auto call = NewLeaseCall(0, 1, {pool});
    Command command = LeaseCommandFor(call.get());
    Turn turn(store_->NewBatch());
    broker_->Handle(command, now_, turn);
    for (Reply& reply : turn.replies_before_apply) reply(Status::Ok());
    return call->done && call->done->ok() ? call->response
                                          : v1::LeaseResponse();
  }
  Status Heartbeat(uint64_t job, uint64_t token,
                   v1::HeartbeatResponse* response = nullptr) {
    v1::HeartbeatRequest request;
    request.set_job_id(job);
    request.set_lease_token(token);
    v1::HeartbeatResponse ignored;
    std::optional<Status> done;
    Command command = HeartbeatCommand{&request, response ? response : &ignored,
                                       [&](const Status& s) { done = s; }};
    Turn1(&command);
    return *done;
  }
  int32_t FailCode(uint64_t job, uint64_t token, bool retryable = true) {
    v1::FailRequest request;
    v1::Failure* failure = request.add_failures();
    failure->set_job_id(job);
    failure->set_lease_token(token);
    failure->set_retryable(retryable);
    return ItemCode<FailCommand>(request);
  }
  int32_t ReleaseCode(uint64_t job, uint64_t token) {
    v1::ReleaseRequest request;
    v1::ReleasedLease* lease = request.add_leases();
    lease->set_job_id(job);
    lease->set_lease_token(token);
    return ItemCode<ReleaseCommand>(request);
  }
  // Runs a report of one item in a turn: that item's result code.
  template <class ReportCommand, class Request>
  int32_t ItemCode(const Request& request) {
    v1::AckResponse response;
    std::optional<Status> done;
    Command command =
        ReportCommand{&request, &response, [&](const Status& s) { done = s; }};
    Turn1(&command);
    EXPECT_TRUE(done && done->ok());
    return response.results_size() ? response.results(0).code() : -1;
  }
  int32_t CompleteCode(uint64_t job, uint64_t token) {
    v1::AckResponse response;
    EXPECT_TRUE(Complete(job, token, &response).ok());
    return response.results(0).code();
  }

  // A CancelJob for `id` as the producer service hands it on (the job's
  // record read): its answer, or nullopt if none came.
  std::optional<Status> Cancel(uint64_t id) {
    v1::Job job;
    job.set_id(id);
    std::optional<Status> done;
    Command command =
        CancelJobCommand{&job, [&](const Status& s) { done = s; }};
    Turn1(&command);
    return done;
  }

  // A GetJob for `id`, read into `job`: its answer, or nullopt if none came.
  std::optional<Status> GetJob(uint64_t id, v1::Job* job) {
    job->set_id(id);
    std::optional<Status> done;
    Command command = GetJobCommand{job, [&](const Status& s) { done = s; }};
    Turn1(&command);
    return done;
  }

  v1::TenantStats Stats(const std::string& tenant) {
    v1::GetQueueStatsRequest request;
    request.set_tenant(tenant);
    v1::GetQueueStatsResponse response;
    Command command =
        QueueStatsCommand{&request, &response, [](const Status&) {}};
    Turn1(&command);
    return response.tenants_size() ? response.tenants(0) : v1::TenantStats();
  }

  config::DaemonConfig config_;
  testing::ScopedTempDir dir_{"broker_test"};
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Broker> broker_;
  rocksdb::Env* env_ = nullptr;      // a fault-injecting Env in some tests
  int64_t now_ = 1'764'000'000'000;  // a real Unix time (2025), in ms
  // The brokers' seed (tokens, backoff jitter): fixed, so that a run can
  // be replayed; a test may set another before SetUp opens the broker.
  uint64_t seed_ = 1;
  uint64_t opens_ = 0;
  WaiterId next_waiter_ = 1;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_BROKER_FIXTURE_H_
