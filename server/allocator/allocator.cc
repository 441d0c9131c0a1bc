#include "server/allocator/allocator.h"

#ifdef FAIRQ_SANITIZER_ALLOCATOR

namespace fairq::server {

std::string DescribeAllocator() {
  return "the sanitizer's (FAIRQ_SANITIZE build, jemalloc not linked)";
}

}  // namespace fairq::server

#else

#include <jemalloc/jemalloc.h>

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>

// jemalloc reads this at its first allocation. By default it keeps freed
// pages for 10 s (dirty) and then 10 s more (muzzy) before giving them back.
// Freed pages go straight from dirty to the kernel (no muzzy stage); 10 s
// of dirty pages spare the page faults of memory freed and soon reused
// (+4% at the 2M backlog, 4 same-run pairs) for +10 MiB of RSS after a
// restart with 2M jobs (docs/benchmarks.md, sixth round). Without a
// background thread, pages are only returned when some thread allocates: a
// daemon that went quiet right after 2M enqueues kept 346 MiB, 310 MiB with
// the thread (with the job table of 2026-11-30).
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's interface.
const char* malloc_conf =
    "background_thread:true,dirty_decay_ms:10000,muzzy_decay_ms:0";
}

namespace fairq::server {
namespace {

// One of jemalloc's read-only settings (mallctl), if it can be read.
template <typename T>
std::optional<T> ReadSetting(const char* name) {
  T value{};
  size_t size = sizeof(value);
  if (mallctl(name, &value, &size, nullptr, 0) != 0) return std::nullopt;
  return value;
}

template <typename T>
std::string Show(const std::optional<T>& value) {
  if (!value) return "unknown";
  if constexpr (std::is_same_v<T, bool>) {
    return *value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, const char*>) {
    return *value != nullptr ? *value : "unknown";
  } else {
    return std::to_string(*value);
  }
}

}  // namespace

std::string DescribeAllocator() {
  return "jemalloc " + Show(ReadSetting<const char*>("version")) +
         " (dirty_decay_ms " +
         Show(ReadSetting<ssize_t>("opt.dirty_decay_ms")) +
         ", muzzy_decay_ms " +
         Show(ReadSetting<ssize_t>("opt.muzzy_decay_ms")) +
         ", background_thread " +
         Show(ReadSetting<bool>("opt.background_thread")) + ")";
}

}  // namespace fairq::server

#endif  // FAIRQ_SANITIZER_ALLOCATOR
