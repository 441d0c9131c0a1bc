// CallLoop, UnaryCall and HealthService against a real gRPC server on a
// loopback port, with a thread standing in for the dispatcher.
#include "server/service/call_loop.h"

#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "fairq/v1/fairq.grpc.pb.h"
#include "server/service/health_service.h"

namespace fairq::server {
namespace {

// A bound on each wait, not a pace: answers come within milliseconds.
constexpr std::chrono::seconds kBound(10);

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + kBound;
}

template <class T>
bool Arrives(std::future<T>& future) {
  return future.wait_for(kBound) == std::future_status::ready;
}

class CallLoopTest : public ::testing::Test {
 protected:
  using Worker = v1::Worker::AsyncService;

  // Serves the handlers set so far and starts the loop's thread.
  void StartServer() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(&worker_);
    builder.RegisterAsyncGenericService(health_.service());
    loop_ = std::make_unique<CallLoop>(builder.AddCompletionQueue());
    loop_->Serve(&worker_, &Worker::RequestHeartbeat, heartbeat_);
    loop_->Serve(&worker_, &Worker::RequestFail, fail_, {.reads_store = true});
    loop_->Serve(&worker_, &Worker::RequestLease, lease_, {.watch_done = true});
    server_ = builder.BuildAndStart();
    ASSERT_NE(port_, 0);
    loop_->Start();
    health_.Start(loop_->queue());
    thread_ = std::thread([this] {
      loop_thread_.set_value(std::this_thread::get_id());
      while (!stop_.load()) loop_->Collect(std::nullopt);
    });
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::Worker::NewStub(channel_);
  }

  void TearDown() override {
    if (!loop_) return;
    stop_.store(true);
    loop_->Kick();
    thread_.join();
    loop_->Drain();
    server_->Shutdown(Deadline());
    loop_->Shutdown();
  }

  grpc::Status CallHealth(const std::string& method, const std::string& body,
                          std::string* reply) {
    grpc::GenericStub stub(channel_);
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    grpc::Slice slice(body);
    grpc::ByteBuffer request(&slice, 1), response;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                   [&](grpc::Status status) { done.set_value(status); });
    std::future<grpc::Status> answered = done.get_future();
    if (!Arrives(answered)) {
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "no answer");
    }
    grpc::Status status = answered.get();
    std::vector<grpc::Slice> slices;
    if (status.ok() && response.Dump(&slices).ok()) {
      for (const grpc::Slice& s : slices) {
        reply->append(reinterpret_cast<const char*>(s.begin()), s.size());
      }
    }
    return status;
  }

  std::function<void(Call&, const v1::HeartbeatRequest*,
                     v1::HeartbeatResponse*)>
      heartbeat_ =
          [](Call& call, const v1::HeartbeatRequest*, v1::HeartbeatResponse*) {
            call.Finish(grpc::Status::OK);
          };
  std::function<void(Call&, const v1::FailRequest*, v1::AckResponse*)> fail_ =
      [](Call& call, const v1::FailRequest*, v1::AckResponse*) {
        call.Finish(grpc::Status::OK);
      };
  std::function<void(Call&, const v1::LeaseRequest*, v1::LeaseResponse*)>
      lease_ = [](Call& call, const v1::LeaseRequest*, v1::LeaseResponse*) {
        call.Finish(grpc::Status::OK);
      };

  Worker worker_;
  HealthService health_;
  std::unique_ptr<CallLoop> loop_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::promise<std::thread::id> loop_thread_;
  std::thread thread_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Worker::Stub> stub_;
};

TEST_F(CallLoopTest, HandlersRunOnTheLoopThreadUnlessTheyReadTheStore) {
  std::promise<std::thread::id> heartbeat_thread, fail_thread;
  heartbeat_ = [&](Call& call, const v1::HeartbeatRequest* request,
                   v1::HeartbeatResponse* response) {
    heartbeat_thread.set_value(std::this_thread::get_id());
    response->set_yield(request->job_id() == 42);
    call.Finish(grpc::Status::OK);
  };
  fail_ = [&](Call& call, const v1::FailRequest*, v1::AckResponse*) {
    fail_thread.set_value(std::this_thread::get_id());
    call.Finish(grpc::Status(grpc::StatusCode::NOT_FOUND, "fail: no lease"));
  };
  StartServer();
  std::thread::id loop = loop_thread_.get_future().get();

  grpc::ClientContext hb_context;
  hb_context.set_deadline(Deadline());
  v1::HeartbeatRequest hb;
  hb.set_job_id(42);
  v1::HeartbeatResponse hb_reply;
  ASSERT_TRUE(stub_->Heartbeat(&hb_context, hb, &hb_reply).ok());
  EXPECT_TRUE(hb_reply.yield());  // the handler's own response
  EXPECT_EQ(heartbeat_thread.get_future().get(), loop);

  grpc::ClientContext fail_context;
  fail_context.set_deadline(Deadline());
  v1::AckResponse ack;
  grpc::Status failed = stub_->Fail(&fail_context, v1::FailRequest(), &ack);
  EXPECT_EQ(failed.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(failed.error_message(), "fail: no lease");
  EXPECT_NE(fail_thread.get_future().get(), loop);
}

// A Lease call whose handler watches it and leaves it waiting, canceled
// by its client; the loop has heard of the cancel when this returns.
class CanceledCallTest : public CallLoopTest {
 protected:
  void SetUp() override {
    lease_ = [this](Call& call, const v1::LeaseRequest*, v1::LeaseResponse*) {
      call.Watch([this] { canceled_.set_value(); },
                 [this](Delivery delivery) { done_.set_value(delivery); });
      waiting_.set_value(&call);
    };
    StartServer();
    context_.set_deadline(Deadline());
    stub_->async()->Lease(&context_, &request_, &reply_,
                          [this](grpc::Status s) { answered_.set_value(s); });
    std::future<Call*> call = waiting_.get_future();
    ASSERT_TRUE(Arrives(call));
    call_ = call.get();
    context_.TryCancel();
    std::future<void> heard = canceled_.get_future();
    ASSERT_TRUE(Arrives(heard));
  }

  std::promise<Call*> waiting_;
  std::promise<void> canceled_;
  std::promise<Delivery> done_;
  std::promise<grpc::Status> answered_;
  grpc::ClientContext context_;
  v1::LeaseRequest request_;
  v1::LeaseResponse reply_;
  Call* call_ = nullptr;
};

// As the callback API's OnCancel and OnDone: a waiting call canceled by
// its client hears of it, and is answered and freed afterwards. An error
// answer sends no response: whatever the handler put in it is lost.
TEST_F(CanceledCallTest, AnErrorAnswerAfterTheCancelLosesTheResponse) {
  std::future<Delivery> finished = done_.get_future();
  EXPECT_EQ(finished.wait_for(std::chrono::seconds(0)),
            std::future_status::timeout);  // not before it is answered
  call_->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "canceled"));
  ASSERT_TRUE(Arrives(finished));
  EXPECT_EQ(finished.get(), Delivery::kNotSent);
  std::future<grpc::Status> answered = answered_.get_future();
  ASSERT_TRUE(Arrives(answered));
  EXPECT_EQ(answered.get().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(CanceledCallTest, AnOkAnswerAfterTheCancelIsReportedLost) {
  call_->Finish(grpc::Status::OK);
  std::future<Delivery> finished = done_.get_future();
  ASSERT_TRUE(Arrives(finished));
  EXPECT_EQ(finished.get(), Delivery::kMaybeLost);
  std::future<grpc::Status> answered = answered_.get_future();
  EXPECT_TRUE(Arrives(answered));
}

// A Lease answered with an error after its jobs were granted (their specs
// could not be read): the worker never sees them, so they must go back.
TEST_F(CallLoopTest, AnErrorAnswerReportsTheResponseLost) {
  std::promise<Delivery> done;
  lease_ = [&](Call& call, const v1::LeaseRequest*, v1::LeaseResponse*) {
    call.Watch([] {}, [&](Delivery delivery) { done.set_value(delivery); });
    call.Finish(grpc::Status(grpc::StatusCode::INTERNAL, "read failed"));
  };
  StartServer();
  grpc::ClientContext context;
  context.set_deadline(Deadline());
  v1::LeaseResponse reply;
  EXPECT_EQ(stub_->Lease(&context, v1::LeaseRequest(), &reply).error_code(),
            grpc::StatusCode::INTERNAL);
  std::future<Delivery> finished = done.get_future();
  ASSERT_TRUE(Arrives(finished));
  EXPECT_EQ(finished.get(), Delivery::kNotSent);
}

TEST_F(CallLoopTest, AnAnsweredCallIsNotLostOrCanceled) {
  std::promise<void> canceled;
  std::promise<Delivery> done;
  lease_ = [&](Call& call, const v1::LeaseRequest*, v1::LeaseResponse*) {
    call.Watch([&] { canceled.set_value(); },
               [&](Delivery delivery) { done.set_value(delivery); });
    call.Finish(grpc::Status::OK);
  };
  StartServer();
  grpc::ClientContext context;
  context.set_deadline(Deadline());
  v1::LeaseResponse reply;
  ASSERT_TRUE(stub_->Lease(&context, v1::LeaseRequest(), &reply).ok());
  std::future<Delivery> finished = done.get_future();
  ASSERT_TRUE(Arrives(finished));
  EXPECT_EQ(finished.get(), Delivery::kSent);
  EXPECT_EQ(canceled.get_future().wait_for(std::chrono::seconds(0)),
            std::future_status::timeout);
}

// Without a loop thread: this one collects. Each Kick, also one made
// while an earlier one's alarm is on its way, makes a Collect return
// before its deadline.
TEST(CallLoopKickTest, EachKickEndsACollect) {
  grpc::ServerBuilder builder;
  CallLoop loop(builder.AddCompletionQueue());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto collect_returns_early = [&] {
    auto start = std::chrono::steady_clock::now();
    loop.Collect(start + kBound);
    return std::chrono::steady_clock::now() - start < kBound;
  };
  loop.Kick();
  EXPECT_TRUE(collect_returns_early());
  loop.Kick();
  loop.Kick();  // covered by the alarm already set
  EXPECT_TRUE(collect_returns_early());
  loop.Kick();  // the flag was cleared: a new alarm
  EXPECT_TRUE(collect_returns_early());
  server->Shutdown(Deadline());
  loop.Shutdown();
}

TEST_F(CallLoopTest, HealthCheckAnswersForTheServerAsAWhole) {
  StartServer();
  std::string reply;
  ASSERT_TRUE(CallHealth("/grpc.health.v1.Health/Check", "", &reply).ok());
  EXPECT_EQ(reply, std::string("\x08\x01"));  // status: SERVING
  health_.SetServing(false);
  reply.clear();
  ASSERT_TRUE(CallHealth("/grpc.health.v1.Health/Check", "", &reply).ok());
  EXPECT_EQ(reply, std::string("\x08\x02"));  // status: NOT_SERVING
  EXPECT_EQ(CallHealth("/grpc.health.v1.Health/Check",
                       std::string("\x0a\x03"
                                   "abc",
                                   5),
                       &reply)
                .error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(CallHealth("/grpc.health.v1.Health/Watch", "", &reply).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(CallHealth("/no.such.Service/Call", "", &reply).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(
      CallHealth("/grpc.health.v1.Health/Check", "\xff", &reply).error_code(),
      grpc::StatusCode::INVALID_ARGUMENT);
}

std::optional<std::string> ParseName(const std::string& bytes) {
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1);
  return HealthService::ParseServiceName(&request);
}

TEST(HealthServiceTest, ParsesTheServiceNameAndRefusesOtherBytes) {
  EXPECT_EQ(ParseName(""), "");
  EXPECT_EQ(ParseName(std::string("\x0a\x01x", 3)), "x");
  // An unknown varint field is skipped, as protobuf does.
  EXPECT_EQ(ParseName(std::string("\x10\x05\x0a\x01y", 5)), "y");
  EXPECT_EQ(ParseName(std::string("\x0a\x05x", 3)),
            std::nullopt);  // shorter than its length says
  EXPECT_EQ(ParseName("\xff"), std::nullopt);
}

}  // namespace
}  // namespace fairq::server
