// Status and StatusOr: the result of every fallible fairq client call. A
// Status carries the gRPC code and message and, for RESOURCE_EXHAUSTED, the
// broker's suggested retry delay. The SDK never throws out of its API.
//
// Immutable values; safe to share across threads. Standard library only, so
// this header can be included without gRPC.
#ifndef FAIRQ_CLIENT_STATUS_H_
#define FAIRQ_CLIENT_STATUS_H_

#include <cassert>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace fairq::client {

// gRPC's status codes, numbered as grpc::StatusCode so the SDK converts 1:1.
enum class Code : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// "RESOURCE_EXHAUSTED" etc.; "UNKNOWN" for numbers outside the list.
std::string_view CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message,
         std::optional<std::chrono::milliseconds> retry_after = std::nullopt)
      : code_(code),
        message_(std::move(message)),
        retry_after_(retry_after) {}

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // Set with RESOURCE_EXHAUSTED from the broker: how long to wait before a
  // retry may succeed (the "fairq-retry-after-ms" trailer of Enqueue, or the
  // job's retry_after in an EnqueueBatch result).
  std::optional<std::chrono::milliseconds> retry_after() const {
    return retry_after_;
  }
  // "UNAVAILABLE: connection refused", "OK"; with the retry delay if any.
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::optional<std::chrono::milliseconds> retry_after_;
};

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : rep_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : rep_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(rep_).ok() && "StatusOr needs an error status");
  }

  bool ok() const { return std::holds_alternative<T>(rep_); }
  Status status() const { return ok() ? Status() : std::get<Status>(rep_); }

  // REQUIRES: ok().
  const T& value() const& { return std::get<T>(rep_); }
  T& value() & { return std::get<T>(rep_); }
  T&& value() && { return std::get<T>(std::move(rep_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Status> rep_;
};

}  // namespace fairq::client

#endif  // FAIRQ_CLIENT_STATUS_H_
