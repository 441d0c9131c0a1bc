// What every gRPC service of fairqd shares: the dispatcher to post commands
// to, the store for the short reads some handlers do themselves, and the
// request limits. Plus the two ways a unary handler ends.
//
// Thread-safe: the pointers are to thread-safe objects (Dispatcher::Post,
// Store reads); handlers run on gRPC's threads.
#ifndef FAIRQ_SERVER_SERVICE_SERVICE_CONTEXT_H_
#define FAIRQ_SERVER_SERVICE_SERVICE_CONTEXT_H_

#include <grpcpp/grpcpp.h>

#include "server/broker/dispatcher.h"
#include "server/service/request_validation.h"
#include "server/service/status_mapping.h"
#include "store/store.h"

namespace fairq::server {

struct ServiceContext {
  Dispatcher* dispatcher;
  const store::Store* store;
  RequestLimits limits;
};

// Finishes a call at once with `status` (validation failures).
inline grpc::ServerUnaryReactor* FinishNow(grpc::CallbackServerContext* ctx,
                                           const Status& status) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// A Done that finishes `reactor` with the status it is given.
inline Done FinishLater(grpc::ServerUnaryReactor* reactor) {
  return [reactor](const Status& status) {
    reactor->Finish(ToGrpcStatus(status));
  };
}

// Finishes a call whose reply was read from the store with `status`, once
// everything applied before the read is durable (SyncBarrierCommand).
inline grpc::ServerUnaryReactor* FinishWhenDurable(
    grpc::CallbackServerContext* ctx, Dispatcher& dispatcher,
    const Status& status) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  dispatcher.Post(SyncBarrierCommand{status, FinishLater(reactor)});
  return reactor;
}

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_SERVICE_SERVICE_CONTEXT_H_
