// The canonical names of gRPC's status codes ("RESOURCE_EXHAUSTED"), by
// number. fairq's Status, the SDK's, fairqctl, fairq-bench and the RPC
// metrics' `code` label all print them; gRPC's C++ API has no such function.
// Standard library only.
#ifndef FAIRQ_BASE_CODE_NAME_H_
#define FAIRQ_BASE_CODE_NAME_H_

#include <array>
#include <cstddef>
#include <string_view>

namespace fairq {

inline constexpr std::array<std::string_view, 17> kCanonicalCodeNames = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED"};

inline constexpr int kUnknownCodeNumber = 2;

// The index of `code` in kCanonicalCodeNames; UNKNOWN's for numbers gRPC
// does not define.
constexpr size_t CanonicalCodeIndex(int code) {
  return code >= 0 && static_cast<size_t>(code) < kCanonicalCodeNames.size()
             ? static_cast<size_t>(code)
             : static_cast<size_t>(kUnknownCodeNumber);
}

constexpr std::string_view CanonicalCodeName(int code) {
  return kCanonicalCodeNames[CanonicalCodeIndex(code)];
}

}  // namespace fairq

#endif  // FAIRQ_BASE_CODE_NAME_H_
