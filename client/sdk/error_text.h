// ErrorText: a handler's error message made fit for a Fail report. The
// broker takes `error` only as valid UTF-8 (a proto3 string: one bad byte
// fails the parse of the whole call, and with it every report batched in)
// of at most 4,096 bytes (longer refuses the whole call too).
//
// Pure function; safe from any thread.
#ifndef FAIRQ_CLIENT_SDK_ERROR_TEXT_H_
#define FAIRQ_CLIENT_SDK_ERROR_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace fairq::client::internal {

inline constexpr size_t kMaxErrorBytes = 4096;  // the broker's (docs/api.md)

// `message` with each byte that is not part of a valid UTF-8 sequence
// replaced by U+FFFD, cut at a character boundary to fit kMaxErrorBytes
// with "..." marking the cut.
std::string ErrorText(std::string_view message);

}  // namespace fairq::client::internal

#endif  // FAIRQ_CLIENT_SDK_ERROR_TEXT_H_
