// RPC metrics: a gRPC server interceptor that reports every call's method,
// status code and latency to metrics::Metrics::RpcFinished.
//
// An interceptor rather than the handlers' finish points: calls end in many
// places (validation in FinishNow, Done callbacks on the writer threads,
// a canceled Lease, a full command queue, the health service and
// unimplemented methods), and only the interceptor sees each of them once
// with the status actually sent. It is installed only when the exporter
// is on.
//
// Thread-safe: gRPC creates one interceptor per call, on the thread that
// reads it (the dispatcher); its hooks run where the call is finished.
#ifndef FAIRQ_SERVER_SERVICE_RPC_METRICS_H_
#define FAIRQ_SERVER_SERVICE_RPC_METRICS_H_

#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <string>
#include <vector>

#include "metrics/metrics.h"

namespace fairq::server {

// "/package.Service/Method" of every method fairqd serves: the fairq.v1
// services and the gRPC health check.
std::vector<std::string> ServedRpcMethods();

class RpcMetricsFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  // `metrics` must outlive the server.
  explicit RpcMetricsFactory(metrics::Metrics& metrics) : metrics_(metrics) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  metrics::Metrics& metrics_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_SERVICE_RPC_METRICS_H_
