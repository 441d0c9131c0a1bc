#include "client/sdk/error_text.h"

#include <algorithm>

namespace fairq::client::internal {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
constexpr std::string_view kCut = "...";

// The length of the valid UTF-8 sequence that starts at `at`, or 0 (RFC
// 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
// Hand-written: protobuf's validator is internal API, and the standard
// library has none.
size_t SequenceLength(std::string_view s, size_t at) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (at + length > s.size()) return 0;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(at + k) < 0x80 || byte(at + k) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

std::string ErrorText(std::string_view message) {
  std::string out;
  // Past the limit the rest would be cut anyway.
  for (size_t at = 0; at < message.size() && out.size() <= kMaxErrorBytes;) {
    const size_t length = SequenceLength(message, at);
    out += length > 0 ? message.substr(at, length) : kReplacement;
    at += std::max<size_t>(length, 1);
  }
  if (out.size() <= kMaxErrorBytes) return out;
  size_t end = kMaxErrorBytes - kCut.size();
  while ((static_cast<unsigned char>(out[end]) & 0xC0) == 0x80) --end;
  out.resize(end);
  out += kCut;
  return out;
}

}  // namespace fairq::client::internal
