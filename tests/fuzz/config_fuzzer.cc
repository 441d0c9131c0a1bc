// Fuzz target: fairqd's config file (config::ParseConfig). Any text gives a
// config, which DescribeEffective can print, or an error that names the
// file: fairqd prints it and exits 2, so it must say where to look.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/config/daemon_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = fairq::config::ParseConfig(text, "fuzz.yaml");
  if (config.ok()) {
    (void)fairq::config::DescribeEffective(*config);
  } else if (config.status().message().find("fuzz.yaml") == std::string::npos) {
    std::abort();
  }
  return 0;
}
