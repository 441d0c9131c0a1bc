// AdminService: fairq.v1.Admin. Tenant settings and queue inspection go
// through the dispatcher; dead-letter listing reads the store directly
// (dead jobs are not kept in memory).
//
// Thread-safe: gRPC calls the methods on its own threads.
#ifndef FAIRQ_SERVER_SERVICE_ADMIN_SERVICE_H_
#define FAIRQ_SERVER_SERVICE_ADMIN_SERVICE_H_

#include "fairq/v1/fairq.grpc.pb.h"
#include "server/service/service_context.h"

namespace fairq::server {

class AdminService final : public v1::Admin::CallbackService {
 public:
  explicit AdminService(ServiceContext context) : context_(context) {}

  grpc::ServerUnaryReactor* GetTenant(grpc::CallbackServerContext* ctx,
                                      const v1::GetTenantRequest* request,
                                      v1::Tenant* response) override;
  grpc::ServerUnaryReactor* ListTenants(
      grpc::CallbackServerContext* ctx, const v1::ListTenantsRequest* request,
      v1::ListTenantsResponse* response) override;
  grpc::ServerUnaryReactor* SetTenant(grpc::CallbackServerContext* ctx,
                                      const v1::SetTenantRequest* request,
                                      v1::Tenant* response) override;
  grpc::ServerUnaryReactor* PauseTenant(grpc::CallbackServerContext* ctx,
                                        const v1::PauseTenantRequest* request,
                                        v1::Tenant* response) override;
  grpc::ServerUnaryReactor* ResumeTenant(grpc::CallbackServerContext* ctx,
                                         const v1::PauseTenantRequest* request,
                                         v1::Tenant* response) override;
  grpc::ServerUnaryReactor* GetQueueStats(
      grpc::CallbackServerContext* ctx,
      const v1::GetQueueStatsRequest* request,
      v1::GetQueueStatsResponse* response) override;
  grpc::ServerUnaryReactor* ListDeadLetters(
      grpc::CallbackServerContext* ctx,
      const v1::ListDeadLettersRequest* request,
      v1::ListDeadLettersResponse* response) override;
  grpc::ServerUnaryReactor* RequeueDeadLetters(
      grpc::CallbackServerContext* ctx,
      const v1::RequeueDeadLettersRequest* request,
      v1::RequeueDeadLettersResponse* response) override;
  grpc::ServerUnaryReactor* PurgeTenant(grpc::CallbackServerContext* ctx,
                                        const v1::PurgeTenantRequest* request,
                                        v1::PurgeTenantResponse* response) override;

 private:
  grpc::ServerUnaryReactor* SetPaused(grpc::CallbackServerContext* ctx,
                                      const std::string& name, bool paused,
                                      v1::Tenant* response);

  const ServiceContext context_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_SERVICE_ADMIN_SERVICE_H_
