// SIGHUP re-reads the config file and applies its tenants' settings.
#include <gtest/gtest.h>

#include "tests/integration/fairqd_process.h"

namespace fairq::testing {
namespace {

TEST(ReloadTest, SighupAppliesTheFilesTenantSettings) {
  FairqdProcess fairqd("tenants:\n  - {name: acme, weight: 1}\n");
  ASSERT_TRUE(fairqd.Start()) << fairqd.error();
  auto admin = fairqd.Admin();
  ASSERT_TRUE(fairqd.Reload("tenants:\n  - {name: acme, weight: 3, cap: 2}\n"));
  // The reload runs when fairqd takes the signal, which the test cannot
  // observe directly: ask until the new weight shows, within a deadline.
  v1::Tenant tenant;
  auto give_up = Deadline(10);
  while (std::chrono::system_clock::now() < give_up && tenant.weight() != 3) {
    grpc::ClientContext context;
    context.set_deadline(Deadline(2));
    v1::GetTenantRequest request;
    request.set_name("acme");
    ASSERT_TRUE(admin->GetTenant(&context, request, &tenant).ok());
  }
  EXPECT_EQ(tenant.weight(), 3);
  EXPECT_EQ(tenant.cap().slots(), 2u);
}

TEST(ReloadTest, ABadFileOnReloadKeepsTheOldSettingsAndServing) {
  FairqdProcess fairqd("tenants:\n  - {name: acme, weight: 2}\n");
  ASSERT_TRUE(fairqd.Start()) << fairqd.error();
  ASSERT_TRUE(fairqd.Reload("tenants:\n  - {name: acme, weight: -1}\n"));
  // Signals of one kind do not queue, so wait for this one to be handled
  // (fairqd logs the refusal) before sending the next.
  auto give_up = Deadline(10);
  while (std::chrono::system_clock::now() < give_up &&
         fairqd.Log().find("reload refused") == std::string::npos) {
  }
  ASSERT_NE(fairqd.Log().find("reload refused"), std::string::npos);
  EXPECT_NE(fairqd.Log().find("tenants[0].weight"), std::string::npos);
  auto admin = fairqd.Admin();
  auto weight = [&] {
    grpc::ClientContext context;
    context.set_deadline(Deadline(2));
    v1::GetTenantRequest request;
    request.set_name("acme");
    v1::Tenant tenant;
    EXPECT_TRUE(admin->GetTenant(&context, request, &tenant).ok());
    return tenant.weight();
  };
  EXPECT_EQ(weight(), 2);  // unchanged, and still serving
  ASSERT_TRUE(fairqd.Reload("tenants:\n  - {name: acme, weight: 5}\n"));
  give_up = Deadline(10);
  while (std::chrono::system_clock::now() < give_up && weight() != 5) {
  }
  EXPECT_EQ(weight(), 5);
}

}  // namespace
}  // namespace fairq::testing
