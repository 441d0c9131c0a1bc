// Conversions between the SDK's types and gRPC's and fairq.v1's, and the
// channel the SDK makes from an address.
//
// Pure functions; safe from any thread.
#ifndef FAIRQ_CLIENT_SDK_GRPC_UTIL_H_
#define FAIRQ_CLIENT_SDK_GRPC_UTIL_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "fairq/client/job_context.h"
#include "fairq/client/job_spec.h"
#include "fairq/client/status.h"
#include "fairq/v1/fairq.pb.h"

namespace fairq::client::internal {

// Where fairqd puts the retry delay of a RESOURCE_EXHAUSTED reply.
inline constexpr char kRetryAfterTrailer[] = "fairq-retry-after-ms";

// The call's status; with RESOURCE_EXHAUSTED, the delay from the trailer.
Status FromGrpc(const grpc::Status& status,
                const grpc::ClientContext& context);
// One job of an EnqueueBatch reply.
Status FromEnqueueResult(const v1::EnqueueResult& result);
// One item of an AckResponse.
Status FromAckResult(const v1::AckResult& result);

// The spec's strings that go in proto3 `string` fields (the payload is
// `bytes`): one that is not UTF-8 would fail the whole call at the broker's
// parser, with no word of which field. INVALID_ARGUMENT naming the field.
Status CheckUtf8(const v1::JobSpec& spec);
// INVALID_ARGUMENT when both delay and not_before are set, or as CheckUtf8.
StatusOr<v1::JobSpec> ToProto(const JobSpec& spec);
LeasedJobInfo FromLeasedJob(const v1::LeasedJob& leased);

google::protobuf::Duration ToDuration(std::chrono::nanoseconds d);
std::chrono::milliseconds ToMillis(const google::protobuf::Duration& d);
std::chrono::system_clock::time_point ToTimePoint(
    const google::protobuf::Timestamp& t);
// For ClientContext::set_deadline.
std::chrono::system_clock::time_point DeadlineIn(std::chrono::milliseconds d);

// Waits `delay` while keeping the channel's reconnection going. With the
// synchronous API nothing polls a channel between calls, and a connection
// attempt then advances only on gRPC's 5 s backup poller: a broker that
// came back would be reached seconds late.
void PauseReconnecting(grpc::Channel& channel, std::chrono::milliseconds delay);

// A plaintext channel whose reconnect backoff stays within the SDK's retry
// backoff, so a broker that comes back is reached by the next retry, and
// with no limit on the size of replies.
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address,
                                           const RetryOptions& retry);

}  // namespace fairq::client::internal

#endif  // FAIRQ_CLIENT_SDK_GRPC_UTIL_H_
