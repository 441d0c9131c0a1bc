#include "server/service/rpc_metrics.h"

#include <google/protobuf/descriptor.h>

#include <atomic>
#include <chrono>

namespace fairq::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

class RpcMetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  RpcMetricsInterceptor(metrics::Metrics& metrics, const char* method)
      : metrics_(metrics),
        method_(method != nullptr ? method : ""),
        start_(std::chrono::steady_clock::now()) {}

  // A call whose status was never sent (its client went away first).
  ~RpcMetricsInterceptor() override {
    if (!reported_.exchange(true)) Report(grpc::StatusCode::CANCELLED);
  }

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS) &&
        !reported_.exchange(true)) {
      Report(methods->GetSendStatus().error_code());
    }
    methods->Proceed();
  }

 private:
  void Report(grpc::StatusCode code) {
    std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start_;
    metrics_.RpcFinished(method_, static_cast<int>(code), took.count());
  }

  metrics::Metrics& metrics_;
  const char* const method_;  // gRPC's, valid for the call
  const std::chrono::steady_clock::time_point start_;
  // gRPC may run the hooks of one call's batches on different threads at
  // once (sending the status, noticing the client's close).
  std::atomic<bool> reported_{false};
};

}  // namespace

std::vector<std::string> ServedRpcMethods() {
  std::vector<std::string> methods = {"/grpc.health.v1.Health/Check",
                                      "/grpc.health.v1.Health/Watch"};
  const google::protobuf::DescriptorPool* pool =
      google::protobuf::DescriptorPool::generated_pool();
  for (const char* service :
       {"fairq.v1.Producer", "fairq.v1.Worker", "fairq.v1.Admin"}) {
    const google::protobuf::ServiceDescriptor* descriptor =
        pool->FindServiceByName(service);
    for (int i = 0; descriptor != nullptr && i < descriptor->method_count();
         ++i) {
      methods.push_back("/" + descriptor->full_name() + "/" +
                        descriptor->method(i)->name());
    }
  }
  return methods;
}

grpc::experimental::Interceptor* RpcMetricsFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new RpcMetricsInterceptor(metrics_, info->method());
}

}  // namespace fairq::server
