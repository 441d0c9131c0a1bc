// AdminService: fairq.v1.Admin. Tenant settings and queue inspection go
// through the dispatcher; dead-letter listing reads the store directly
// (dead jobs are not kept in memory).
//
// Thread-safety: the CallLoop runs the handlers on the dispatcher thread,
// the dead-letter ones (which read the store) on its store-reads thread.
#ifndef FAIRQ_SERVER_SERVICE_ADMIN_SERVICE_H_
#define FAIRQ_SERVER_SERVICE_ADMIN_SERVICE_H_

#include "fairq/v1/fairq.grpc.pb.h"
#include "server/service/call_loop.h"
#include "server/service/service_context.h"

namespace fairq::server {

class AdminService final {
 public:
  explicit AdminService(ServiceContext context) : context_(context) {}

  // For ServerBuilder::RegisterService.
  grpc::Service* service() { return &async_; }
  // Serves every method on `loop`; before loop.Start().
  void ServeOn(CallLoop& loop);

 private:
  void GetTenant(Call& call, const v1::GetTenantRequest* request,
                 v1::Tenant* response);
  void ListTenants(Call& call, const v1::ListTenantsRequest* request,
                   v1::ListTenantsResponse* response);
  void SetTenant(Call& call, const v1::SetTenantRequest* request,
                 v1::Tenant* response);
  void PauseTenant(Call& call, const v1::PauseTenantRequest* request,
                   v1::Tenant* response);
  void ResumeTenant(Call& call, const v1::PauseTenantRequest* request,
                    v1::Tenant* response);
  void GetQueueStats(Call& call, const v1::GetQueueStatsRequest* request,
                     v1::GetQueueStatsResponse* response);
  void ListDeadLetters(Call& call, const v1::ListDeadLettersRequest* request,
                       v1::ListDeadLettersResponse* response);
  void RequeueDeadLetters(Call& call,
                          const v1::RequeueDeadLettersRequest* request,
                          v1::RequeueDeadLettersResponse* response);
  void PurgeTenant(Call& call, const v1::PurgeTenantRequest* request,
                   v1::PurgeTenantResponse* response);
  void SetPaused(Call& call, const std::string& name, bool paused,
                 v1::Tenant* response);

  const ServiceContext context_;
  v1::Admin::AsyncService async_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_SERVICE_ADMIN_SERVICE_H_
