// ValidateName: the name rule (base/names.h) as a Status naming the field.
// Pure function; safe from any thread.
#ifndef FAIRQ_SERVER_CONFIG_NAMES_H_
#define FAIRQ_SERVER_CONFIG_NAMES_H_

#include <string_view>

#include "base/names.h"
#include "base/status.h"

namespace fairq::config {

// OK, or InvalidArgument "<field>: <problem>", e.g.
// `tenants[2].name: character ' ' at position 3 is not allowed (...)`.
[[nodiscard]] Status ValidateName(std::string_view name,
                                  std::string_view field);

}  // namespace fairq::config

#endif  // FAIRQ_SERVER_CONFIG_NAMES_H_
