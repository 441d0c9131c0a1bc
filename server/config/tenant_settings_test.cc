#include "server/config/tenant_settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace fairq::config {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

v1::Tenant Named(const std::string& name) {
  v1::Tenant tenant;
  tenant.set_name(name);
  return tenant;
}

std::string ErrorOf(const v1::Tenant& tenant,
                    std::string_view field = "tenant") {
  Status status = ValidateTenant(tenant, field);
  EXPECT_FALSE(status.ok()) << tenant.ShortDebugString();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  return status.message();
}

TEST(TenantSettingsTest, ZeroWeightMeansOne) {
  StatusOr<sched::TenantConfig> config =
      ToSchedulerTenant(Named("a"), "tenant");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->name, "a");
  EXPECT_EQ(config->weight, 1.0);
  EXPECT_FALSE(config->cap.is_set());
  EXPECT_FALSE(config->floor.is_set());
  EXPECT_EQ(config->cap_mode, sched::CapMode::kWorkConserving);
}

TEST(TenantSettingsTest, ConvertsEverySchedulerSetting) {
  v1::Tenant tenant = Named("reports");
  tenant.set_org("acme");
  tenant.set_weight(2.5);
  tenant.mutable_cap()->set_share(0.5);
  tenant.set_cap_mode(v1::CAP_MODE_HARD);
  tenant.mutable_floor()->set_slots(1);
  tenant.mutable_quotas()->set_enqueue_rate(10);
  StatusOr<sched::TenantConfig> config = ToSchedulerTenant(tenant, "tenant");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->org, "acme");
  EXPECT_EQ(config->weight, 2.5);
  EXPECT_TRUE(config->cap.is_share());
  EXPECT_EQ(config->cap.value(), 0.5);
  EXPECT_EQ(config->cap_mode, sched::CapMode::kHard);
  EXPECT_EQ(config->floor.ToString(), "1");

  v1::Tenant back = FromSchedulerTenant(*config);
  tenant.clear_quotas();
  EXPECT_EQ(back.SerializeAsString(), tenant.SerializeAsString())
      << back.ShortDebugString();
}

TEST(TenantSettingsTest, FieldPrefixNamesTheSetting) {
  v1::Tenant tenant = Named("a");
  tenant.set_weight(-1);
  // The problem is the scheduler's own wording; the field is the caller's.
  EXPECT_THAT(ErrorOf(tenant), StartsWith("tenant.weight: must be between"));
  EXPECT_THAT(ErrorOf(tenant), EndsWith(", got -1"));
  EXPECT_THAT(ErrorOf(tenant, "tenants[2]"),
              StartsWith("tenants[2].weight: must be"));
  EXPECT_THAT(ErrorOf(tenant, ""), StartsWith("weight: must be"));
  tenant.set_weight(std::numeric_limits<double>::infinity());
  EXPECT_THAT(ErrorOf(tenant), StartsWith("tenant.weight: "));
  tenant.set_weight(std::nan(""));
  EXPECT_THAT(ErrorOf(tenant), StartsWith("tenant.weight: "));
  tenant.set_weight(sched::kMaxWeight * 2);
  EXPECT_THAT(ErrorOf(tenant), StartsWith("tenant.weight: "));
  tenant.set_weight(sched::kMaxWeight);
  EXPECT_TRUE(ValidateTenant(tenant, "tenant").ok());
}

TEST(TenantSettingsTest, NamesFollowTheNameRule) {
  EXPECT_EQ(ErrorOf(Named("")), "tenant.name: must not be empty");
  EXPECT_THAT(ErrorOf(Named("a b")), HasSubstr("tenant.name: character ' '"));
  v1::Tenant tenant = Named("a");
  tenant.set_org("a/b");
  EXPECT_THAT(ErrorOf(tenant), HasSubstr("tenant.org: character '/'"));
}

TEST(TenantSettingsTest, CapAndFloorFollowSlotLimitRules) {
  v1::Tenant tenant = Named("a");
  tenant.mutable_cap()->set_slots(0);
  EXPECT_EQ(ErrorOf(tenant),
            "tenant.cap: a slot count must be at least 1, got 0");
  tenant.mutable_cap()->set_share(1.5);
  EXPECT_THAT(ErrorOf(tenant), HasSubstr("tenant.cap: a share must lie in"));
  tenant.mutable_cap()->set_share(0);
  EXPECT_THAT(ErrorOf(tenant), HasSubstr("tenant.cap: a share must lie in"));
  tenant.mutable_cap()->set_slots(2);
  tenant.mutable_floor()->set_share(std::nan(""));
  EXPECT_THAT(ErrorOf(tenant), HasSubstr("tenant.floor: a share must lie"));
  tenant.mutable_floor()->set_slots(3);
  EXPECT_EQ(ErrorOf(tenant), "tenant.floor: 3 exceeds the cap 2");
  tenant.mutable_floor()->set_slots(2);
  EXPECT_TRUE(ValidateTenant(tenant, "tenant").ok());
  // A count and a share cannot be compared until capacity is known.
  tenant.mutable_floor()->set_share(1.0);
  EXPECT_TRUE(ValidateTenant(tenant, "tenant").ok());
}

TEST(TenantSettingsTest, AnEmptySlotLimitIsNoLimit) {
  v1::Tenant tenant = Named("a");
  tenant.mutable_cap();  // present but neither slots nor share
  StatusOr<sched::TenantConfig> config = ToSchedulerTenant(tenant, "tenant");
  ASSERT_TRUE(config.ok());
  EXPECT_FALSE(config->cap.is_set());
  EXPECT_FALSE(FromSchedulerLimit(sched::SlotLimit()).has_slots());
  EXPECT_FALSE(FromSchedulerLimit(sched::SlotLimit()).has_share());
}

TEST(TenantSettingsTest, UnknownCapModeAndBadQuotas) {
  v1::Tenant tenant = Named("a");
  tenant.set_cap_mode(static_cast<v1::CapMode>(7));
  EXPECT_EQ(ErrorOf(tenant), "tenant.cap_mode: unknown mode 7");
  tenant.set_cap_mode(v1::CAP_MODE_UNSPECIFIED);
  tenant.mutable_quotas()->set_enqueue_rate(-1);
  EXPECT_EQ(ErrorOf(tenant),
            "tenant.quotas.enqueue_rate: must be 0 (no limit) or a finite "
            "number >= 0.001, got -1");
  tenant.mutable_quotas()->set_enqueue_rate(std::nan(""));
  EXPECT_THAT(ErrorOf(tenant), HasSubstr("tenant.quotas.enqueue_rate"));
  // So small that its suggested retry delay would overflow.
  tenant.mutable_quotas()->set_enqueue_rate(1e-20);
  EXPECT_THAT(ErrorOf(tenant), HasSubstr("tenant.quotas.enqueue_rate"));
  for (double fine : {0.0, 0.001, 1e6}) {
    tenant.mutable_quotas()->set_enqueue_rate(fine);
    EXPECT_TRUE(ValidateTenant(tenant, "tenant").ok()) << fine;
  }
}

TEST(TenantSettingsTest, SettingsCheckIgnoresTheName) {
  v1::Tenant tenant;  // a template: no name
  EXPECT_TRUE(ValidateTenantSettings(tenant, "tenant_defaults").ok());
  tenant.set_weight(-2);
  EXPECT_THAT(ValidateTenantSettings(tenant, "tenant_defaults").message(),
              StartsWith("tenant_defaults.weight: must be"));
}

google::protobuf::FieldMask Mask(std::initializer_list<const char*> paths) {
  google::protobuf::FieldMask mask;
  for (const char* path : paths) mask.add_paths(path);
  return mask;
}

TEST(TenantMaskTest, OnlyTheListedSettingsCanBeNamed) {
  EXPECT_TRUE(
      ValidateTenantMask(Mask({"org", "weight", "cap", "cap_mode", "floor",
                               "quotas", "quotas.max_queued",
                               "quotas.enqueue_rate", "quotas.enqueue_burst"}),
                         "update_mask")
          .ok());
  EXPECT_TRUE(ValidateTenantMask(Mask({}), "update_mask").ok());
  for (const char* refused :
       {"name", "paused", "cap.slots", "quotas.nope", "", "weight.x"}) {
    Status status =
        ValidateTenantMask(Mask({"weight", refused}), "update_mask");
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << refused;
    EXPECT_THAT(status.message(), StartsWith("update_mask.paths[1]: "))
        << refused;
  }
}

TEST(TenantMaskTest, MergeTakesTheNamedFieldsAndKeepsTheRest) {
  v1::Tenant current = Named("a");
  current.set_org("acme");
  current.set_weight(3);
  current.mutable_cap()->set_slots(8);
  current.set_paused(true);
  current.mutable_quotas()->set_max_queued(100);
  current.mutable_quotas()->set_enqueue_rate(5);
  v1::Tenant update = Named("a");
  update.set_weight(7);
  update.set_org("ignored: not in the mask");
  update.mutable_quotas()->set_max_queued(200);
  v1::Tenant merged =
      MergeTenant(current, update, Mask({"weight", "quotas.max_queued"}));
  EXPECT_EQ(merged.weight(), 7);
  EXPECT_EQ(merged.org(), "acme");
  EXPECT_EQ(merged.cap().slots(), 8u);
  EXPECT_TRUE(merged.paused());
  EXPECT_EQ(merged.quotas().max_queued(), 200u);
  EXPECT_EQ(merged.quotas().enqueue_rate(), 5);
  // A named message field the update lacks is cleared: no cap.
  EXPECT_FALSE(MergeTenant(current, update, Mask({"cap"})).has_cap());
}

}  // namespace
}  // namespace fairq::config
