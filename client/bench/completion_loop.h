// CompletionLoop: a grpc::CompletionQueue and the one thread that serves
// it, for the open-loop scenarios that measure round trips (`latency`,
// `ping`). Calls may be started from any thread (a pacer's); every reply is
// handled on the thread in ServeUntil() or Drain(), the queue's only poller.
//
// Why the completion-queue API there, where the other scenarios use the sync
// and callback APIs: with those, gRPC's poller reads a reply and hands it to
// another thread to run the caller's code, a context switch each on this
// guest (docs/benchmarks.md, seventeenth round), and that client cost lands
// in the very latency measured. Here the thread that reads a reply handles it.
//
// Thread-safety: Start() from any thread; ServeUntil() and Drain() on one.
#ifndef FAIRQ_CLIENT_BENCH_COMPLETION_LOOP_H_
#define FAIRQ_CLIENT_BENCH_COMPLETION_LOOP_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "base/status.h"

namespace fairq::bench {

class CompletionLoop {
 public:
  using Clock = std::chrono::steady_clock;

  // One call in flight. Its address is the queue's tag; the loop thread
  // runs Done() once the reply (or the error) is in, then frees it.
  struct Call {
    virtual ~Call() = default;
    virtual void Done() = 0;
    grpc::ClientContext context;
    grpc::Status status;
  };

  // A unary call whose reply is a `Response`. Its reader lives as long as
  // the call: the reader's memory is the call's own in gRPC, and freeing it
  // on the starting thread could race with the loop thread freeing the call.
  // Declared in the derived class, it goes before the base's context.
  template <class Response>
  struct UnaryCall : Call {
    Response response;
    std::unique_ptr<grpc::ClientAsyncResponseReader<Response>> reader;
  };

  CompletionLoop() = default;
  CompletionLoop(const CompletionLoop&) = delete;
  CompletionLoop& operator=(const CompletionLoop&) = delete;
  // Shuts the queue down, waits for every call still in flight to end (each
  // carries a deadline) and frees them.
  ~CompletionLoop();

  grpc::CompletionQueue* queue() { return &cq_; }

  // Starts a unary call prepared on queue() (a stub's PrepareAsyncX); its
  // reply lands in call->response. `call` is the loop's from here on.
  template <class Response>
  void Start(
      UnaryCall<Response>* call,
      std::unique_ptr<grpc::ClientAsyncResponseReader<Response>> reader) {
    in_flight_.fetch_add(1);
    call->reader = std::move(reader);
    call->reader->StartCall();
    call->reader->Finish(&call->response, &call->status,
                         static_cast<Call*>(call));
  }

  // Handles replies until done() holds (checked after each reply and at
  // least every 100 ms) or `deadline` passes.
  void ServeUntil(const std::function<bool()>& done,
                  Clock::time_point deadline);
  // Handles replies until no call is in flight; UNAVAILABLE if some still
  // were at `deadline` (every call carries a deadline: a lost reply).
  Status Drain(Clock::time_point deadline);

 private:
  // Handles the next reply, if one comes by `deadline`.
  void Next(Clock::time_point deadline);

  grpc::CompletionQueue cq_;
  std::atomic<uint64_t> in_flight_{0};
};

// Calls issue(i) for i in [0, count) on RunPaced's schedule from `start`, on
// a pacer thread of its own, while the calling thread serves `loop` until
// done() or `give_up`; then joins the pacer (which finishes its schedule).
// Returns how many calls were late.
uint64_t ServePaced(CompletionLoop& loop,
                    CompletionLoop::Clock::time_point start, uint64_t count,
                    std::chrono::nanoseconds interval,
                    const std::function<void(uint64_t)>& issue,
                    const std::function<bool()>& done,
                    CompletionLoop::Clock::time_point give_up);

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_COMPLETION_LOOP_H_
