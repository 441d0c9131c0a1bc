// Reporter against a stand-in broker, for an answer a real fairqd gives
// only under load: RESOURCE_EXHAUSTED when its command queue is full.
#include "client/sdk/reporter.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/sdk/error_text.h"
#include "client/sdk/grpc_util.h"
#include "client/sdk/stand_in_broker.h"
#include "client/sdk/tcp_relay.h"

namespace fairq::client::internal {
namespace {

using std::chrono::milliseconds;

class ReporterTest : public ::testing::Test {
 protected:
  void Serve(int refusals) {
    broker_ = std::make_unique<testing::StandInBroker>(refusals);
    ASSERT_FALSE(broker_->address().empty());
    channel_ = grpc::CreateChannel(broker_->address(),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::Worker::NewStub(channel_);
    options_.retry = {5, milliseconds(1), milliseconds(1), 0};
    options_.on_error = [this](const Status& error) {
      std::lock_guard<std::mutex> lock(mu_);
      errors_.push_back(error.ToString());
    };
  }
  // A broker that takes the next report but never answers it: the call
  // runs out of its 200 ms and is sent again.
  void ServeLosingOneAnswer() {
    Serve(/*refusals=*/0);
    broker_->LoseAnswers(1);
    options_.rpc_timeout = milliseconds(200);
  }

  // Reports `job` as `kind` with `error`, and returns once it is
  // acknowledged or given up on (the Reporter's destructor sends what is
  // queued).
  void ReportOne(const std::shared_ptr<RunningJob>& job, Reporter::Kind kind,
                 const std::string& error) {
    Reporter reporter(channel_.get(), stub_.get(), &options_, &counters_,
                      [this](const RunningJob* reported) {
                        std::lock_guard<std::mutex> lock(mu_);
                        reported_.push_back(reported->context.id());
                      });
    reporter.Report(job, kind, error, std::chrono::nanoseconds(0));
  }

  std::unique_ptr<testing::StandInBroker> broker_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Worker::Stub> stub_;
  WorkerOptions options_;
  Counters counters_;
  std::mutex mu_;
  std::vector<std::string> errors_;  // from on_error
  std::vector<uint64_t> reported_;   // jobs `reported` was told of
};

std::shared_ptr<RunningJob> Job(uint64_t id) {
  LeasedJobInfo info;
  info.id = id;
  return std::make_shared<RunningJob>(info, /*lease_token=*/id,
                                      milliseconds(1000));
}

TEST_F(ReporterTest, ACompletionRefusedForAFullQueueIsSentAgain) {
  Serve(/*refusals=*/2);
  std::shared_ptr<RunningJob> a = Job(7);
  ReportOne(a, Reporter::Kind::kSuccess, "");
  EXPECT_EQ(broker_->acks(), 3);
  EXPECT_EQ(broker_->completed(), (std::vector<uint64_t>{7}));
  EXPECT_EQ(counters_.succeeded.load(), 1u);
  EXPECT_EQ(counters_.report_errors.load(), 0u);
  EXPECT_TRUE(errors_.empty());
  EXPECT_EQ(reported_, (std::vector<uint64_t>{7}));  // once, when acknowledged
}

TEST_F(ReporterTest, RefusalsPastTheRetryBudgetAreCountedAndReported) {
  Serve(/*refusals=*/100);
  std::shared_ptr<RunningJob> a = Job(7);
  ReportOne(a, Reporter::Kind::kRetry, "busy");
  EXPECT_EQ(broker_->acks(), 5);  // retry.max_attempts
  EXPECT_EQ(counters_.report_errors.load(), 1u);
  ASSERT_EQ(errors_.size(), 1u);
  EXPECT_NE(errors_[0].find("RESOURCE_EXHAUSTED"), std::string::npos)
      << errors_[0];
  EXPECT_EQ(reported_, (std::vector<uint64_t>{7}));  // given up on: done too
}

// The broker takes the Complete but its answer never comes: the call runs
// out of time and is sent again (before, it was given up on, and the job
// ran again once its lease lapsed). The repeat finds the job no longer
// live, which a lapsed lease would look like too: still an error, saying
// the first attempt may have been taken.
TEST_F(ReporterTest, ACompletionWhoseAnswerWasLostIsSentAgain) {
  ServeLosingOneAnswer();
  ReportOne(Job(7), Reporter::Kind::kSuccess, "");
  EXPECT_EQ(broker_->acks(), 2);
  EXPECT_EQ(broker_->completed(), (std::vector<uint64_t>{7}));
  EXPECT_EQ(counters_.report_errors.load(), 1u);
  ASSERT_EQ(errors_.size(), 1u);
  EXPECT_NE(errors_[0].find("NOT_FOUND"), std::string::npos) << errors_[0];
  EXPECT_NE(errors_[0].find("may have taken the report"), std::string::npos)
      << errors_[0];
  EXPECT_EQ(reported_, (std::vector<uint64_t>{7}));
}

// For a failure to be retried the repeat finds the lease token stale.
TEST_F(ReporterTest, ARetryWhoseAnswerWasLostIsSentAgain) {
  ServeLosingOneAnswer();
  ReportOne(Job(7), Reporter::Kind::kRetry, "flaky");
  EXPECT_EQ(broker_->acks(), 2);
  EXPECT_EQ(broker_->errors(), (std::vector<std::string>{"flaky"}));
  ASSERT_EQ(errors_.size(), 1u);
  EXPECT_NE(errors_[0].find("FAILED_PRECONDITION"), std::string::npos)
      << errors_[0];
  EXPECT_NE(errors_[0].find("may have taken the report"), std::string::npos)
      << errors_[0];
}

// Without a first attempt that may have landed, the answer carries no note.
TEST_F(ReporterTest, AReportOfAJobNoLongerLiveIsAnError) {
  Serve(/*refusals=*/0);
  ReportOne(Job(7), Reporter::Kind::kSuccess, "");
  ReportOne(Job(7), Reporter::Kind::kSuccess, "");
  EXPECT_EQ(counters_.succeeded.load(), 1u);
  EXPECT_EQ(counters_.report_errors.load(), 1u);
  ASSERT_EQ(errors_.size(), 1u);
  EXPECT_NE(errors_[0].find("NOT_FOUND"), std::string::npos) << errors_[0];
  EXPECT_EQ(errors_[0].find("may have"), std::string::npos) << errors_[0];
}

// Reports that pile up while a call is in flight go out in calls of at
// most max_report_batch items, so a broker whose max_batch is smaller than
// the API's 1,000 takes them all. The first call is refused once and sent
// again 100 ms later; the reports made meanwhile pile up. (With calls of
// up to 1,000 the broker refused them whole, and the jobs, all done,
// would have run again.)
TEST_F(ReporterTest, PiledUpReportsGoInCallsTheBrokersMaxBatchTakes) {
  Serve(/*refusals=*/1);
  options_.retry = {5, milliseconds(100), milliseconds(100), 0};
  broker_->LimitBatch(2);
  options_.max_report_batch = 2;
  {
    Reporter reporter(channel_.get(), stub_.get(), &options_, &counters_,
                      nullptr);
    for (uint64_t id = 1; id <= 5; ++id) {
      reporter.Report(Job(id), Reporter::Kind::kSuccess, "",
                      std::chrono::nanoseconds(0));
    }
  }
  std::vector<uint64_t> completed = broker_->completed();
  std::sort(completed.begin(), completed.end());
  EXPECT_EQ(completed, (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(counters_.succeeded.load(), 5u);
  EXPECT_EQ(counters_.report_errors.load(), 0u);
  EXPECT_TRUE(errors_.empty()) << errors_[0];
}

// A report waits for a broker that is down (gRPC's wait_for_ready), as
// heartbeats and Lease do: with one attempt allowed, it lands once the
// broker is back. The broker is reached through a relay that has no target
// until the channel has failed to connect, which is when a call that does
// not wait fails. (Such a report was given up on, and the job ran again.)
TEST_F(ReporterTest, AReportWaitsForABrokerThatIsDown) {
  Serve(/*refusals=*/0);
  options_.retry.max_attempts = 1;
  testing::TcpRelay relay;
  ASSERT_TRUE(relay.ok());
  channel_ = MakeChannel(relay.address(), options_.retry);
  stub_ = v1::Worker::NewStub(channel_);
  {
    Reporter reporter(channel_.get(), stub_.get(), &options_, &counters_,
                      nullptr);
    reporter.Report(Job(7), Reporter::Kind::kSuccess, "",
                    std::chrono::nanoseconds(0));
    auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(10);
    grpc_connectivity_state state = channel_->GetState(false);
    while (state != GRPC_CHANNEL_TRANSIENT_FAILURE &&
           channel_->WaitForStateChange(state, deadline)) {
      state = channel_->GetState(false);
    }
    ASSERT_EQ(state, GRPC_CHANNEL_TRANSIENT_FAILURE);
    const std::string& address = broker_->address();
    relay.set_target(std::stoi(address.substr(address.rfind(':') + 1)));
  }
  EXPECT_EQ(broker_->completed(), (std::vector<uint64_t>{7}));
  EXPECT_EQ(counters_.report_errors.load(), 0u);
}

// A handler's error text goes out as the broker takes it (ErrorText).
TEST_F(ReporterTest, FailuresCarryTheirErrorMadeFit) {
  Serve(/*refusals=*/0);
  std::shared_ptr<RunningJob> a = Job(7);
  ReportOne(a, Reporter::Kind::kFail, "bad \xFF byte");
  ASSERT_EQ(broker_->errors().size(), 1u);
  EXPECT_EQ(broker_->errors()[0], ErrorText("bad \xFF byte"));
  EXPECT_EQ(counters_.failed.load(), 1u);
}

}  // namespace
}  // namespace fairq::client::internal
