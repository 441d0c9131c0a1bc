// ProducerService: fairq.v1.Producer. Validates and translates; the
// dispatcher does the rest (see broker/broker.h).
//
// Thread-safe: gRPC calls the methods on its own threads.
#ifndef FAIRQ_SERVER_SERVICE_PRODUCER_SERVICE_H_
#define FAIRQ_SERVER_SERVICE_PRODUCER_SERVICE_H_

#include "fairq/v1/fairq.grpc.pb.h"
#include "server/service/service_context.h"

namespace fairq::server {

class ProducerService final : public v1::Producer::CallbackService {
 public:
  explicit ProducerService(ServiceContext context) : context_(context) {}

  grpc::ServerUnaryReactor* Enqueue(grpc::CallbackServerContext* ctx,
                                    const v1::EnqueueRequest* request,
                                    v1::EnqueueResponse* response) override;
  grpc::ServerUnaryReactor* EnqueueBatch(
      grpc::CallbackServerContext* ctx, const v1::EnqueueBatchRequest* request,
      v1::EnqueueBatchResponse* response) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* ctx,
                                   const v1::GetJobRequest* request,
                                   v1::Job* response) override;
  grpc::ServerUnaryReactor* CancelJob(grpc::CallbackServerContext* ctx,
                                      const v1::CancelJobRequest* request,
                                      v1::Job* response) override;

 private:
  const ServiceContext context_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_SERVICE_PRODUCER_SERVICE_H_
