// WorkerService: fairq.v1.Worker. Lease is a long poll that watches its
// call: a call canceled while it waits leaves the wait list, and jobs
// granted to a call whose client is gone go straight back to their queue.
//
// Thread-safety: the CallLoop runs the handlers on the dispatcher thread.
#ifndef FAIRQ_SERVER_SERVICE_WORKER_SERVICE_H_
#define FAIRQ_SERVER_SERVICE_WORKER_SERVICE_H_

#include "fairq/v1/fairq.grpc.pb.h"
#include "server/service/call_loop.h"
#include "server/service/service_context.h"

namespace fairq::server {

class WorkerService final {
 public:
  explicit WorkerService(ServiceContext context) : context_(context) {}

  // For ServerBuilder::RegisterService.
  grpc::Service* service() { return &async_; }
  // Serves every method on `loop`; before loop.Start().
  void ServeOn(CallLoop& loop);

 private:
  void Lease(Call& call, const v1::LeaseRequest* request,
             v1::LeaseResponse* response);
  void Heartbeat(Call& call, const v1::HeartbeatRequest* request,
                 v1::HeartbeatResponse* response);
  void Complete(Call& call, const v1::CompleteRequest* request,
                v1::AckResponse* response);
  void Fail(Call& call, const v1::FailRequest* request,
            v1::AckResponse* response);
  void Release(Call& call, const v1::ReleaseRequest* request,
               v1::AckResponse* response);
  // A report (Complete, Fail, Release) checked as `valid`: refused at once,
  // or carried out by the dispatcher.
  template <class ReportCommand, class Request>
  void PostReport(Call& call, const Status& valid, const Request* request,
                  v1::AckResponse* response);

  const ServiceContext context_;
  v1::Worker::AsyncService async_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_SERVICE_WORKER_SERVICE_H_
