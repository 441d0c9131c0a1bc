#include "server/config/names.h"

#include <cstdio>
#include <string>

namespace fairq::config {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

// Names arrive from RPCs too: a control byte or half a UTF-8 sequence must
// not end up raw in a log line.
std::string Printable(char c) {
  auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7f) return std::string("'") + c + "'";
  char hex[8];
  std::snprintf(hex, sizeof(hex), "0x%02x", byte);
  return hex;
}

}  // namespace

std::optional<std::string> NameProblem(std::string_view name) {
  if (name.empty()) return "must not be empty";
  if (name.size() > kMaxNameLength) {
    return "must be at most " + std::to_string(kMaxNameLength) +
           " characters, got " + std::to_string(name.size());
  }
  for (size_t i = 0; i < name.size(); ++i) {
    if (IsNameChar(name[i])) continue;
    return "character " + Printable(name[i]) + " at position " +
           std::to_string(i + 1) +
           " is not allowed (use A-Z, a-z, 0-9, '.', '_', '-')";
  }
  return std::nullopt;
}

Status ValidateName(std::string_view name, std::string_view field) {
  std::optional<std::string> problem = NameProblem(name);
  if (!problem) return Status::Ok();
  return InvalidArgument(std::string(field) + ": " + *problem);
}

}  // namespace fairq::config
