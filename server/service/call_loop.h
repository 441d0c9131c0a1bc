// CallLoop: fairqd's gRPC calls on the async API, on one completion queue
// that the dispatcher thread drives between its turns (it is the
// dispatcher's EventLoop). A request is read, checked, turned into a
// command and, for most leases, answered on that one thread; gRPC's
// callback API would pass each call between two threads of its own and
// this one, a wake-up each way (docs/benchmarks.md, sixteenth round).
// Handlers that read the store run on a thread of their own instead.
//
// Thread-safety: Serve and Start before the dispatcher starts; Collect on
// the dispatcher thread; Kick from any thread; Drain and Shutdown from the
// thread that stops the daemon.
#ifndef FAIRQ_SERVER_SERVICE_CALL_LOOP_H_
#define FAIRQ_SERVER_SERVICE_CALL_LOOP_H_

#include <grpcpp/alarm.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "server/broker/command_queue.h"
#include "server/broker/event_loop.h"
#include "server/service/unary_call.h"

namespace fairq::server {

class CallLoop final : public EventLoop {
 public:
  explicit CallLoop(std::unique_ptr<grpc::ServerCompletionQueue> cq);
  ~CallLoop() override;  // Shutdown()

  struct ServeOptions {
    bool watch_done = false;   // the handler may call Call::Watch
    bool reads_store = false;  // run the handler on the store-reads thread
  };

  // Before Start: serve one method of `service`, whose generated
  // Request<Method> is `request`, with `handler`.
  template <class Owner, class Request, class Response>
  void Serve(std::type_identity_t<Owner>* service,
             void (Owner::*request)(grpc::ServerContext*, Request*,
                                    grpc::ServerAsyncResponseWriter<Response>*,
                                    grpc::CompletionQueue*,
                                    grpc::ServerCompletionQueue*, void*),
             std::type_identity_t<
                 std::function<void(Call&, const Request*, Response*)>>
                 handler,
             ServeOptions options = {});

  grpc::ServerCompletionQueue* queue() { return cq_.get(); }

  // After the server has started: asks gRPC for the first calls.
  void Start();

  void Collect(
      std::optional<std::chrono::steady_clock::time_point> deadline) override;
  void Kick() override;

  // Once the dispatcher has stopped: handles the calls' remaining events on
  // a thread of its own, so that replies still being sent complete and new
  // calls are refused, until Shutdown.
  void Drain();
  // After the server has shut down: finishes the store reads, then the
  // queue, and joins both threads.
  void Shutdown();

 private:
  // The kick's alarm has fired: the next Kick sets it again.
  void Kicked(bool) { kicked_.store(false); }
  // Any thread: queues a handler for the store-reads thread.
  Offload offload();
  void RunReads();

  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  // Each asks gRPC for a call of one method, and owns what its calls
  // point to (UnaryCall::Method).
  std::vector<std::function<void()>> first_requests_;
  std::atomic<bool> kicked_{false};
  std::mutex kick_mu_;
  bool open_ = true;  // guarded by kick_mu_: false once the queue shuts down
  StepEvent<CallLoop> kick_{this, &CallLoop::Kicked};
  grpc::Alarm alarm_;
  CommandQueue<std::function<void()>> reads_;
  std::thread reads_thread_;
  std::thread drain_thread_;
  bool shut_down_ = false;
};

template <class Owner, class Request, class Response>
void CallLoop::Serve(
    std::type_identity_t<Owner>* service,
    void (Owner::*request)(grpc::ServerContext*, Request*,
                           grpc::ServerAsyncResponseWriter<Response>*,
                           grpc::CompletionQueue*, grpc::ServerCompletionQueue*,
                           void*),
    std::type_identity_t<std::function<void(Call&, const Request*, Response*)>>
        handler,
    ServeOptions options) {
  using Unary = UnaryCall<Owner, Request, Response>;
  auto method =
      std::make_shared<const typename Unary::Method>(typename Unary::Method{
          service, request, std::move(handler), options.watch_done,
          options.reads_store ? offload() : Offload()});
  first_requests_.push_back([cq = cq_.get(), method = std::move(method)] {
    Unary::Ask(method.get(), cq);
  });
}

// A handler that calls `method` of `object`.
template <class Object, class Request, class Response>
std::function<void(Call&, const Request*, Response*)> Bind(
    Object* object, void (Object::*method)(Call&, const Request*, Response*)) {
  return
      [object, method](Call& call, const Request* request, Response* response) {
        (object->*method)(call, request, response);
      };
}

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_SERVICE_CALL_LOOP_H_
