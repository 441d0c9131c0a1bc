// HealthService: the standard grpc.health.v1.Health/Check on the CallLoop's
// completion queue. gRPC's built-in health service runs on the callback
// API, whose threads would poll fairqd's sockets beside the dispatcher;
// and Debian's grpc++ ships no generated health stub, so the two messages
// (one string field in, one enum out) are read and written here by hand
// with protobuf's wire-format reader. Watch is not served (UNIMPLEMENTED):
// probes (Kubernetes, grpc_health_probe) call Check.
//
// Thread-safety: SetServing from any thread; the calls run on the loop.
#ifndef FAIRQ_SERVER_SERVICE_HEALTH_SERVICE_H_
#define FAIRQ_SERVER_SERVICE_HEALTH_SERVICE_H_

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <optional>
#include <string>

namespace fairq::server {

class HealthService {
 public:
  grpc::AsyncGenericService* service() { return &service_; }

  // After the server has started: answers calls on `cq` from now on.
  void Start(grpc::ServerCompletionQueue* cq);

  // The status of the server as a whole (service name ""); other names
  // are NOT_FOUND.
  void SetServing(bool serving) { serving_.store(serving); }

  // HealthCheckRequest's `service` field, or nullopt when the request is
  // not a HealthCheckRequest. Exposed for tests.
  static std::optional<std::string> ParseServiceName(grpc::ByteBuffer* request);

 private:
  friend class HealthCall;
  grpc::AsyncGenericService service_;
  std::atomic<bool> serving_{true};
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_SERVICE_HEALTH_SERVICE_H_
