// SIGHUP re-reads the config file and applies its organisations, its
// pools and its tenants' settings.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/client_util.h"
#include "tests/integration/fairqd_process.h"

namespace fairq::testing {
namespace {

// Whether fairqd's log says `text` within about 5 s. The reload runs when
// fairqd takes the signal, which the test cannot observe otherwise; and
// signals of one kind do not queue, so a test waits for one to be handled
// before it sends the next.
bool LogSays(const FairqdProcess& fairqd, const std::string& text) {
  return Eventually(
      [&] { return fairqd.Log().find(text) != std::string::npos; });
}

TEST(ReloadTest, SighupAppliesTheFilesTenantSettings) {
  FairqdProcess fairqd("tenants:\n  - {name: acme, weight: 1}\n");
  ASSERT_TRUE(fairqd.Start()) << fairqd.error();
  auto admin = fairqd.Admin();
  ASSERT_TRUE(fairqd.Reload("tenants:\n  - {name: acme, weight: 3, cap: 2}\n"));
  // Logged once the reload is applied and durable.
  ASSERT_TRUE(LogSays(fairqd, "reloaded 0 organisations"));
  v1::Tenant tenant;
  grpc::ClientContext context;
  context.set_deadline(Deadline(2));
  v1::GetTenantRequest request;
  request.set_name("acme");
  ASSERT_TRUE(admin->GetTenant(&context, request, &tenant).ok());
  EXPECT_EQ(tenant.weight(), 3);
  EXPECT_EQ(tenant.cap().slots(), 2u);
}

// The pools the file lists are created on SIGHUP too, as at start, with
// auto_create_pools off: a job for a pool added to the list is taken once
// the reload has run (it was refused until a restart).
TEST(ReloadTest, SighupCreatesTheFilesNewPools) {
  const std::string fixed = "auto_create_pools: false\n";
  FairqdProcess fairqd(fixed + "pools: [default]\n");
  ASSERT_TRUE(fairqd.Start()) << fairqd.error();
  auto producer = fairqd.Producer();
  v1::JobSpec spec = Spec("t");
  spec.set_pool("gpu");
  EXPECT_FALSE(Enqueue(*producer, spec).ok());
  ASSERT_TRUE(fairqd.Reload(fixed + "pools: [default, gpu]\n"));
  ASSERT_TRUE(LogSays(fairqd, "2 pools"));  // logged once applied
  grpc::Status status = Enqueue(*producer, spec);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST(ReloadTest, ABadFileOnReloadKeepsTheOldSettingsAndServing) {
  FairqdProcess fairqd("tenants:\n  - {name: acme, weight: 2}\n");
  ASSERT_TRUE(fairqd.Start()) << fairqd.error();
  ASSERT_TRUE(fairqd.Reload("tenants:\n  - {name: acme, weight: -1}\n"));
  ASSERT_TRUE(LogSays(fairqd, "reload refused"));
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
  ASSERT_TRUE(LogSays(fairqd, "reloaded 0 organisations"));
  EXPECT_EQ(weight(), 5);
}

// Organisations are re-read too: the tenants of one whose weight rises
// get that much more of the workers. a is alone in org "big", b in its
// own; once big weighs 9, a should get ~90% of the leases (50% before).
TEST(ReloadTest, SighupReweightsTheFilesOrganisations) {
  const std::string tenants =
      "tenants:\n  - {name: a, org: big}\n  - {name: b}\n";
  FairqdProcess fairqd("orgs:\n  - {name: big, weight: 1}\n" + tenants);
  ASSERT_TRUE(fairqd.Start()) << fairqd.error();
  ASSERT_TRUE(fairqd.Reload("orgs:\n  - {name: big, weight: 9}\n" + tenants));
  ASSERT_TRUE(LogSays(fairqd, "reloaded 1 organisations"));

  auto producer = fairqd.Producer();
  auto worker = fairqd.Worker();
  v1::EnqueueBatchResponse enqueued;
  for (const char* tenant : {"a", "b"}) {
    ASSERT_TRUE(EnqueueBatch(*producer,
                             std::vector<v1::JobSpec>(100, Spec(tenant)),
                             &enqueued)
                    .ok());
  }
  int of_a = 0;
  for (int i = 0; i < 100; ++i) {
    v1::LeaseResponse leased;
    ASSERT_TRUE(Lease(*worker, LeaseReq("w1", 1000), &leased).ok());
    ASSERT_EQ(leased.jobs_size(), 1);
    of_a += leased.jobs(0).job().spec().tenant() == "a";
    v1::AckResult result;
    ASSERT_TRUE(Complete(*worker, leased.jobs(0).job().id(),
                         leased.jobs(0).lease_token(), &result)
                    .ok());
  }
  EXPECT_GE(of_a, 80) << "weight 9 against 1 (50 with weight 1)";
}

}  // namespace
}  // namespace fairq::testing
