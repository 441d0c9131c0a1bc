#include "server/service/status_mapping.h"

#include <string>

namespace fairq::server {

grpc::Status ToGrpcStatus(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      status.message());
}

grpc::Status ToGrpcStatus(const Status& status,
                          std::optional<int64_t> retry_after_ms,
                          grpc::ServerContextBase* context) {
  if (retry_after_ms) {
    context->AddTrailingMetadata(kRetryAfterTrailer,
                                 std::to_string(*retry_after_ms));
  }
  return ToGrpcStatus(status);
}

}  // namespace fairq::server
