// ValidateName and NameProblem: the one rule for names that users choose and
// fairq keys by (tenants, pools, organisations): 1-128 characters from
// [A-Za-z0-9._-], so a name is safe in storage keys, metric labels and log
// lines.
// Pure function; safe from any thread.
#ifndef FAIRQ_SERVER_CONFIG_NAMES_H_
#define FAIRQ_SERVER_CONFIG_NAMES_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace fairq::config {

inline constexpr size_t kMaxNameLength = 128;

// OK, or InvalidArgument "<field>: <problem>", e.g.
// `tenants[2].name: character ' ' at position 3 is not allowed (...)`.
// The message does not echo the name: it may be long or binary.
[[nodiscard]] Status ValidateName(std::string_view name,
                                  std::string_view field);

// The problem alone ("must not be empty", ...), or nullopt for a valid
// name: for hot paths that build the field's name only for an error.
[[nodiscard]] std::optional<std::string> NameProblem(std::string_view name);

}  // namespace fairq::config

#endif  // FAIRQ_SERVER_CONFIG_NAMES_H_
