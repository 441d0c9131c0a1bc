// Producer: submits jobs to fairqd, one at a time or batched in the
// background, retrying calls that fail with UNAVAILABLE.
//
// Thread-safe: any number of threads may call any method at once.
#ifndef FAIRQ_CLIENT_PRODUCER_H_
#define FAIRQ_CLIENT_PRODUCER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>

#include "fairq/client/job_spec.h"
#include "fairq/client/status.h"

namespace grpc {
class Channel;
}
namespace fairq::v1 {
class JobSpec;  // fairq/v1/fairq.pb.h, installed with the SDK
}

namespace fairq::client {

struct EnqueueResult {
  uint64_t job_id = 0;
  // The idempotency key matched an existing job; nothing new was queued.
  bool duplicate = false;
};

struct ProducerOptions {
  // A batch is sent when it holds max_batch jobs (1-1,000, and no more than
  // the broker's max_batch) or its payloads and fields reach max_batch_bytes
  // (keep it under gRPC's 4 MiB message limit)...
  size_t max_batch = 100;
  size_t max_batch_bytes = 3 << 20;
  // ...or when its first job has waited this long. 0 sends at once. This
  // and the other durations of the options are at most 24 h.
  std::chrono::milliseconds linger{5};
  // Jobs buffered and not yet sent. Beyond it EnqueueAsync fails at once
  // with RESOURCE_EXHAUSTED (no retry_after): back-pressure, not memory.
  size_t max_pending = 10'000;
  // Deadline of each attempt of each call.
  std::chrono::milliseconds rpc_timeout{10'000};
  // How long destruction may take to send the buffered jobs. Past it no
  // call is begun or retried, and the jobs not sent get DEADLINE_EXCEEDED;
  // a call begun during destruction has its deadline cut to it (one begun
  // before keeps rpc_timeout, a wait between retries its backoff). 30 s,
  // the grace period a Kubernetes pod gets; at most 24 h.
  std::chrono::milliseconds close_timeout{30'000};
  RetryOptions retry;
  // Called before each retry with the failure and the delay about to be
  // waited; `attempt` is the attempt that failed (1 = the first). On the
  // caller's thread for Enqueue, the sender thread for batches.
  std::function<void(const Status& failure, int attempt,
                     std::chrono::milliseconds delay)>
      on_retry;
};

// Counters since the producer was created.
struct ProducerStats {
  uint64_t batches = 0;  // EnqueueBatch calls that got a reply
  uint64_t jobs_sent = 0;  // jobs in those batches (accepted or not)
  uint64_t retries = 0;    // attempts repeated after UNAVAILABLE
};

// Enqueue() sends one job and waits. EnqueueAsync() buffers jobs for one
// background sender thread, which sends them with EnqueueBatch: a batch goes
// when it holds max_batch jobs (or max_batch_bytes), when its first job has
// waited `linger`, or on Flush(). Batches go one at a time, in enqueue
// order. Calls failing with UNAVAILABLE are retried (RetryOptions); other
// errors, RESOURCE_EXHAUSTED included, go to the caller with the broker's
// retry delay.
class Producer {
 public:
  using Callback = std::function<void(StatusOr<EnqueueResult>)>;

  // Connects (lazily, as gRPC does) to `address` ("host:port", plaintext).
  // INVALID_ARGUMENT for options out of range.
  static StatusOr<std::unique_ptr<Producer>> Create(
      const std::string& address, ProducerOptions options = {});
  // Over a channel the caller made (TLS, custom arguments, in-process).
  static StatusOr<std::unique_ptr<Producer>> Create(
      std::shared_ptr<grpc::Channel> channel, ProducerOptions options = {});

  // Flushes: sends every buffered job and waits for the replies, then stops
  // the sender; within close_timeout, after which the jobs left get
  // DEADLINE_EXCEEDED (client/sdk/README.md, "Destruction").
  virtual ~Producer() = default;

  // One Enqueue call, retried on UNAVAILABLE. A spec whose tenant, pool,
  // idempotency key or labels are not UTF-8 is refused with
  // INVALID_ARGUMENT naming the field, without a call (EnqueueAsync too).
  virtual StatusOr<EnqueueResult> Enqueue(const JobSpec& job) = 0;
  virtual StatusOr<EnqueueResult> Enqueue(const v1::JobSpec& job) = 0;

  // Buffers the job for the next batch. The future is fulfilled when its
  // batch is acknowledged, with the job's own result (one job of a batch may
  // be refused while the others are accepted).
  virtual std::future<StatusOr<EnqueueResult>> EnqueueAsync(
      const JobSpec& job) = 0;
  virtual std::future<StatusOr<EnqueueResult>> EnqueueAsync(
      const v1::JobSpec& job) = 0;
  // As above, calling `done` instead, on the sender thread (so `done` must
  // be quick, must not throw and must not call Flush), or at once on the
  // caller's thread if the job is refused before buffering. An empty
  // `done` sends the job without telling anyone its result.
  virtual void EnqueueAsync(const JobSpec& job, Callback done) = 0;
  virtual void EnqueueAsync(const v1::JobSpec& job, Callback done) = 0;

  // Sends the jobs buffered before this call without waiting for `linger`
  // and returns when all of them have their results.
  virtual void Flush() = 0;
  // The same, waiting at most `timeout` (as librdkafka's flush): false if
  // some of those jobs had no result by then. They are still sent, and
  // their results still come.
  virtual bool Flush(std::chrono::milliseconds timeout) = 0;

  virtual ProducerStats stats() const = 0;
};

}  // namespace fairq::client

#endif  // FAIRQ_CLIENT_PRODUCER_H_
