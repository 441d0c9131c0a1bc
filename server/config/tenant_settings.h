// A tenant's settings in their API form (fairq.v1.Tenant, shared by the config
// file and Admin.SetTenant): the checks both apply, and the conversions to and
// from the scheduler's TenantConfig. The scheduler's own Validate rules decide
// weight, cap and floor, so the three never disagree.
// Pure functions; safe from any thread.
#ifndef FAIRQ_SERVER_CONFIG_TENANT_SETTINGS_H_
#define FAIRQ_SERVER_CONFIG_TENANT_SETTINGS_H_

#include <string_view>

#include "base/status.h"
#include "fairq/v1/fairq.pb.h"
#include "google/protobuf/field_mask.pb.h"
#include "sched/slot_limit.h"
#include "sched/types.h"

namespace fairq::config {

inline constexpr double kMinEnqueueRate = 0.001;  // jobs/s

// Every check of ValidateTenantSettings plus the name (ValidateName) and, when
// set, the org name. `field` prefixes each message's field: "tenants[2]" gives
// "tenants[2].weight: must be between 0.000001 and 1000000, got -1"; "" gives
// "weight: ...". Ignores `paused` (output only).
[[nodiscard]] Status ValidateTenant(const v1::Tenant& tenant,
                                    std::string_view field);

// Everything but the names: weight in [sched::kMinWeight, sched::kMaxWeight]
// (0 means 1), cap and floor by the SlotLimit rules, floor not above the cap
// when both are of one kind, a known cap_mode, quotas.enqueue_rate 0 (no
// limit) or finite and >= kMinEnqueueRate. For templates such as the
// config's tenant_defaults, which have no name.
[[nodiscard]] Status ValidateTenantSettings(const v1::Tenant& tenant,
                                            std::string_view field);

// An update_mask of Admin.SetTenant: each path one of those fairq.proto
// lists. `field` names the mask: "update_mask" gives
// "update_mask.paths[1]: ...".
[[nodiscard]] Status ValidateTenantMask(const google::protobuf::FieldMask& mask,
                                        std::string_view field);

// `current` with the fields `mask` names taken from `update`; a named
// message field that `update` lacks is cleared. REQUIRES: `mask` passed
// ValidateTenantMask. The result is not checked: pass it to ValidateTenant.
v1::Tenant MergeTenant(const v1::Tenant& current, const v1::Tenant& update,
                       const google::protobuf::FieldMask& mask);

// ValidateTenant, then the scheduler's form of the tenant (weight 0 becomes
// 1; quotas and `paused` are not scheduler settings and are dropped).
StatusOr<sched::TenantConfig> ToSchedulerTenant(const v1::Tenant& tenant,
                                                std::string_view field);

// The API form of a scheduler tenant (quotas and `paused` left clear).
v1::Tenant FromSchedulerTenant(const sched::TenantConfig& config);

// Conversions without checks. An absent or empty v1.SlotLimit is "no limit".
sched::SlotLimit ToSchedulerLimit(const v1::SlotLimit& limit);
v1::SlotLimit FromSchedulerLimit(const sched::SlotLimit& limit);
// UNSPECIFIED means work-conserving; an unknown value (proto3 enums are
// open) also reads as work-conserving, which ValidateTenantSettings refuses.
sched::CapMode ToSchedulerCapMode(v1::CapMode mode);
v1::CapMode FromSchedulerCapMode(sched::CapMode mode);

}  // namespace fairq::config

#endif  // FAIRQ_SERVER_CONFIG_TENANT_SETTINGS_H_
