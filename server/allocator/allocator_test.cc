// The allocator settings reach jemalloc: the test binary links the same
// object as fairqd, so malloc_conf is read at its first allocation.
#include "server/allocator/allocator.h"

#include <gtest/gtest.h>

namespace fairq::server {
namespace {

TEST(AllocatorTest, JemallocRunsWithTheDaemonsDecaySettings) {
  std::string described = DescribeAllocator();
  EXPECT_EQ(described.rfind("jemalloc 5.", 0), 0u) << described;
  EXPECT_NE(described.find("dirty_decay_ms 1000,"), std::string::npos)
      << described;
  EXPECT_NE(described.find("muzzy_decay_ms 0)"), std::string::npos)
      << described;
}

}  // namespace
}  // namespace fairq::server
