// StandInBroker (tests only): an in-process fairq.v1.Worker service on a
// loopback port, for answers a real fairqd gives only under load or not on
// demand. Complete and Fail are refused with RESOURCE_EXHAUSTED (a full
// command queue) the first `refusals` times and then acknowledged item by
// item; Lease answers at once, with the jobs offered (Offer), up to the
// call's max_jobs, else none; Heartbeat acknowledges, or with
// HoldHeartbeats(n) holds each call until n are in flight together. It
// keeps what it was sent.
//
// Thread-safe: gRPC's threads call the handlers, the test reads.
#ifndef FAIRQ_CLIENT_SDK_STAND_IN_BROKER_H_
#define FAIRQ_CLIENT_SDK_STAND_IN_BROKER_H_

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "fairq/v1/fairq.grpc.pb.h"

namespace fairq::testing {

class StandInBroker final : public v1::Worker::Service {
 public:
  using Clock = std::chrono::steady_clock;

  explicit StandInBroker(int refusals) : refusals_(refusals) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
    if (server_ != nullptr) address_ = "127.0.0.1:" + std::to_string(port);
  }
  ~StandInBroker() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  // Empty if the server did not start.
  const std::string& address() const { return address_; }

  grpc::Status Complete(grpc::ServerContext*,
                        const v1::CompleteRequest* request,
                        v1::AckResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++acks_;
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
    ++acks_;
    if (refusals_-- > 0) return Refusal();
    for (const v1::Failure& failure : request->failures()) {
      errors_.push_back(failure.error());
      response->add_results();
    }
    return grpc::Status::OK;
  }

  grpc::Status Lease(grpc::ServerContext*, const v1::LeaseRequest* request,
                     v1::LeaseResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    leases_.push_back(Clock::now());
    uint32_t max_jobs = std::max<uint32_t>(1, request->max_jobs());
    while (!offered_.empty() &&
           static_cast<uint32_t>(response->jobs_size()) < max_jobs) {
      *response->add_jobs() = std::move(offered_.front());
      offered_.pop_front();
    }
    changed_.notify_all();
    return grpc::Status::OK;
  }

  // A held call polls for its client's cancel: the synchronous API has no
  // notice of it.
  grpc::Status Heartbeat(grpc::ServerContext* context,
                         const v1::HeartbeatRequest*,
                         v1::HeartbeatResponse*) override {
    std::unique_lock<std::mutex> lock(mu_);
    heartbeats_.push_back(Clock::now());
    const uint64_t round = release_round_;
    if (++beats_in_flight_ >= hold_until_) ++release_round_;
    changed_.notify_all();
    while (release_round_ == round && !context->IsCancelled()) {
      changed_.wait_for(lock, std::chrono::milliseconds(5));
    }
    --beats_in_flight_;
    if (release_round_ == round) {
      if (context->deadline() - std::chrono::system_clock::now() >
          std::chrono::seconds(1)) {
        ++canceled_early_;
        changed_.notify_all();
      }
      return grpc::Status(grpc::StatusCode::CANCELLED, "held, then canceled");
    }
    ++answered_beats_;
    changed_.notify_all();
    return grpc::Status::OK;
  }

  // Lease calls hand out `job`, in the order offered.
  void Offer(v1::LeasedJob job) {
    std::lock_guard<std::mutex> lock(mu_);
    offered_.push_back(std::move(job));
  }

  // Heartbeat calls are answered only once `n` are in flight together
  // (then all of those at once); until then each is held until its client
  // cancels it.
  void HoldHeartbeats(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    hold_until_ = n;
  }

  // Complete and Fail calls so far.
  int acks() {
    std::lock_guard<std::mutex> lock(mu_);
    return acks_;
  }
  std::vector<uint64_t> completed() {
    std::lock_guard<std::mutex> lock(mu_);
    return completed_;
  }
  std::vector<std::string> errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }
  // When each Lease (Heartbeat) call came, once there were `n`, or fewer
  // if `bound` passed first.
  std::vector<Clock::time_point> WaitForLeases(size_t n,
                                               Clock::duration bound) {
    return WaitFor(leases_, n, bound);
  }
  std::vector<Clock::time_point> WaitForHeartbeats(size_t n,
                                                   Clock::duration bound) {
    return WaitFor(heartbeats_, n, bound);
  }
  // Held heartbeat calls that their client canceled with more than a
  // second left before their deadline, once there were `n`, or fewer if
  // `bound` passed first.
  int WaitForEarlyCancels(int n, Clock::duration bound) {
    return WaitFor(canceled_early_, n, bound);
  }
  // Heartbeat calls answered OK once there were `n`, or fewer if `bound`
  // passed first.
  int WaitForAnsweredHeartbeats(int n, Clock::duration bound) {
    return WaitFor(answered_beats_, n, bound);
  }

 private:
  // Waits until `seen` holds `n` (a count, or that many calls), or `bound`
  // passes; returns it.
  template <class Seen, class Count>
  Seen WaitFor(const Seen& seen, Count n, Clock::duration bound) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, bound, [&] { return CountOf(seen) >= n; });
    return seen;
  }
  static int CountOf(int count) { return count; }
  static size_t CountOf(const std::vector<Clock::time_point>& calls) {
    return calls.size();
  }

  static grpc::Status Refusal() {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "dispatcher: command queue full");
  }

  std::mutex mu_;
  // A Lease or Heartbeat came, held heartbeats were released, or one was
  // canceled early.
  std::condition_variable changed_;
  int refusals_;
  int acks_ = 0;
  std::vector<uint64_t> completed_;
  std::vector<std::string> errors_;
  std::vector<Clock::time_point> leases_;
  std::vector<Clock::time_point> heartbeats_;
  std::deque<v1::LeasedJob> offered_;
  int hold_until_ = 0;
  int beats_in_flight_ = 0;
  uint64_t release_round_ = 0;  // advances when held heartbeats go
  int answered_beats_ = 0;
  int canceled_early_ = 0;
  std::string address_;
  std::unique_ptr<grpc::Server> server_;  // last: stops before the above go
};

}  // namespace fairq::testing

#endif  // FAIRQ_CLIENT_SDK_STAND_IN_BROKER_H_
