// JobContext: what a worker's handler sees of the job it runs, and the
// signals the worker raises while it runs: the broker asks the tenant to
// yield, the lease was lost, or the worker is stopping. Outcome: what the
// handler returns.
//
// The job's fields are immutable. The signals may be raised from any thread
// (the worker's heartbeat and stop paths) and read from any thread.
#ifndef FAIRQ_CLIENT_JOB_CONTEXT_H_
#define FAIRQ_CLIENT_JOB_CONTEXT_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace fairq::client {

// A leased job as the handler sees it.
struct LeasedJobInfo {
  uint64_t id = 0;
  std::string tenant;
  std::string pool;  // "default" when the spec left it empty
  std::string payload;
  uint32_t attempts = 0;  // leases granted so far, this one included
  std::string last_error;  // of the previous failed attempt, if any
  std::map<std::string, std::string> labels;
};

class JobContext {
 public:
  // Public so handlers can be unit-tested without a broker.
  explicit JobContext(LeasedJobInfo job) : job_(std::move(job)) {}
  JobContext(const JobContext&) = delete;
  JobContext& operator=(const JobContext&) = delete;

  uint64_t id() const { return job_.id; }
  const std::string& tenant() const { return job_.tenant; }
  const std::string& pool() const { return job_.pool; }
  const std::string& payload() const { return job_.payload; }
  uint32_t attempts() const { return job_.attempts; }
  const std::string& last_error() const { return job_.last_error; }
  const std::map<std::string, std::string>& labels() const {
    return job_.labels;
  }

  // The last heartbeat said the tenant runs above its fair share while
  // others wait: a long job may stop at a safe point and return
  // Outcome::Retry to give the slot back.
  bool ShouldYield() const { return yield_.load(); }
  // The lease is gone (lapsed, or taken back by the broker), or the worker
  // gave the job back after its stop_timeout: any result is discarded.
  bool Cancelled() const { return cancelled_.load(); }
  // Worker::Stop() was called; it waits up to stop_timeout for the handler.
  bool Stopping() const { return stopping_.load(); }

  // Waits up to `timeout`, returning early (true) as soon as ShouldYield(),
  // Cancelled() or Stopping() is set (at once if one already is); false if
  // the time ran out. A century or more (milliseconds::max()) waits for
  // the signal alone. For handlers that pause between steps.
  bool WaitFor(std::chrono::milliseconds timeout);
  // As WaitFor, for Cancelled() only: for a handler that finishes its work
  // even when asked to yield or stop, unless the lease is gone.
  bool WaitForCancel(std::chrono::milliseconds timeout);

  // Raise the signals. The worker calls these; tests of handlers may too.
  void SetShouldYield(bool yield);
  void Cancel();
  void NotifyStopping();

 private:
  template <typename Pred>
  bool WaitUntil(std::chrono::milliseconds timeout, Pred raised);
  void Raise(std::atomic<bool>& flag, bool value);

  const LeasedJobInfo job_;
  std::atomic<bool> yield_{false};
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> stopping_{false};
  std::mutex mu_;  // pairs with signalled_ for WaitFor
  std::condition_variable signalled_;
};

// A handler's verdict on one attempt.
class Outcome {
 public:
  enum class Kind { kSuccess, kRetry, kFail };

  static Outcome Success() { return Outcome(Kind::kSuccess, ""); }
  // A retryable failure: the job goes SCHEDULED with backoff, or DEAD when
  // its attempts are used up.
  static Outcome Retry(std::string error) {
    return Outcome(Kind::kRetry, std::move(error));
  }
  // A permanent failure: the job goes DEAD now.
  static Outcome Fail(std::string error) {
    return Outcome(Kind::kFail, std::move(error));
  }

  Kind kind() const { return kind_; }
  const std::string& error() const { return error_; }

 private:
  Outcome(Kind kind, std::string error)
      : kind_(kind), error_(std::move(error)) {}

  Kind kind_;
  std::string error_;
};

}  // namespace fairq::client

#endif  // FAIRQ_CLIENT_JOB_CONTEXT_H_
