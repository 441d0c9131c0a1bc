// Small client-side helpers for the integration tests: building job specs and
// requests, and making one RPC with a deadline (every call a test makes is
// bounded in time, see Deadline() in fairqd_process.h).
//
// Header-only, so any test target that links fairqd_process can use it.
// The functions are stateless and safe from any thread (gRPC stubs are).
#ifndef FAIRQ_TESTS_INTEGRATION_CLIENT_UTIL_H_
#define FAIRQ_TESTS_INTEGRATION_CLIENT_UTIL_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fairq/v1/fairq.grpc.pb.h"
#include "tests/integration/fairqd_process.h"

namespace fairq::testing {

// The trailer fairqd attaches to RESOURCE_EXHAUSTED (see fairq.proto).
inline constexpr char kRetryAfterTrailer[] = "fairq-retry-after-ms";

inline google::protobuf::Duration Millis(int64_t ms) {
  google::protobuf::Duration d;
  d.set_seconds(ms / 1000);
  d.set_nanos(static_cast<int32_t>((ms % 1000) * 1'000'000));
  return d;
}

inline int64_t ToMillis(const google::protobuf::Timestamp& t) {
  return t.seconds() * 1000 + t.nanos() / 1'000'000;
}

inline int64_t ToMillis(const google::protobuf::Duration& d) {
  return d.seconds() * 1000 + d.nanos() / 1'000'000;
}

// A job for `tenant` with `payload`; everything else left to the broker.
inline v1::JobSpec Spec(const std::string& tenant,
                        const std::string& payload = "") {
  v1::JobSpec spec;
  spec.set_tenant(tenant);
  spec.set_payload(payload);
  return spec;
}

// A retry policy with short backoffs, so retry tests wait milliseconds.
inline v1::JobSpec WithFastRetry(v1::JobSpec spec, int64_t initial_ms = 0,
                                 int64_t max_ms = 100) {
  *spec.mutable_retry()->mutable_initial_backoff() = Millis(initial_ms);
  *spec.mutable_retry()->mutable_max_backoff() = Millis(max_ms);
  return spec;
}

inline v1::LeaseRequest LeaseReq(const std::string& worker_id, int64_t wait_ms,
                                 uint32_t max_jobs = 1,
                                 std::vector<std::string> pools = {}) {
  v1::LeaseRequest request;
  request.set_worker_id(worker_id);
  request.set_slots(max_jobs < 1 ? 1 : max_jobs);
  request.set_max_jobs(max_jobs);
  *request.mutable_wait() = Millis(wait_ms);
  for (std::string& pool : pools) request.add_pools(std::move(pool));
  return request;
}

// One unary call with a deadline `seconds` from now. `trailers`, when given,
// receives the server's trailing metadata (e.g. kRetryAfterTrailer).
template <class Stub, class Request, class Response>
grpc::Status Call(Stub& stub,
                  grpc::Status (Stub::*method)(grpc::ClientContext*,
                                               const Request&, Response*),
                  const Request& request, Response* response,
                  double seconds = 10,
                  std::multimap<std::string, std::string>* trailers = nullptr) {
  grpc::ClientContext context;
  context.set_deadline(Deadline(seconds));
  grpc::Status status = (stub.*method)(&context, request, response);
  if (trailers != nullptr) {
    trailers->clear();
    for (const auto& [key, value] : context.GetServerTrailingMetadata()) {
      trailers->emplace(std::string(key.data(), key.size()),
                        std::string(value.data(), value.size()));
    }
  }
  return status;
}

// Enqueue one job. On success `*id` is the job id.
inline grpc::Status Enqueue(v1::Producer::Stub& producer,
                            const v1::JobSpec& spec, uint64_t* id = nullptr,
                            bool* duplicate = nullptr) {
  v1::EnqueueRequest request;
  *request.mutable_job() = spec;
  v1::EnqueueResponse response;
  grpc::Status status =
      Call(producer, &v1::Producer::Stub::Enqueue, request, &response);
  if (id != nullptr) *id = response.job_id();
  if (duplicate != nullptr) *duplicate = response.duplicate();
  return status;
}

inline grpc::Status EnqueueBatch(v1::Producer::Stub& producer,
                                 const std::vector<v1::JobSpec>& specs,
                                 v1::EnqueueBatchResponse* response) {
  v1::EnqueueBatchRequest request;
  for (const v1::JobSpec& spec : specs) *request.add_jobs() = spec;
  return Call(producer, &v1::Producer::Stub::EnqueueBatch, request, response);
}

// A Lease call; its RPC deadline is the wait plus 10 s of slack.
inline grpc::Status Lease(v1::Worker::Stub& worker,
                          const v1::LeaseRequest& request,
                          v1::LeaseResponse* response) {
  double wait_s = static_cast<double>(ToMillis(request.wait())) / 1000;
  return Call(worker, &v1::Worker::Stub::Lease, request, response, wait_s + 10);
}

inline grpc::Status GetJob(v1::Producer::Stub& producer, uint64_t id,
                           v1::Job* job) {
  v1::GetJobRequest request;
  request.set_job_id(id);
  return Call(producer, &v1::Producer::Stub::GetJob, request, job);
}

inline grpc::Status CancelJob(v1::Producer::Stub& producer, uint64_t id,
                              v1::Job* job) {
  v1::CancelJobRequest request;
  request.set_job_id(id);
  return Call(producer, &v1::Producer::Stub::CancelJob, request, job);
}

inline grpc::Status Heartbeat(v1::Worker::Stub& worker, uint64_t id,
                              uint64_t token, v1::HeartbeatResponse* response) {
  v1::HeartbeatRequest request;
  request.set_job_id(id);
  request.set_lease_token(token);
  return Call(worker, &v1::Worker::Stub::Heartbeat, request, response);
}

// Complete one job; the call status, with the item's result in *result.
inline grpc::Status Complete(v1::Worker::Stub& worker, uint64_t id,
                             uint64_t token, v1::AckResult* result,
                             int64_t runtime_ms = 10) {
  v1::CompleteRequest request;
  v1::Completion* done = request.add_completions();
  done->set_job_id(id);
  done->set_lease_token(token);
  *done->mutable_runtime() = Millis(runtime_ms);
  v1::AckResponse response;
  grpc::Status status =
      Call(worker, &v1::Worker::Stub::Complete, request, &response);
  if (result != nullptr) {
    *result =
        response.results_size() > 0 ? response.results(0) : v1::AckResult();
  }
  return status;
}

inline grpc::Status Fail(v1::Worker::Stub& worker, uint64_t id, uint64_t token,
                         const std::string& error, bool retryable,
                         v1::AckResult* result) {
  v1::FailRequest request;
  v1::Failure* failure = request.add_failures();
  failure->set_job_id(id);
  failure->set_lease_token(token);
  failure->set_error(error);
  failure->set_retryable(retryable);
  *failure->mutable_runtime() = Millis(10);
  v1::AckResponse response;
  grpc::Status status =
      Call(worker, &v1::Worker::Stub::Fail, request, &response);
  if (result != nullptr) {
    *result =
        response.results_size() > 0 ? response.results(0) : v1::AckResult();
  }
  return status;
}

// Lets `ms` of time pass on the daemon's own clock: a Lease long poll on a
// pool no job ever uses, which the daemon answers (empty) when its wait
// runs out. For tests that must show something does NOT happen before a
// deadline; never a substitute for waiting on an event. Needs
// auto_create_pools (the default). Returns the call's status.
inline grpc::Status LetTimePass(v1::Worker::Stub& worker, int64_t ms) {
  v1::LeaseResponse response;
  return Lease(worker, LeaseReq("fairq-test-clock", ms, 1, {"fairq-test-idle"}),
               &response);
}

// Checks `condition` until it holds, at most 500 times, 10 ms apart: for
// effects a test cannot be told of (a signal's, a log line's). Bounded in
// count and time; the pause only spaces the checks, so that a poll does
// not take a core from the fairqd it waits for.
template <class Condition>
bool Eventually(Condition condition) {
  for (int check = 0; check < 500; ++check) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

}  // namespace fairq::testing

#endif  // FAIRQ_TESTS_INTEGRATION_CLIENT_UTIL_H_
