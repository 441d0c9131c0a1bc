// NameProblem: the one rule for names that users choose and fairq keys by
// (tenants, pools, organisations): 1-128 characters from [A-Za-z0-9._-], so
// a name is safe in storage keys, metric labels and log lines. Here, not in
// the daemon's config, so that the client SDK checks the same rule.
//
// Pure functions; safe from any thread.
#ifndef FAIRQ_BASE_NAMES_H_
#define FAIRQ_BASE_NAMES_H_

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace fairq {

inline constexpr size_t kMaxNameLength = 128;

namespace names_internal {

inline bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

// Names arrive from RPCs too: a control byte or half a UTF-8 sequence must
// not end up raw in a log line.
inline std::string Printable(char c) {
  auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7f) return std::string("'") + c + "'";
  char hex[8];
  std::snprintf(hex, sizeof(hex), "0x%02x", byte);
  return hex;
}

}  // namespace names_internal

// The problem ("must not be empty", ...), or nullopt for a valid name. The
// message does not echo the name: it may be long or binary.
[[nodiscard]] inline std::optional<std::string> NameProblem(
    std::string_view name) {
  if (name.empty()) return "must not be empty";
  if (name.size() > kMaxNameLength) {
    return "must be at most " + std::to_string(kMaxNameLength) +
           " characters, got " + std::to_string(name.size());
  }
  for (size_t i = 0; i < name.size(); ++i) {
    if (names_internal::IsNameChar(name[i])) continue;
    return "character " + names_internal::Printable(name[i]) + " at position " +
           std::to_string(i + 1) +
           " is not allowed (use A-Z, a-z, 0-9, '.', '_', '-')";
  }
  return std::nullopt;
}

}  // namespace fairq

#endif  // FAIRQ_BASE_NAMES_H_
