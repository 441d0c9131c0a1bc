// WorkerService: fairq.v1.Worker. Lease is a long poll with a reactor of
// its own: a call canceled while it waits leaves the wait list, and jobs
// granted to a call whose client is gone go straight back to their queue.
//
// Thread-safe: gRPC calls the methods on its own threads.
#ifndef FAIRQ_SERVER_SERVICE_WORKER_SERVICE_H_
#define FAIRQ_SERVER_SERVICE_WORKER_SERVICE_H_

#include "fairq/v1/fairq.grpc.pb.h"
#include "server/service/service_context.h"

namespace fairq::server {

class WorkerService final : public v1::Worker::CallbackService {
 public:
  explicit WorkerService(ServiceContext context) : context_(context) {}

  grpc::ServerUnaryReactor* Lease(grpc::CallbackServerContext* ctx,
                                  const v1::LeaseRequest* request,
                                  v1::LeaseResponse* response) override;
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* ctx,
                                      const v1::HeartbeatRequest* request,
                                      v1::HeartbeatResponse* response) override;
  grpc::ServerUnaryReactor* Complete(grpc::CallbackServerContext* ctx,
                                     const v1::CompleteRequest* request,
                                     v1::AckResponse* response) override;
  grpc::ServerUnaryReactor* Fail(grpc::CallbackServerContext* ctx,
                                 const v1::FailRequest* request,
                                 v1::AckResponse* response) override;

 private:
  const ServiceContext context_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_SERVICE_WORKER_SERVICE_H_
