// StandInBroker (tests only): an in-process fairq.v1.Worker service on a
// loopback port, for answers a real fairqd gives only under load or not on
// demand. Complete, Fail and Release are refused with RESOURCE_EXHAUSTED (a
// full command queue) the first `refusals` times and then taken item by item,
// with LoseAnswers(n) the next n taken calls are held unanswered until
// their client gives up; a job reported again gets the answer of a fairqd
// that no longer remembers the report (it restarted since): not live, or
// a stale token for a failure to be retried or a release. Lease answers at
// once, with the jobs offered (Offer), up to the call's max_jobs (or all of
// them, with IgnoreMaxJobs), else none; Heartbeat acknowledges (with the lease
// length set by LeaseLengthOnHeartbeat, if any), or with HoldHeartbeats(n)
// holds each call until n are in flight together. It keeps what it was sent.
// With LimitBatch(n) a Complete, Fail or Release of more than n items is
// refused whole with INVALID_ARGUMENT, as fairqd does past its max_batch.
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
#include <optional>
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

  grpc::Status Complete(grpc::ServerContext* context,
                        const v1::CompleteRequest* request,
                        v1::AckResponse* response) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (auto refused = Refuse(request->completions_size())) return *refused;
    for (const v1::Completion& done : request->completions()) {
      if (Take(done.job_id(), response, grpc::StatusCode::NOT_FOUND)) {
        completed_.push_back(done.job_id());
      }
    }
    return Answer(lock, context);
  }

  grpc::Status Fail(grpc::ServerContext* context,
                    const v1::FailRequest* request,
                    v1::AckResponse* response) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (auto refused = Refuse(request->failures_size())) return *refused;
    for (const v1::Failure& failure : request->failures()) {
      if (Take(failure.job_id(), response,
               failure.retryable() ? grpc::StatusCode::FAILED_PRECONDITION
                                   : grpc::StatusCode::NOT_FOUND)) {
        errors_.push_back(failure.error());
      }
    }
    return Answer(lock, context);
  }

  grpc::Status Release(grpc::ServerContext* context,
                       const v1::ReleaseRequest* request,
                       v1::AckResponse* response) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (without_release_) {
      return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "no Release");
    }
    if (auto refused = Refuse(request->leases_size())) return *refused;
    for (const v1::ReleasedLease& lease : request->leases()) {
      if (Take(lease.job_id(), response,
               grpc::StatusCode::FAILED_PRECONDITION)) {
        released_.push_back(lease.job_id());
      }
    }
    return Answer(lock, context);
  }

  grpc::Status Lease(grpc::ServerContext*, const v1::LeaseRequest* request,
                     v1::LeaseResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    leases_.push_back(Clock::now());
    uint32_t max_jobs = ignore_max_jobs_
                            ? UINT32_MAX
                            : std::max<uint32_t>(1, request->max_jobs());
    while (!offered_.empty() &&
           static_cast<uint32_t>(response->jobs_size()) < max_jobs) {
      *response->add_jobs() = std::move(offered_.front());
      offered_.pop_front();
    }
    changed_.notify_all();
    return grpc::Status::OK;
  }

  grpc::Status Heartbeat(grpc::ServerContext* context,
                         const v1::HeartbeatRequest* request,
                         v1::HeartbeatResponse* response) override {
    std::unique_lock<std::mutex> lock(mu_);
    heartbeats_.push_back(Clock::now());
    beaten_jobs_.push_back(request->job_id());
    const uint64_t round = release_round_;
    if (++beats_in_flight_ >= hold_until_) ++release_round_;
    changed_.notify_all();
    bool released =
        Hold(lock, context, [&] { return release_round_ != round; });
    --beats_in_flight_;
    if (!released) {
      if (context->deadline() - std::chrono::system_clock::now() >
          std::chrono::seconds(1)) {
        ++canceled_early_;
        changed_.notify_all();
      }
      return grpc::Status(grpc::StatusCode::CANCELLED, "held, then canceled");
    }
    ++answered_beats_;
    if (beat_lease_seconds_ > 0) {
      response->mutable_lease_duration()->set_seconds(beat_lease_seconds_);
    }
    changed_.notify_all();
    return grpc::Status::OK;
  }

  // Heartbeat answers say the lease now lasts `seconds` (as after a broker
  // restart with another default).
  void LeaseLengthOnHeartbeat(int64_t seconds) {
    std::lock_guard<std::mutex> lock(mu_);
    beat_lease_seconds_ = seconds;
  }

  // Lease calls hand out `job`, in the order offered.
  void Offer(v1::LeasedJob job) {
    std::lock_guard<std::mutex> lock(mu_);
    offered_.push_back(std::move(job));
  }

  // Release answers UNIMPLEMENTED, as a fairqd from before it had Release.
  void WithoutRelease() {
    std::lock_guard<std::mutex> lock(mu_);
    without_release_ = true;
  }

  // Lease calls hand out every job offered, whatever their max_jobs, as a
  // broker with a bug might.
  void IgnoreMaxJobs() {
    std::lock_guard<std::mutex> lock(mu_);
    ignore_max_jobs_ = true;
  }

  // The next `n` Complete, Fail or Release calls are carried out, then held
  // until their client gives up, as if their answers were lost.
  void LoseAnswers(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    answers_to_lose_ = n;
  }

  // Complete, Fail and Release calls of more than `n` items are refused.
  void LimitBatch(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    max_batch_ = n;
  }

  // Heartbeat calls are answered only once `n` are in flight together
  // (then all of those at once); until then each is held until its client
  // cancels it.
  void HoldHeartbeats(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    hold_until_ = n;
  }

  // Complete, Fail and Release calls so far.
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
  std::vector<uint64_t> released() {
    std::lock_guard<std::mutex> lock(mu_);
    return released_;
  }
  // The job of each Heartbeat call so far, in order.
  std::vector<uint64_t> beaten_jobs() {
    std::lock_guard<std::mutex> lock(mu_);
    return beaten_jobs_;
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

  // Adds the result for `job` to `response`: taken if it was not before
  // (true), else `repeat_code`.
  bool Take(uint64_t job, v1::AckResponse* response,
            grpc::StatusCode repeat_code) {
    v1::AckResult* result = response->add_results();
    if (std::find(taken_.begin(), taken_.end(), job) == taken_.end()) {
      taken_.push_back(job);
      return true;
    }
    result->set_code(static_cast<int32_t>(repeat_code));
    result->set_message("reported before");
    return false;
  }

  // OK, or, while answers are to be lost, CANCELLED once the client gave
  // up waiting.
  grpc::Status Answer(std::unique_lock<std::mutex>& lock,
                      grpc::ServerContext* context) {
    if (answers_to_lose_ == 0) return grpc::Status::OK;
    --answers_to_lose_;
    Hold(lock, context, [] { return false; });
    return grpc::Status(grpc::StatusCode::CANCELLED, "answer lost");
  }

  // Holds a call until `released()` or its client cancels it; returns
  // released(). It polls for the cancel: the synchronous API has no notice
  // of it.
  template <class Released>
  bool Hold(std::unique_lock<std::mutex>& lock, grpc::ServerContext* context,
            Released released) {
    while (!released() && !context->IsCancelled()) {
      changed_.wait_for(lock, std::chrono::milliseconds(5));
    }
    return released();
  }

  // Counts a report call of `items` items; its refusal, if it is refused
  // (the first `refusals` calls, and any past LimitBatch).
  std::optional<grpc::Status> Refuse(int items) {
    ++acks_;
    if (refusals_-- > 0) {
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          "dispatcher: command queue full");
    }
    if (items > max_batch_) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "at most " + std::to_string(max_batch_) + " items");
    }
    return std::nullopt;
  }

  std::mutex mu_;
  // A Lease or Heartbeat came, held heartbeats were released, or one was
  // canceled early.
  std::condition_variable changed_;
  int refusals_;
  int acks_ = 0;
  int answers_to_lose_ = 0;
  int max_batch_ = 1000;
  std::vector<uint64_t> taken_;  // jobs whose report was taken
  std::vector<uint64_t> completed_;
  std::vector<std::string> errors_;
  std::vector<uint64_t> released_;
  std::vector<Clock::time_point> leases_;
  std::vector<Clock::time_point> heartbeats_;
  std::vector<uint64_t> beaten_jobs_;
  std::deque<v1::LeasedJob> offered_;
  bool ignore_max_jobs_ = false;
  bool without_release_ = false;
  int hold_until_ = 0;
  int beats_in_flight_ = 0;
  uint64_t release_round_ = 0;  // advances when held heartbeats go
  int answered_beats_ = 0;
  int canceled_early_ = 0;
  int64_t beat_lease_seconds_ = 0;  // 0: answers carry no lease length
  std::string address_;
  std::unique_ptr<grpc::Server> server_;  // last: stops before the above go
};

}  // namespace fairq::testing

#endif  // FAIRQ_CLIENT_SDK_STAND_IN_BROKER_H_
