#include "server/service/worker_service.h"

namespace fairq::server {

// A Lease call waits in the broker until it is granted jobs or its wait
// ends. A client that cancels while it waits leaves the wait list; jobs
// granted to a call whose client is gone go straight back to their queue;
// those of a call answered with an error (reading their specs failed) go
// back as a failed attempt, so that a job whose record cannot be read is
// retried after a backoff and in the end goes DEAD, not round and round.
void WorkerService::Lease(Call& call, const v1::LeaseRequest* request,
                          v1::LeaseResponse* response) {
  Status valid = ValidateLeaseRequest(*request);
  if (!valid.ok()) return FinishNow(call, valid);
  Dispatcher* dispatcher = context_.dispatcher;
  const WaiterId waiter = dispatcher->NewWaiterId();
  // The lease first: a cancel heard before the handler ran is posted at
  // once by Watch, and must find the waiter.
  dispatcher->Post(LeaseCommand{waiter, request, response, FinishLater(call)});
  call.Watch(
      [dispatcher, waiter] { dispatcher->Post(LeaseCanceledCommand{waiter}); },
      [dispatcher, response](Delivery delivery) {
        if (delivery == Delivery::kSent || response->jobs_size() == 0) return;
        LeaseUndeliveredCommand undelivered;
        undelivered.failed = delivery == Delivery::kNotSent;
        for (const v1::LeasedJob& job : response->jobs()) {
          undelivered.leases.emplace_back(job.job().id(), job.lease_token());
        }
        dispatcher->Post(std::move(undelivered));
      });
}

void WorkerService::Heartbeat(Call& call, const v1::HeartbeatRequest* request,
                              v1::HeartbeatResponse* response) {
  context_.dispatcher->Post(
      HeartbeatCommand{request, response, FinishLater(call)});
}

template <class ReportCommand, class Request>
void WorkerService::PostReport(Call& call, const Status& valid,
                               const Request* request,
                               v1::AckResponse* response) {
  if (!valid.ok()) return FinishNow(call, valid);
  context_.dispatcher->Post(
      ReportCommand{request, response, FinishLater(call)});
}

void WorkerService::Complete(Call& call, const v1::CompleteRequest* request,
                             v1::AckResponse* response) {
  PostReport<CompleteCommand>(call, ValidateComplete(*request, context_.limits),
                              request, response);
}

void WorkerService::Fail(Call& call, const v1::FailRequest* request,
                         v1::AckResponse* response) {
  PostReport<FailCommand>(call, ValidateFail(*request, context_.limits),
                          request, response);
}

void WorkerService::Release(Call& call, const v1::ReleaseRequest* request,
                            v1::AckResponse* response) {
  PostReport<ReleaseCommand>(call, ValidateRelease(*request, context_.limits),
                             request, response);
}

void WorkerService::ServeOn(CallLoop& loop) {
  using Async = v1::Worker::AsyncService;
  loop.Serve(&async_, &Async::RequestLease, Bind(this, &WorkerService::Lease),
             {.watch_done = true});
  loop.Serve(&async_, &Async::RequestHeartbeat,
             Bind(this, &WorkerService::Heartbeat));
  loop.Serve(&async_, &Async::RequestComplete,
             Bind(this, &WorkerService::Complete));
  loop.Serve(&async_, &Async::RequestFail, Bind(this, &WorkerService::Fail));
  loop.Serve(&async_, &Async::RequestRelease,
             Bind(this, &WorkerService::Release));
}

}  // namespace fairq::server
