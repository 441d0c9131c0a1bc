#include "server/service/request_validation.h"

#include <cmath>
#include <optional>
#include <string>

#include "base/format_number.h"
#include "google/protobuf/util/time_util.h"
#include "sched/types.h"
#include "server/broker/commands.h"
#include "server/config/daemon_config.h"
#include "server/config/names.h"
#include "server/config/tenant_settings.h"

namespace fairq::server {
namespace {

using google::protobuf::Duration;
using google::protobuf::util::TimeUtil;

std::string Field(std::string_view prefix, std::string_view name) {
  std::string out(prefix);
  if (!out.empty()) out += '.';
  out += name;
  return out;
}

Status Invalid(std::string_view prefix, std::string_view name,
               const std::string& problem) {
  return InvalidArgument(Field(prefix, name) + ": " + problem);
}

// The ranges google/protobuf/duration.proto and timestamp.proto define;
// protobuf 3.21's TimeUtil has no validity check of its own.
bool IsValid(const Duration& d) {
  constexpr int64_t kMaxSeconds = 315'576'000'000;
  return d.seconds() >= -kMaxSeconds && d.seconds() <= kMaxSeconds &&
         d.nanos() > -1'000'000'000 && d.nanos() < 1'000'000'000 &&
         !(d.seconds() > 0 && d.nanos() < 0) &&
         !(d.seconds() < 0 && d.nanos() > 0);
}

bool IsValid(const google::protobuf::Timestamp& t) {
  return t.seconds() >= -62'135'596'800 && t.seconds() <= 253'402'300'799 &&
         t.nanos() >= 0 && t.nanos() < 1'000'000'000;
}

// Whether min_ms <= d <= max_ms, to the nanosecond: the broker passes a
// runtime on at nanosecond precision, and one that only rounded into range
// (a nanosecond below zero) would fail the scheduler's own check there.
// REQUIRES: IsValid(d), max_ms <= 9e12 (so nanoseconds fit in int64).
bool InRange(const Duration& d, int64_t min_ms, int64_t max_ms) {
  if (d.seconds() < min_ms / 1000 - 1 || d.seconds() > max_ms / 1000 + 1) {
    return false;
  }
  int64_t ns = TimeUtil::DurationToNanoseconds(d);
  return ns >= min_ms * 1'000'000 && ns <= max_ms * 1'000'000;
}

// A Duration must be well formed and lie in [min_ms, max_ms].
Status CheckDuration(const Duration& d, int64_t min_ms, int64_t max_ms,
                     std::string_view prefix, std::string_view name) {
  if (!IsValid(d)) return Invalid(prefix, name, "not a valid duration");
  if (!InRange(d, min_ms, max_ms)) {
    return Invalid(prefix, name,
                   "must be between " +
                       FormatNumber(static_cast<double>(min_ms) / 1000) +
                       " s and " +
                       FormatNumber(static_cast<double>(max_ms) / 1000) +
                       " s, got " +
                       TimeUtil::ToString(d));
  }
  return Status::Ok();
}

// A name (tenant, pool): the field is named only for an error, since every
// enqueued job passes here.
Status CheckName(std::string_view value, std::string_view prefix,
                 std::string_view name) {
  std::optional<std::string> problem = NameProblem(value);
  return problem ? Invalid(prefix, name, *problem) : Status::Ok();
}

// A worker's measured runtime, as Complete and Fail report it.
Status CheckRuntime(const Duration& runtime) {
  return CheckDuration(runtime, 0,
                       static_cast<int64_t>(sched::kMaxSeconds) * 1000, "",
                       "runtime");
}

Status CheckFailure(const v1::Failure& failure) {
  FAIRQ_RETURN_IF_ERROR(CheckRuntime(failure.runtime()));
  if (failure.error().size() > kMaxErrorText) {
    return Invalid("", "error", "at most 4096 bytes");
  }
  return Status::Ok();
}

// `not_before` is checked against kMaxScheduleAheadMs by the broker, which
// has the enqueue's time.
Status CheckSchedule(const v1::JobSpec& spec, std::string_view field) {
  if (spec.has_delay()) {
    return CheckDuration(spec.delay(), 0, kMaxScheduleAheadMs, field, "delay");
  }
  if (spec.has_not_before() && !IsValid(spec.not_before())) {
    return Invalid(field, "not_before", "not a valid timestamp");
  }
  return Status::Ok();
}

Status CheckRetryAndLease(const v1::JobSpec& spec, std::string_view field) {
  constexpr int64_t kMaxBackoffMs = 7LL * 24 * 3600 * 1000;
  if (spec.retry().has_initial_backoff()) {
    FAIRQ_RETURN_IF_ERROR(CheckDuration(spec.retry().initial_backoff(), 0,
                                        kMaxBackoffMs, field,
                                        "retry.initial_backoff"));
  }
  if (spec.retry().has_max_backoff()) {
    FAIRQ_RETURN_IF_ERROR(CheckDuration(spec.retry().max_backoff(), 0,
                                        kMaxBackoffMs, field,
                                        "retry.max_backoff"));
    if (spec.retry().has_initial_backoff() &&
        spec.retry().max_backoff() < spec.retry().initial_backoff()) {
      return Invalid(field, "retry.max_backoff",
                     "must not be below retry.initial_backoff");
    }
  }
  if (spec.has_lease_duration()) {
    FAIRQ_RETURN_IF_ERROR(CheckDuration(spec.lease_duration(), 1000,
                                        config::kMaxLeaseSeconds * 1000LL,
                                        field, "lease_duration"));
  }
  return Status::Ok();
}

// `labels["key"]`, the key cut at 32 bytes (on a character boundary:
// proto3 strings are UTF-8) so that a 100 KB key does not make the error.
std::string LabelName(const std::string& key) {
  constexpr size_t kShown = 32;
  if (key.size() <= kShown) return "labels[\"" + key + "\"]";
  size_t cut = kShown;
  while (cut > 0 && (static_cast<unsigned char>(key[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return "labels[\"" + key.substr(0, cut) + "...\"]";
}

Status CheckLabels(const v1::JobSpec& spec, std::string_view field) {
  if (spec.labels_size() > 64) {
    return Invalid(field, "labels", "at most 64 entries, got " +
                                        std::to_string(spec.labels_size()));
  }
  for (const auto& [key, value] : spec.labels()) {
    if (key.empty() || key.size() > 128) {
      return Invalid(
          field, LabelName(key),
          "keys must be 1-128 bytes, got " + std::to_string(key.size()));
    }
    if (value.size() > 1024) {
      return Invalid(field, LabelName(key),
                     "values must be at most 1024 bytes, got " +
                         std::to_string(value.size()));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateJobSpec(const v1::JobSpec& spec, const RequestLimits& limits,
                       std::string_view field) {
  FAIRQ_RETURN_IF_ERROR(CheckName(spec.tenant(), field, "tenant"));
  if (!spec.pool().empty()) {
    FAIRQ_RETURN_IF_ERROR(CheckName(spec.pool(), field, "pool"));
  }
  if (spec.priority() < -kMaxPriority || spec.priority() > kMaxPriority) {
    return Invalid(field, "priority",
                   "must be between -1000 and 1000, got " +
                       std::to_string(spec.priority()));
  }
  if (spec.has_estimated_cost_seconds()) {
    double cost = spec.estimated_cost_seconds();
    if (!(cost >= 0 && cost <= sched::kMaxSeconds)) {
      return Invalid(field, "estimated_cost_seconds",
                     "must be between 0 and 1e9, got " + FormatNumber(cost));
    }
  }
  if (spec.payload().size() > limits.max_payload_bytes) {
    return Invalid(field, "payload",
                   std::to_string(spec.payload().size()) +
                       " bytes exceeds the limit of " +
                       std::to_string(limits.max_payload_bytes));
  }
  if (spec.idempotency_key().size() > kMaxIdempotencyKey) {
    return Invalid(field, "idempotency_key", "at most 256 bytes");
  }
  if (spec.max_attempts() > config::kMaxAttempts) {
    return Invalid(field, "max_attempts",
                   "at most 1000, got " + std::to_string(spec.max_attempts()));
  }
  FAIRQ_RETURN_IF_ERROR(CheckRetryAndLease(spec, field));
  FAIRQ_RETURN_IF_ERROR(CheckSchedule(spec, field));
  FAIRQ_RETURN_IF_ERROR(CheckLabels(spec, field));
  // Fields a newer client sends are kept (and stored) as unknown fields:
  // only the whole spec's size bounds them, as Lease replies rely on.
  if (size_t size = spec.ByteSizeLong(); size > limits.max_spec_bytes) {
    return Invalid(field, "size",
                   std::to_string(size) +
                       " bytes in all (unknown fields included), over the "
                       "limit of " +
                       std::to_string(limits.max_spec_bytes) +
                       ": max_payload_bytes plus 80 KiB");
  }
  return Status::Ok();
}

Status InItem(Status status, std::string_view list, int index) {
  if (status.ok()) return status;
  return Status(status.code(), std::string(list) + "[" +
                                   std::to_string(index) + "]." +
                                   status.message());
}

std::vector<Status> ValidateBatchJobs(const v1::EnqueueBatchRequest& request,
                                      const RequestLimits& limits) {
  std::vector<Status> problems;
  problems.reserve(static_cast<size_t>(request.jobs_size()));
  for (int i = 0; i < request.jobs_size(); ++i) {
    problems.push_back(
        InItem(ValidateJobSpec(request.jobs(i), limits, ""), "jobs", i));
  }
  return problems;
}

// With a mask only the named fields are taken, and the tenant they make is
// checked after the merge (Broker::ApplyTenant): a field the mask does not
// name, such as a stale cap read before another operator raised it, must
// not refuse a floor that fits the cap in force.
Status ValidateSetTenant(const v1::SetTenantRequest& request) {
  if (!request.has_update_mask()) {
    return config::ValidateTenant(request.tenant(), "tenant");
  }
  FAIRQ_RETURN_IF_ERROR(
      config::ValidateName(request.tenant().name(), "tenant.name"));
  return config::ValidateTenantMask(request.update_mask(), "update_mask");
}

Status ValidateBatchSize(int size, const RequestLimits& limits,
                         std::string_view field) {
  if (size >= 1 && static_cast<uint32_t>(size) <= limits.max_batch) {
    return Status::Ok();
  }
  return InvalidArgument(std::string(field) + ": must hold 1 to " +
                         std::to_string(limits.max_batch) + " items, got " +
                         std::to_string(size));
}

Status ValidateLeaseRequest(const v1::LeaseRequest& request) {
  const std::string& worker = request.worker_id();
  if (worker.empty() || worker.size() > 128) {
    return InvalidArgument("worker_id: must be 1-128 characters");
  }
  if (request.pools_size() > kMaxWorkerPools) {
    return InvalidArgument("pools: at most " + std::to_string(kMaxWorkerPools) +
                           " per worker, got " +
                           std::to_string(request.pools_size()));
  }
  for (int i = 0; i < request.pools_size(); ++i) {
    if (auto problem = NameProblem(request.pools(i))) {
      return InvalidArgument("pools[" + std::to_string(i) + "]: " + *problem);
    }
    // A pool named twice would count the worker's slots twice in it.
    for (int j = 0; j < i; ++j) {
      if (request.pools(j) == request.pools(i)) {
        return InvalidArgument("pools[" + std::to_string(i) +
                               "]: the same as pools[" + std::to_string(j) +
                               "]");
      }
    }
  }
  if (request.slots() < 1 || request.slots() > kMaxSlots) {
    return InvalidArgument("slots: must be between 1 and 10000, got " +
                           std::to_string(request.slots()));
  }
  if (request.max_jobs() > request.slots()) {
    return InvalidArgument("max_jobs: must not exceed slots (" +
                           std::to_string(request.slots()) + "), got " +
                           std::to_string(request.max_jobs()));
  }
  if (request.has_wait()) {
    return CheckDuration(request.wait(), 0, kMaxLeaseWaitMs, "", "wait");
  }
  return Status::Ok();
}

Status ValidateComplete(const v1::CompleteRequest& request,
                        const RequestLimits& limits) {
  FAIRQ_RETURN_IF_ERROR(
      ValidateBatchSize(request.completions_size(), limits, "completions"));
  for (int i = 0; i < request.completions_size(); ++i) {
    FAIRQ_RETURN_IF_ERROR(InItem(CheckRuntime(request.completions(i).runtime()),
                                 "completions", i));
  }
  return Status::Ok();
}

Status ValidateFail(const v1::FailRequest& request,
                    const RequestLimits& limits) {
  FAIRQ_RETURN_IF_ERROR(
      ValidateBatchSize(request.failures_size(), limits, "failures"));
  for (int i = 0; i < request.failures_size(); ++i) {
    FAIRQ_RETURN_IF_ERROR(InItem(CheckFailure(request.failures(i)), "failures", i));
  }
  return Status::Ok();
}

// Items carry nothing to check: a wrong id or token gets its own result.
Status ValidateRelease(const v1::ReleaseRequest& request,
                       const RequestLimits& limits) {
  return ValidateBatchSize(request.leases_size(), limits, "leases");
}

}  // namespace fairq::server
