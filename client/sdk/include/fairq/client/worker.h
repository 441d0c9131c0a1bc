// Worker: runs a handler on jobs leased from fairqd, `slots` at a time, with
// heartbeats, measured runtimes and a graceful stop handled for it.
//
// Thread-safe: Start, Stop and stats may be called from any thread, Stop
// from a handler and from on_error too (there it only begins the stop).
// The worker must not be destroyed from a handler or on_error.
#ifndef FAIRQ_CLIENT_WORKER_H_
#define FAIRQ_CLIENT_WORKER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fairq/client/job_context.h"
#include "fairq/client/job_spec.h"
#include "fairq/client/status.h"

namespace grpc {
class Channel;
}

namespace fairq::client {

struct WorkerOptions {
  std::string worker_id;            // empty: "<hostname>-<pid>"
  std::vector<std::string> pools;   // empty: {"default"}; at most 64
  uint32_t slots = 1;               // concurrent handlers, 1-10,000
  // Jobs leased ahead of free slots, 0 to `slots`. With 0 the worker never
  // holds a job it cannot start at once. With N, up to N leased jobs wait
  // here, so a slot that frees starts its next job without a round trip to
  // the broker (RabbitMQ's prefetch, Celery's prefetch multiplier). The
  // costs: a waiting job is already charged to its tenant; a job that
  // arrives for another tenant starts behind the prefetched ones; and the
  // broker reckons pool capacity from `slots` while this worker holds up to
  // slots + N leases, so share-based caps and fair-share figures count the
  // waiting jobs as running. Waiting jobs are heartbeated like running ones.
  uint32_t prefetch = 0;
  // How long each Lease call waits for work, 0-30 s. An empty answer that
  // came within 100 ms (a wait that short, or a broker that stopped waiting
  // early) is followed by a pause, as an error is: the retry backoff,
  // growing while idle, at least 100 ms.
  std::chrono::milliseconds lease_wait{10'000};
  // 0: a third of each lease's duration (as the broker sends it). A value
  // over half of a granted lease's is reported once through on_error. This
  // and the other durations of the options are at most 24 h.
  std::chrono::milliseconds heartbeat_interval{0};
  // How long Stop() waits for running handlers before giving jobs back.
  std::chrono::milliseconds stop_timeout{30'000};
  // Deadline of each Heartbeat, Complete, Fail and Release call (Lease:
  // lease_wait plus this).
  std::chrono::milliseconds rpc_timeout{10'000};
  // Complete, Fail or Release items per call, 1-1,000, and no more than the
  // broker's max_batch (fairqd refuses a larger call whole). Jobs that
  // finish while a report is in flight go out together in the next call.
  uint32_t max_report_batch = 1000;
  // Complete, Fail and Release wait for a broker that is down (gRPC
  // wait_for_ready) up to rpc_timeout, and are retried on UNAVAILABLE,
  // DEADLINE_EXCEEDED and RESOURCE_EXHAUSTED (the broker's command queue was
  // full) within this budget. Lease waits for a broker that is down (gRPC
  // wait_for_ready) and is retried with this backoff for as long as the worker
  // runs.
  RetryOptions retry;
  // Errors nobody else would see: failed leases and reports, lost leases.
  // Called from the worker's threads, possibly several at once; must be
  // quick and must not throw. It may call Stop().
  std::function<void(const Status&)> on_error;
};

// Runs one attempt. Exceptions escaping it become Outcome::Retry with the
// exception's what().
using Handler = std::function<Outcome(JobContext&)>;

// Counters since the worker was created.
struct WorkerStats {
  uint64_t leased = 0;
  uint64_t succeeded = 0;    // reported with Complete and acknowledged
  uint64_t retried = 0;      // reported with Fail(retryable)
  uint64_t failed = 0;       // reported with Fail(not retryable)
  uint64_t given_back = 0;   // not run, or cut off by Stop()
  uint64_t lost_leases = 0;  // a heartbeat found the lease gone
  uint64_t heartbeats = 0;   // acknowledged (beats go on until a job's
                             // report is acknowledged)
  uint64_t report_errors = 0;  // report items the broker refused
};

// Threads: one lease thread long-polls for as many jobs as the worker has
// room for (free slots plus `prefetch`, less the jobs waiting; at most
// `slots` per call); `slots` threads run the handler; one heartbeat
// thread extends the lease of each job the worker holds every
// heartbeat_interval (the calls of different jobs in flight at once) and
// passes the yield flag on; one report thread sends
// outcomes, batching the Complete, Fail and Release items of jobs that
// finish while a previous report is in flight.
//
// Stop(): cancels the pending long poll (jobs the broker granted to it go
// back to READY without using an attempt; only if its reply is already on
// the wire are they lost to the cancel and lapse after their lease
// duration, attempt used), leases nothing more, and waits up to
// stop_timeout for the jobs it holds: running handlers (JobContext::
// Stopping() turns true) and prefetched jobs, which slots still start (with
// Stopping() true from the start). Handlers still running then are given
// back with Fail(retryable) and see Cancelled(); Stop() still waits for
// them to return, since their threads cannot be abandoned. Prefetched jobs
// not started by then, and a job whose lease reply arrived after Stop()
// began, are released (Worker.Release): READY again at once, the attempt
// not counted, as beanstalkd's `release` does, so a job no handler started
// keeps its attempts. Jobs still running at stop_timeout do use theirs,
// and so, rarely, does a job a slot takes at the very moment Stop() gives
// it back (it is failed, not run). Reports still queued are sent before
// Stop() returns.
class Worker {
 public:
  // Connects (lazily) to `address` ("host:port", plaintext).
  // INVALID_ARGUMENT for options out of range.
  static StatusOr<std::unique_ptr<Worker>> Create(const std::string& address,
                                                  WorkerOptions options = {});
  // Over a channel the caller made. Lease replies carry up to `slots`
  // payloads: raise the channel's max receive message size to match.
  static StatusOr<std::unique_ptr<Worker>> Create(
      std::shared_ptr<grpc::Channel> channel, WorkerOptions options = {});

  // Stop(), and waits for a thread in Run() to return.
  virtual ~Worker() = default;

  // Starts the threads and returns. FAILED_PRECONDITION if already started.
  virtual Status Start(Handler handler) = 0;
  // Start(), then blocks until a Stop() from any thread, a handler or
  // on_error included, has finished; this thread finishes it if the Stop()
  // came from the worker's own threads.
  virtual Status Run(Handler handler) = 0;
  // Graceful stop as described above; idempotent, and concurrent callers
  // all return once it is done. From a handler or on_error it cannot wait
  // for the worker's threads, its own among them: it stops the leasing and
  // tells running handlers (Stopping()), and returns at once; Run(), or a
  // Stop() from another thread, or the destructor finishes the stop.
  virtual void Stop() = 0;

  virtual WorkerStats stats() const = 0;
};

}  // namespace fairq::client

#endif  // FAIRQ_CLIENT_WORKER_H_
