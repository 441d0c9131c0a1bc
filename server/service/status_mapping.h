// The one place where fairq Status becomes grpc::Status: the codes are
// numbered alike, and a retry delay travels as trailing metadata.
//
// Pure functions; safe from any thread.
#ifndef FAIRQ_SERVER_SERVICE_STATUS_MAPPING_H_
#define FAIRQ_SERVER_SERVICE_STATUS_MAPPING_H_

#include <cstdint>
#include <optional>

#include <grpcpp/grpcpp.h>

#include "base/status.h"

namespace fairq::server {

inline constexpr char kRetryAfterTrailer[] = "fairq-retry-after-ms";

grpc::Status ToGrpcStatus(const Status& status);

// As ToGrpcStatus, and when `retry_after_ms` is set adds the trailer to
// `context` (which must still be open).
grpc::Status ToGrpcStatus(const Status& status,
                          std::optional<int64_t> retry_after_ms,
                          grpc::ServerContextBase* context);

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_SERVICE_STATUS_MAPPING_H_
