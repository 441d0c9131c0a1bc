// Reporter: one thread that tells the broker how attempts ended. Reports
// queue up while a call is in flight and go together in the next Complete,
// Fail and Release calls (at most 1,000 items each), retried on UNAVAILABLE,
// RESOURCE_EXHAUSTED and DEADLINE_EXCEEDED. After a failure that may have
// landed (UNAVAILABLE, DEADLINE_EXCEEDED), fairqd answers a repeat of a
// report it took lately OK; the answer to one it no longer remembers is
// still an error (the lease may have lapsed instead), but its message says
// that the first attempt may have landed. Once a job's report is
// acknowledged (or given up on), `reported` hears of it, on the reporter's
// thread: the worker beats a job's lease until then, so a report held up by
// a slow broker does not let the lease lapse and the job run again.
//
// Thread-safe. The destructor sends everything queued, then stops.
#ifndef FAIRQ_CLIENT_SDK_REPORTER_H_
#define FAIRQ_CLIENT_SDK_REPORTER_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "client/sdk/worker_internal.h"
#include "fairq/v1/fairq.grpc.pb.h"

namespace fairq::client::internal {

class Reporter {
 public:
  // kGiveBack: a job whose handler ran, given back as a retryable failure
  // (its attempt counts). kRelease: one never started, released (it does
  // not).
  enum class Kind { kSuccess, kRetry, kFail, kGiveBack, kRelease };

  using Reported = std::function<void(const RunningJob* job)>;

  // The pointers must outlive this; `stub` talks over `channel`.
  Reporter(grpc::Channel* channel, v1::Worker::Stub* stub,
           const WorkerOptions* options, Counters* counters, Reported reported);
  ~Reporter();

  // `error` goes as ErrorText makes it; a kRelease's only if the broker
  // has no Release, when the job is failed (retryable) instead. The job is kept
  // (its address is the heartbeater's key) until `reported` has run.
  void Report(std::shared_ptr<RunningJob> job, Kind kind,
              std::string_view error, std::chrono::nanoseconds runtime);

 private:
  struct Item {
    Kind kind;
    std::shared_ptr<RunningJob> job;
    std::string error;
    std::chrono::nanoseconds runtime;
  };

  void Loop();
  void Send(const std::vector<Item>& items);
  // One Complete, Fail or Release call's request, sent with `context`.
  using Call = std::function<grpc::Status(grpc::ClientContext& context,
                                          v1::AckResponse& response)>;

  void SendCompletions(const std::vector<const Item*>& items);
  void SendFailures(const std::vector<const Item*>& items);
  void SendReleases(const std::vector<const Item*>& items);
  // Calls `send` with `items` in batches of at most max_report_batch.
  void InBatches(
      const std::vector<const Item*>& items,
      const std::function<void(const std::vector<const Item*>&)>& send);
  // Makes the call, with retries, and counts its items' results.
  void SendAndTally(const std::vector<const Item*>& items, const Call& call);
  // Makes the call, with retries, into `response`; `repeated` as WithRetry.
  Status Send(const Call& call, v1::AckResponse& response, bool& repeated);
  // Counts each item's result; `status` is the call's. `repeated`: an
  // earlier attempt of the call may have landed.
  void Tally(const std::vector<const Item*>& items, const Status& status,
             const v1::AckResponse& response, bool repeated);
  // Runs `attempt` with retries; sets `repeated` if an attempt that failed
  // may have reached the broker.
  Status WithRetry(const std::function<Status()>& attempt, bool& repeated);

  grpc::Channel* const channel_;
  v1::Worker::Stub* const stub_;
  const WorkerOptions* const options_;
  Counters* const counters_;
  const Reported reported_;

  bool broker_has_release_ = true;  // reporter thread only

  std::mutex mu_;
  std::condition_variable queued_;
  std::vector<Item> queue_;
  bool closing_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace fairq::client::internal

#endif  // FAIRQ_CLIENT_SDK_REPORTER_H_
