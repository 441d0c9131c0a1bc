#include "fairq/client/status.h"

#include "src/base/code_name.h"

namespace fairq::client {

std::string_view CodeName(Code code) {
  return CanonicalCodeName(static_cast<int>(code));
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(CodeName(code_));
  out += ": ";
  out += message_;
  if (retry_after_) {
    out += " (retry after " + std::to_string(retry_after_->count()) + " ms)";
  }
  return out;
}

}  // namespace fairq::client
