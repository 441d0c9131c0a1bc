// Reporter against a stand-in broker (an in-process Worker service on a
// loopback port), for an answer a real fairqd gives only under load:
// RESOURCE_EXHAUSTED when its command queue is full.
#include "client/sdk/reporter.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/sdk/error_text.h"

namespace fairq::client::internal {
namespace {

using std::chrono::milliseconds;

// Refuses the first `refusals` Complete or Fail calls with RESOURCE_EXHAUSTED
// and acknowledges every item of the later ones; keeps what it was sent.
class StandInBroker final : public v1::Worker::Service {
 public:
  explicit StandInBroker(int refusals) : refusals_(refusals) {}

  grpc::Status Complete(grpc::ServerContext*,
                        const v1::CompleteRequest* request,
                        v1::AckResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++calls_;
    if (refusals_-- > 0) return Refusal();
    for (const v1::Completion& done : request->completions()) {
      completed_.push_back(done.job_id());
      response->add_results();
    }
    return grpc::Status::OK;
  }

  grpc::Status Fail(grpc::ServerContext*, const v1::FailRequest* request,
                    v1::AckResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++calls_;
    if (refusals_-- > 0) return Refusal();
    for (const v1::Failure& failure : request->failures()) {
      errors_.push_back(failure.error());
      response->add_results();
    }
    return grpc::Status::OK;
  }

  int calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  std::vector<uint64_t> completed() {
    std::lock_guard<std::mutex> lock(mu_);
    return completed_;
  }
  std::vector<std::string> errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }

 private:
  static grpc::Status Refusal() {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "dispatcher: command queue full");
  }

  std::mutex mu_;
  int refusals_;
  int calls_ = 0;
  std::vector<uint64_t> completed_;
  std::vector<std::string> errors_;
};

class ReporterTest : public ::testing::Test {
 protected:
  void Serve(int refusals) {
    broker_ = std::make_unique<StandInBroker>(refusals);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(broker_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::Worker::NewStub(channel_);
    options_.retry = {5, milliseconds(1), milliseconds(1), 0};
    options_.on_error = [this](const Status& error) {
      std::lock_guard<std::mutex> lock(mu_);
      errors_.push_back(error.ToString());
    };
  }

  // Reports `job` as `kind` with `error`, and returns once it is
  // acknowledged or given up on (the Reporter's destructor sends what is
  // queued).
  void ReportOne(const RunningJob& job, Reporter::Kind kind,
                 const std::string& error) {
    Reporter reporter(channel_.get(), stub_.get(), &options_, &counters_);
    reporter.Report(job, kind, error, std::chrono::nanoseconds(0));
  }

  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  std::unique_ptr<StandInBroker> broker_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Worker::Stub> stub_;
  WorkerOptions options_;
  Counters counters_;
  std::mutex mu_;
  std::vector<std::string> errors_;  // from on_error
};

RunningJob Job(uint64_t id) {
  LeasedJobInfo info;
  info.id = id;
  return RunningJob(info, /*lease_token=*/id, milliseconds(1000));
}

TEST_F(ReporterTest, ACompletionRefusedForAFullQueueIsSentAgain) {
  Serve(/*refusals=*/2);
  RunningJob a = Job(7);
  ReportOne(a, Reporter::Kind::kSuccess, "");
  EXPECT_EQ(broker_->calls(), 3);
  EXPECT_EQ(broker_->completed(), (std::vector<uint64_t>{7}));
  EXPECT_EQ(counters_.succeeded.load(), 1u);
  EXPECT_EQ(counters_.report_errors.load(), 0u);
  EXPECT_TRUE(errors_.empty());
}

TEST_F(ReporterTest, RefusalsPastTheRetryBudgetAreCountedAndReported) {
  Serve(/*refusals=*/100);
  RunningJob a = Job(7);
  ReportOne(a, Reporter::Kind::kRetry, "busy");
  EXPECT_EQ(broker_->calls(), 5);  // retry.max_attempts
  EXPECT_EQ(counters_.report_errors.load(), 1u);
  ASSERT_EQ(errors_.size(), 1u);
  EXPECT_NE(errors_[0].find("RESOURCE_EXHAUSTED"), std::string::npos)
      << errors_[0];
}

// A handler's error text goes out as the broker takes it (ErrorText).
TEST_F(ReporterTest, FailuresCarryTheirErrorMadeFit) {
  Serve(/*refusals=*/0);
  RunningJob a = Job(7);
  ReportOne(a, Reporter::Kind::kFail, "bad \xFF byte");
  ASSERT_EQ(broker_->errors().size(), 1u);
  EXPECT_EQ(broker_->errors()[0], ErrorText("bad \xFF byte"));
  EXPECT_EQ(counters_.failed.load(), 1u);
}

}  // namespace
}  // namespace fairq::client::internal
