// UTF-8 validity, for the SDK's strings that travel in proto3 `string`
// fields: the broker's parser refuses a whole request for one invalid byte
// in any of them, before fairqd's own checks can name the field.
// Hand-written: protobuf's validator is internal API, and the standard
// library has none.
//
// Pure functions; safe from any thread.
#ifndef FAIRQ_CLIENT_SDK_UTF8_H_
#define FAIRQ_CLIENT_SDK_UTF8_H_

#include <cstddef>
#include <string_view>

namespace fairq::client::internal {

// The length of the valid UTF-8 sequence that starts at s[at], or 0 (RFC
// 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
// REQUIRES: at < s.size().
size_t Utf8SequenceLength(std::string_view s, size_t at);

bool IsValidUtf8(std::string_view s);

}  // namespace fairq::client::internal

#endif  // FAIRQ_CLIENT_SDK_UTF8_H_
