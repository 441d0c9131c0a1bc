#include "server/service/worker_service.h"

#include <atomic>

namespace fairq::server {
namespace {

// One Lease call. Deletes itself in OnDone, as gRPC's callback API expects.
class LeaseReactor final : public grpc::ServerUnaryReactor {
 public:
  LeaseReactor(grpc::CallbackServerContext* ctx, Dispatcher* dispatcher,
               v1::LeaseResponse* response)
      : ctx_(ctx),
        dispatcher_(dispatcher),
        waiter_(dispatcher->NewWaiterId()),
        response_(response) {}

  void Start(const v1::LeaseRequest* request) {
    Status valid = ValidateLeaseRequest(*request);
    if (!valid.ok()) {
      Finish(ToGrpcStatus(valid));
      return;
    }
    dispatcher_->Post(LeaseCommand{waiter_, request, response_,
                                   [this](const Status& status) {
                                     granted_ = status.ok();
                                     Finish(ToGrpcStatus(status));
                                   }});
  }

  void OnCancel() override { dispatcher_->Post(LeaseCanceledCommand{waiter_}); }

  // A reply with jobs that the client never received: hand them back now
  // rather than when their leases lapse.
  void OnDone() override {
    if (granted_ && ctx_->IsCancelled() && response_->jobs_size() > 0) {
      LeaseUndeliveredCommand undelivered;
      for (const v1::LeasedJob& job : response_->jobs()) {
        undelivered.leases.emplace_back(job.job().id(), job.lease_token());
      }
      dispatcher_->Post(std::move(undelivered));
    }
    delete this;
  }

 private:
  grpc::CallbackServerContext* const ctx_;
  Dispatcher* const dispatcher_;
  const WaiterId waiter_;
  v1::LeaseResponse* const response_;
  std::atomic<bool> granted_{false};
};

}  // namespace

grpc::ServerUnaryReactor* WorkerService::Lease(
    grpc::CallbackServerContext* ctx, const v1::LeaseRequest* request,
    v1::LeaseResponse* response) {
  auto* reactor = new LeaseReactor(ctx, context_.dispatcher, response);
  reactor->Start(request);
  return reactor;
}

grpc::ServerUnaryReactor* WorkerService::Heartbeat(
    grpc::CallbackServerContext* ctx, const v1::HeartbeatRequest* request,
    v1::HeartbeatResponse* response) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  context_.dispatcher->Post(
      HeartbeatCommand{request, response, FinishLater(reactor)});
  return reactor;
}

grpc::ServerUnaryReactor* WorkerService::Complete(
    grpc::CallbackServerContext* ctx, const v1::CompleteRequest* request,
    v1::AckResponse* response) {
  Status valid = ValidateComplete(*request, context_.limits);
  if (!valid.ok()) return FinishNow(ctx, valid);
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  context_.dispatcher->Post(
      CompleteCommand{request, response, FinishLater(reactor)});
  return reactor;
}

grpc::ServerUnaryReactor* WorkerService::Fail(grpc::CallbackServerContext* ctx,
                                              const v1::FailRequest* request,
                                              v1::AckResponse* response) {
  Status valid = ValidateFail(*request, context_.limits);
  if (!valid.ok()) return FinishNow(ctx, valid);
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  context_.dispatcher->Post(FailCommand{request, response, FinishLater(reactor)});
  return reactor;
}

}  // namespace fairq::server
