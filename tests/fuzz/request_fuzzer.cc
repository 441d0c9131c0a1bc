// Fuzz target: the checks every request passes on a gRPC thread before the
// dispatcher sees it (server/service/request_validation.h), the same
// functions the services call. The first byte picks the message; the rest
// is its wire form. Whatever the fields hold, each check returns,
// and an error names the field it is about ("field: problem").
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fairq/v1/fairq.pb.h"
#include "server/config/tenant_settings.h"
#include "server/service/request_validation.h"
#include "quiet_protobuf.h"

namespace {

using fairq::Status;


void ExpectNamedField(const Status& status) {
  if (status.ok()) return;
  if (status.code() != fairq::StatusCode::kInvalidArgument ||
      status.message().find(": ") == std::string::npos) {
    std::abort();
  }
}

template <typename Message>
bool Parse(const uint8_t* data, size_t size, Message* message) {
  return message->ParseFromArray(data, static_cast<int>(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fairq::fuzz::QuietProtobuf();
  if (size == 0) return 0;
  const fairq::server::RequestLimits limits;
  const uint8_t kind = data[0] % 6;
  ++data;
  --size;
  switch (kind) {
    case 0: {
      fairq::v1::EnqueueBatchRequest request;
      if (!Parse(data, size, &request)) return 0;
      ExpectNamedField(fairq::server::ValidateBatchSize(request.jobs_size(),
                                                        limits, "jobs"));
      for (const Status& job :
           fairq::server::ValidateBatchJobs(request, limits)) {
        ExpectNamedField(job);
      }
      return 0;
    }
    case 1: {
      fairq::v1::LeaseRequest request;
      if (!Parse(data, size, &request)) return 0;
      ExpectNamedField(fairq::server::ValidateLeaseRequest(request));
      return 0;
    }
    case 2: {
      fairq::v1::CompleteRequest request;
      if (!Parse(data, size, &request)) return 0;
      ExpectNamedField(fairq::server::ValidateComplete(request, limits));
      return 0;
    }
    case 3: {
      fairq::v1::FailRequest request;
      if (!Parse(data, size, &request)) return 0;
      ExpectNamedField(fairq::server::ValidateFail(request, limits));
      return 0;
    }
    case 5: {
      fairq::v1::ReleaseRequest request;
      if (!Parse(data, size, &request)) return 0;
      ExpectNamedField(fairq::server::ValidateRelease(request, limits));
      return 0;
    }
    default: {
      fairq::v1::SetTenantRequest request;
      if (!Parse(data, size, &request)) return 0;
      Status valid = fairq::server::ValidateSetTenant(request);
      ExpectNamedField(valid);
      if (valid.ok()) {
        (void)fairq::config::ToSchedulerTenant(request.tenant(), "tenant");
      }
      return 0;
    }
  }
}
