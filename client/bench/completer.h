// Completer: one thread that reports finished jobs for the worker loops, so
// a worker slot is free again as soon as its work is done, as the SDK's
// Reporter does. Completions queue up while a Complete call is in flight
// and go together in the next one (at most 1,000 per call).
//
// Thread-safe: any worker thread may Add() and WaitAtMost(). Close() (or the
// destructor) sends what is queued and joins the thread. The `sent` callback
// runs on the Completer's own thread.
#ifndef FAIRQ_CLIENT_BENCH_COMPLETER_H_
#define FAIRQ_CLIENT_BENCH_COMPLETER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/status.h"
#include "bench/bench_context.h"

namespace fairq::bench {

class Completer {
 public:
  // Told after each Complete call: its status, the completions the broker
  // accepted (0 when the call failed), and the call's milliseconds.
  using SentCallback = std::function<void(const Status& status, size_t accepted,
                                          double call_ms)>;

  // `bench` must outlive this; calls go over channel `channel`. `sent` may
  // be empty.
  Completer(const BenchContext& bench, size_t channel, SentCallback sent = {});
  ~Completer();

  void Add(uint64_t job_id, uint64_t token, std::chrono::nanoseconds runtime);
  // Blocks until at most `count` completions are queued or in a call.
  void WaitAtMost(size_t count);
  // Sends everything queued, then stops. Returns the first failed call's
  // status (the calls after it were still made).
  Status Close();
  // Completions the broker accepted so far.
  uint64_t completed() const;

 private:
  void Loop();
  void Send(const v1::CompleteRequest& request);

  const BenchContext& bench_;
  std::unique_ptr<v1::Worker::Stub> stub_;

  const SentCallback sent_;

  mutable std::mutex mu_;
  std::condition_variable queued_;
  std::condition_variable drained_;  // in_call_ fell to 0
  v1::CompleteRequest pending_;      // guarded by mu_
  size_t in_call_ = 0;               // guarded by mu_
  bool closing_ = false;         // guarded by mu_
  Status first_error_;           // guarded by mu_
  uint64_t completed_ = 0;       // guarded by mu_
  std::thread thread_;           // last: starts once the members above exist
};

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_COMPLETER_H_
