// The daemon's allocator: malloc itself goes to jemalloc, and the settings
// reach it. The test binary links the same object as fairqd, so
// malloc_conf is read at its first allocation.
#include "server/allocator/allocator.h"

#include <cstdint>
#include <cstdlib>

#include <gtest/gtest.h>

#ifndef FAIRQ_SANITIZER_ALLOCATOR
#include <jemalloc/jemalloc.h>
#endif

namespace fairq::server {
namespace {

#ifdef FAIRQ_SANITIZER_ALLOCATOR

TEST(AllocatorTest, SanitizerBuildsSayJemallocIsNotLinked) {
  EXPECT_NE(DescribeAllocator().find("sanitizer"), std::string::npos);
}

#else

uint64_t AllocatedByThisThread() {
  uint64_t bytes = 0;
  size_t size = sizeof(bytes);
  EXPECT_EQ(mallctl("thread.allocated", &bytes, &size, nullptr, 0), 0);
  return bytes;
}

TEST(AllocatorTest, MallocIsServedByJemalloc) {
  constexpr size_t kBytes = size_t{1} << 20;
  uint64_t before = AllocatedByThisThread();
  void* volatile block = std::malloc(kBytes);  // volatile: not elided
  uint64_t after = AllocatedByThisThread();
  std::free(block);
  EXPECT_GE(after - before, kBytes);
}

TEST(AllocatorTest, JemallocRunsWithTheDaemonsDecaySettings) {
  std::string described = DescribeAllocator();
  EXPECT_EQ(described.rfind("jemalloc 5.", 0), 0u) << described;
  EXPECT_NE(described.find("dirty_decay_ms 10000,"), std::string::npos)
      << described;
  EXPECT_NE(described.find("muzzy_decay_ms 0,"), std::string::npos)
      << described;
  EXPECT_NE(described.find("background_thread true)"), std::string::npos)
      << described;
}

#endif

}  // namespace
}  // namespace fairq::server
