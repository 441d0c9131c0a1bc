#include "server/config/names.h"

#include <string>

namespace fairq::config {

Status ValidateName(std::string_view name, std::string_view field) {
  std::optional<std::string> problem = NameProblem(name);
  if (!problem) return Status::Ok();
  return InvalidArgument(std::string(field) + ": " + *problem);
}

}  // namespace fairq::config
