// Call and UnaryCall: one unary RPC on gRPC's async API, as its handler
// sees it. The CallLoop requests it, runs the handler when it arrives, and
// frees it once gRPC has sent the answer.
//
// Thread-safety: the handler runs on the CallLoop's thread (or on the rpc
// reads thread); Finish may be called from any thread, once, and the call
// must not be touched after it.
#ifndef FAIRQ_SERVER_SERVICE_UNARY_CALL_H_
#define FAIRQ_SERVER_SERVICE_UNARY_CALL_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <utility>

namespace fairq::server {

// An event on the CallLoop's completion queue; the queue's tags point here.
class CallEvent {
 public:
  virtual ~CallEvent() = default;
  // Loop thread. `ok` is gRPC's: false when the operation failed or the
  // server is shutting down.
  virtual void Happened(bool ok) = 0;
};

// A tag that runs one step of `Owner`: each call has one per operation it
// waits for.
template <class Owner>
class StepEvent final : public CallEvent {
 public:
  StepEvent(Owner* owner, void (Owner::*step)(bool))
      : owner_(owner), step_(step) {}
  void Happened(bool ok) override { (owner_->*step_)(ok); }

 private:
  Owner* const owner_;
  void (Owner::*const step_)(bool);
};

// How a watched call's response went.
enum class Delivery {
  kSent,       // answered OK, and the client did not go away first
  kMaybeLost,  // answered OK, but the client canceled: it may never have it
  kNotSent,    // answered with an error, which carries no response
};

// What a handler answers through.
class Call {
 public:
  virtual ~Call() = default;
  virtual grpc::ServerContext& context() = 0;
  // Any thread, exactly once: sends the response (when `status` is OK) or
  // the error.
  virtual void Finish(const grpc::Status& status) = 0;
  // For calls served with `watch_done` (on the loop thread, so not with
  // reads_store), set by the handler; both run on the loop thread, as the
  // callback API's reactor methods of that name.
  // `on_cancel`: the client canceled (or went away) before the answer went
  // out; at once if it did so before the handler ran. `on_done`: last, once the
  // answer is out or dropped, with what became of the response.
  virtual void Watch(std::function<void()> on_cancel,
                     std::function<void(Delivery)> on_done) = 0;
};

// How a started call reaches its handler: at once on the loop thread, or
// through `offload` (handlers that block on the store), which answers
// OK once it has queued the handler, or the error to finish the call with.
using Offload = std::function<grpc::Status(std::function<void()>)>;

template <class Service, class Request, class Response>
class UnaryCall final : public Call {
 public:
  using RequestMethod = void (Service::*)(
      grpc::ServerContext*, Request*,
      grpc::ServerAsyncResponseWriter<Response>*, grpc::CompletionQueue*,
      grpc::ServerCompletionQueue*, void*);
  using Handler = std::function<void(Call&, const Request*, Response*)>;

  struct Method {
    Service* service;
    RequestMethod request;
    Handler handler;
    bool watch_done = false;
    Offload offload;  // empty: run on the loop thread
  };

  // Asks gRPC for the next call of `method`, which must outlive it.
  static void Ask(const Method* method, grpc::ServerCompletionQueue* cq) {
    auto* call = new UnaryCall(method, cq);
    // The start, and the done event when watched: with an interceptor
    // installed, gRPC may queue a canceled call's done event first.
    call->pending_ = method->watch_done ? 2 : 1;
    if (method->watch_done) call->context_.AsyncNotifyWhenDone(&call->done_);
    (method->service->*method->request)(&call->context_, &call->request_,
                                        &call->responder_, cq, cq,
                                        &call->started_);
  }

  grpc::ServerContext& context() override { return context_; }

  void Finish(const grpc::Status& status) override {
    answered_ok_ = status.ok();  // read by the loop after the finish event
    if (status.ok()) {
      responder_.Finish(response_, status, &finished_);
    } else {
      responder_.FinishWithError(status, &finished_);
    }
  }

  void Watch(std::function<void()> on_cancel,
             std::function<void(Delivery)> on_done) override {
    on_cancel_ = std::move(on_cancel);
    on_done_ = std::move(on_done);
    if (done_seen_ && canceled_) on_cancel_();  // canceled before it started
  }

 private:
  UnaryCall(const Method* method, grpc::ServerCompletionQueue* cq)
      : method_(method), cq_(cq) {}

  void Started(bool ok) {
    if (!ok) {  // the server is shutting down: no call, no done event
      delete this;
      return;
    }
    Ask(method_, cq_);  // the next one of this method
    ++pending_;         // the finish
    if (!method_->offload) {
      Handle();
    } else if (grpc::Status queued = method_->offload([this] { Handle(); });
               !queued.ok()) {
      Finish(queued);
    }
    Release();  // the start
  }

  void Handle() { method_->handler(*this, &request_, &response_); }

  void Finished(bool) { Release(); }

  void Done(bool) {
    done_seen_ = true;
    canceled_ = context_.IsCancelled();
    if (canceled_ && on_cancel_) on_cancel_();
    Release();
  }

  void Release() {
    if (--pending_ > 0) return;
    if (on_done_) {
      on_done_(!answered_ok_ ? Delivery::kNotSent
               : canceled_   ? Delivery::kMaybeLost
                             : Delivery::kSent);
    }
    delete this;
  }

  const Method* const method_;
  grpc::ServerCompletionQueue* const cq_;
  grpc::ServerContext context_;
  Request request_;
  Response response_;
  grpc::ServerAsyncResponseWriter<Response> responder_{&context_};
  std::function<void()> on_cancel_;
  std::function<void(Delivery)> on_done_;
  bool answered_ok_ = false;
  bool done_seen_ = false;  // loop thread only, as are the two below
  bool canceled_ = false;
  int pending_ = 0;  // events still to come
  StepEvent<UnaryCall> started_{this, &UnaryCall::Started};
  StepEvent<UnaryCall> finished_{this, &UnaryCall::Finished};
  StepEvent<UnaryCall> done_{this, &UnaryCall::Done};
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_SERVICE_UNARY_CALL_H_
