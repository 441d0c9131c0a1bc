#include "client/sdk/error_text.h"

#include <algorithm>

#include "client/sdk/utf8.h"

namespace fairq::client::internal {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
constexpr std::string_view kCut = "...";

}  // namespace

std::string ErrorText(std::string_view message) {
  std::string out;
  // Past the limit the rest would be cut anyway.
  for (size_t at = 0; at < message.size() && out.size() <= kMaxErrorBytes;) {
    const size_t length = Utf8SequenceLength(message, at);
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
