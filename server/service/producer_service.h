// ProducerService: fairq.v1.Producer. Validates and translates; the
// dispatcher does the rest (see broker/broker.h).
//
// Thread-safety: the CallLoop runs the handlers on the dispatcher thread,
// GetJob and CancelJob (which read the store) on its store-reads thread.
#ifndef FAIRQ_SERVER_SERVICE_PRODUCER_SERVICE_H_
#define FAIRQ_SERVER_SERVICE_PRODUCER_SERVICE_H_

#include "fairq/v1/fairq.grpc.pb.h"
#include "server/service/call_loop.h"
#include "server/service/service_context.h"

namespace fairq::server {

class ProducerService final {
 public:
  explicit ProducerService(ServiceContext context) : context_(context) {}

  // For ServerBuilder::RegisterService.
  grpc::Service* service() { return &async_; }
  // Serves every method on `loop`; before loop.Start().
  void ServeOn(CallLoop& loop);

 private:
  void Enqueue(Call& call, const v1::EnqueueRequest* request,
               v1::EnqueueResponse* response);
  void EnqueueBatch(Call& call, const v1::EnqueueBatchRequest* request,
                    v1::EnqueueBatchResponse* response);
  void GetJob(Call& call, const v1::GetJobRequest* request, v1::Job* response);
  void CancelJob(Call& call, const v1::CancelJobRequest* request,
                 v1::Job* response);

  const ServiceContext context_;
  v1::Producer::AsyncService async_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_SERVICE_PRODUCER_SERVICE_H_
