#include "client/sdk/grpc_util.h"

#include <algorithm>
#include <charconv>

#include "client/sdk/duration_limit.h"
#include "client/sdk/utf8.h"

namespace fairq::client::internal {
namespace {

using std::chrono::milliseconds;

std::optional<milliseconds> RetryAfterTrailer(
    const grpc::ClientContext& context) {
  const auto& trailers = context.GetServerTrailingMetadata();
  auto found = trailers.find(kRetryAfterTrailer);
  if (found == trailers.end()) return std::nullopt;
  int64_t ms = 0;
  const char* end = found->second.data() + found->second.size();
  auto [ptr, error] = std::from_chars(found->second.data(), end, ms);
  // A malformed delay is ignored rather than guessed at.
  if (error != std::errc() || ptr != end || ms < 0) return std::nullopt;
  return std::min(milliseconds(ms), kMaxOptionDuration);
}

google::protobuf::Timestamp ToTimestamp(
    std::chrono::system_clock::time_point t) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                t.time_since_epoch())
                .count();
  // Timestamps keep nanos in [0, 1e9) also before 1970.
  int64_t seconds = ns / 1'000'000'000;
  int64_t nanos = ns % 1'000'000'000;
  if (nanos < 0) {
    --seconds;
    nanos += 1'000'000'000;
  }
  google::protobuf::Timestamp out;
  out.set_seconds(seconds);
  out.set_nanos(static_cast<int32_t>(nanos));
  return out;
}

}  // namespace

Status FromGrpc(const grpc::Status& status,
                const grpc::ClientContext& context) {
  if (status.ok()) return Status();
  auto code = static_cast<Code>(status.error_code());
  std::optional<milliseconds> retry_after;
  if (code == Code::kResourceExhausted) retry_after = RetryAfterTrailer(context);
  return Status(code, status.error_message(), retry_after);
}

Status FromEnqueueResult(const v1::EnqueueResult& result) {
  if (result.code() == 0) return Status();
  auto code = static_cast<Code>(result.code());
  std::optional<milliseconds> retry_after;
  if (code == Code::kResourceExhausted && result.has_retry_after()) {
    retry_after = std::clamp(ToMillis(result.retry_after()), milliseconds(0),
                             kMaxOptionDuration);
  }
  return Status(code, result.message(), retry_after);
}

Status FromAckResult(const v1::AckResult& result) {
  if (result.code() == 0) return Status();
  return Status(static_cast<Code>(result.code()), result.message());
}

Status CheckUtf8(const v1::JobSpec& spec) {
  auto invalid = [](const std::string& field) {
    return Status(Code::kInvalidArgument, field + ": not valid UTF-8");
  };
  if (!IsValidUtf8(spec.tenant())) return invalid("tenant");
  if (!IsValidUtf8(spec.pool())) return invalid("pool");
  if (!IsValidUtf8(spec.idempotency_key())) return invalid("idempotency_key");
  for (const auto& [key, value] : spec.labels()) {
    if (!IsValidUtf8(key) || !IsValidUtf8(value)) return invalid("labels");
  }
  return Status();
}

StatusOr<v1::JobSpec> ToProto(const JobSpec& spec) {
  if (spec.delay && spec.not_before) {
    return Status(Code::kInvalidArgument,
                  "delay, not_before: at most one may be set");
  }
  v1::JobSpec out;
  out.set_tenant(spec.tenant);
  out.set_pool(spec.pool);
  out.set_priority(spec.priority);
  if (spec.estimated_cost_seconds) {
    out.set_estimated_cost_seconds(*spec.estimated_cost_seconds);
  }
  out.set_payload(spec.payload);
  out.set_idempotency_key(spec.idempotency_key);
  out.set_max_attempts(spec.max_attempts);
  if (spec.retry_initial_backoff) {
    *out.mutable_retry()->mutable_initial_backoff() =
        ToDuration(*spec.retry_initial_backoff);
  }
  if (spec.retry_max_backoff) {
    *out.mutable_retry()->mutable_max_backoff() =
        ToDuration(*spec.retry_max_backoff);
  }
  if (spec.lease_duration) {
    *out.mutable_lease_duration() = ToDuration(*spec.lease_duration);
  }
  if (spec.delay) *out.mutable_delay() = ToDuration(*spec.delay);
  if (spec.not_before) {
    *out.mutable_not_before() = ToTimestamp(*spec.not_before);
  }
  out.mutable_labels()->insert(spec.labels.begin(), spec.labels.end());
  if (Status utf8 = CheckUtf8(out); !utf8.ok()) return utf8;
  return out;
}

LeasedJobInfo FromLeasedJob(const v1::LeasedJob& leased) {
  const v1::Job& job = leased.job();
  LeasedJobInfo info;
  info.id = job.id();
  info.tenant = job.spec().tenant();
  info.pool = job.spec().pool().empty() ? "default" : job.spec().pool();
  info.payload = job.spec().payload();
  info.attempts = job.attempts();
  info.last_error = job.last_error();
  info.labels.insert(job.spec().labels().begin(), job.spec().labels().end());
  return info;
}

google::protobuf::Duration ToDuration(std::chrono::nanoseconds d) {
  google::protobuf::Duration out;
  out.set_seconds(d.count() / 1'000'000'000);
  out.set_nanos(static_cast<int32_t>(d.count() % 1'000'000'000));
  return out;
}

milliseconds ToMillis(const google::protobuf::Duration& d) {
  // The broker's value is not trusted to fit: seconds * 1000 could
  // overflow. A century is past every duration the SDK keeps.
  constexpr int64_t kCentury = 100LL * 365 * 86400;
  int64_t seconds = std::clamp<int64_t>(d.seconds(), -kCentury, kCentury);
  return milliseconds(seconds * 1000 + d.nanos() / 1'000'000);
}

std::chrono::system_clock::time_point ToTimePoint(
    const google::protobuf::Timestamp& t) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(t.seconds()) +
          std::chrono::nanoseconds(t.nanos())));
}

std::chrono::system_clock::time_point DeadlineIn(milliseconds d) {
  return std::chrono::system_clock::now() + d;
}

void PauseReconnecting(grpc::Channel& channel,
                       std::chrono::milliseconds delay) {
  std::chrono::system_clock::time_point until = DeadlineIn(delay);
  grpc_connectivity_state state = channel.GetState(/*try_to_connect=*/true);
  while (channel.WaitForStateChange(state, until)) {
    state = channel.GetState(/*try_to_connect=*/true);
  }
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address,
                                           const RetryOptions& retry) {
  // gRPC's own reconnect backoff grows to 120 s; while it runs, calls fail
  // at once with UNAVAILABLE, and the SDK's retries would be spent before
  // the channel even tried the broker again.
  auto initial = std::max<int64_t>(retry.initial_backoff.count(), 100);
  auto max = std::max<int64_t>(retry.max_backoff.count(), initial);
  grpc::ChannelArguments args;
  // A Lease reply carries up to `slots` payloads of up to 1 MiB each; over
  // gRPC's default 4 MiB the client would drop a reply whose jobs the broker
  // has already leased.
  args.SetMaxReceiveMessageSize(-1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, static_cast<int>(initial));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
              static_cast<int>(std::min<int64_t>(max, 120'000)));
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(),
                                   args);
}

}  // namespace fairq::client::internal
