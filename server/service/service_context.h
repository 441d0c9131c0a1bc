// What every gRPC service of fairqd shares: the dispatcher to post commands
// to, the store for the short reads some handlers do themselves, and the
// request limits. Plus the two ways a unary handler ends.
//
// Thread-safe: the pointers are to thread-safe objects (Dispatcher::Post,
// Store reads).
#ifndef FAIRQ_SERVER_SERVICE_SERVICE_CONTEXT_H_
#define FAIRQ_SERVER_SERVICE_SERVICE_CONTEXT_H_

#include <grpcpp/grpcpp.h>

#include "server/broker/dispatcher.h"
#include "server/service/request_validation.h"
#include "server/service/status_mapping.h"
#include "server/service/unary_call.h"
#include "store/store.h"

namespace fairq::server {

struct ServiceContext {
  Dispatcher* dispatcher;
  const store::Store* store;
  RequestLimits limits;
};

// Finishes a call at once with `status` (validation failures).
inline void FinishNow(Call& call, const Status& status) {
  call.Finish(ToGrpcStatus(status));
}

// A Done that finishes `call` with the status it is given.
inline Done FinishLater(Call& call) {
  return [&call](const Status& status) { call.Finish(ToGrpcStatus(status)); };
}

// Finishes a call whose reply was read from the store with `status`, once
// everything applied before the read is durable (SyncBarrierCommand).
inline void FinishWhenDurable(Call& call, Dispatcher& dispatcher,
                              const Status& status) {
  dispatcher.Post(SyncBarrierCommand{status, FinishLater(call)});
}

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_SERVICE_SERVICE_CONTEXT_H_
