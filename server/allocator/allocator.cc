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
#include <cstdint>

// jemalloc reads this at its first allocation. By default it keeps freed
// pages for 10 s (dirty) and then 10 s more (muzzy) before giving them back;
// with 2M jobs queued that held RSS after a restart at 289 MiB (303 MB),
// over the 300 MB target. Returning them after 1 s keeps the speed (A/B in
// docs/benchmarks.md) at 280-283 MiB. Without a background thread, pages
// are only returned when some thread allocates: a daemon that went quiet
// right after 2M enqueues kept 346 MiB, 310 MiB with the thread.
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's interface.
const char* malloc_conf =
    "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0";
}

namespace fairq::server {
namespace {

// -1 is jemalloc's own value ("never decay"), so a failed read shows as -2.
constexpr int64_t kUnreadable = -2;

int64_t ReadDecayMs(const char* name) {
  ssize_t value = kUnreadable;
  size_t size = sizeof(value);
  if (mallctl(name, &value, &size, nullptr, 0) != 0) return kUnreadable;
  return value;
}

}  // namespace

std::string DescribeAllocator() {
  const char* version = nullptr;
  size_t size = sizeof(version);
  if (mallctl("version", &version, &size, nullptr, 0) != 0 ||
      version == nullptr) {
    return "jemalloc (version unknown)";
  }
  bool background = false;
  size = sizeof(background);
  bool background_read =
      mallctl("opt.background_thread", &background, &size, nullptr, 0) == 0;
  return std::string("jemalloc ") + version + " (dirty_decay_ms " +
         std::to_string(ReadDecayMs("opt.dirty_decay_ms")) +
         ", muzzy_decay_ms " +
         std::to_string(ReadDecayMs("opt.muzzy_decay_ms")) +
         ", background_thread " +
         (background_read ? (background ? "true" : "false") : "unknown") + ")";
}

}  // namespace fairq::server

#endif  // FAIRQ_SANITIZER_ALLOCATOR
