// How fairqd refuses to start, with a reason, rather than start wrongly.
#include <gtest/gtest.h>

#include "tests/integration/fairqd_process.h"

namespace fairq::testing {
namespace {

// gRPC's default SO_REUSEPORT would let both bind and split the clients.
TEST(StartupTest, ASecondDaemonOnATakenPortRefusesToStart) {
  FairqdProcess first;
  ASSERT_TRUE(first.Start()) << first.error();
  FairqdProcess second("", "127.0.0.1:" + std::to_string(first.port()));
  EXPECT_FALSE(second.Start());
  EXPECT_NE(second.Log().find("cannot serve gRPC"), std::string::npos)
      << second.Log();
}

TEST(StartupTest, ABadConfigNamesFileLineAndField) {
  FairqdProcess fairqd("default_lease_seconds: 0\n");
  EXPECT_FALSE(fairqd.Start());
  EXPECT_NE(fairqd.Log().find("fairqd.yaml:4: default_lease_seconds"),
            std::string::npos)
      << fairqd.Log();
}

}  // namespace
}  // namespace fairq::testing
