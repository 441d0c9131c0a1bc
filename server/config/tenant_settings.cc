#include "server/config/tenant_settings.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "base/format_number.h"
#include "google/protobuf/util/field_mask_util.h"
#include "server/config/names.h"

namespace fairq::config {
namespace {

std::string Join(std::string_view prefix, std::string_view name) {
  if (prefix.empty()) return std::string(name);
  return std::string(prefix) + "." + std::string(name);
}

// The scheduler's messages read "weight: problem"; the caller's prefix turns
// that into "tenants[2].weight: problem".
Status Prefixed(std::string_view prefix, const Status& status) {
  if (status.ok() || prefix.empty()) return status;
  return Status(status.code(), std::string(prefix) + "." + status.message());
}

// Without the name check: the scheduler refuses an empty name, but a
// template has none, and the real name has its own stricter check.
sched::TenantConfig ToSchedulerUnchecked(const v1::Tenant& tenant) {
  sched::TenantConfig config;
  config.name = tenant.name();
  config.org = tenant.org();
  config.weight = tenant.weight() == 0 ? 1.0 : tenant.weight();
  if (tenant.has_cap()) config.cap = ToSchedulerLimit(tenant.cap());
  config.cap_mode = ToSchedulerCapMode(tenant.cap_mode());
  if (tenant.has_floor()) config.floor = ToSchedulerLimit(tenant.floor());
  return config;
}

// 0 is no limit. Below kMinEnqueueRate a tenant could enqueue nothing for
// days, and the retry delay suggested to it would overflow.
Status ValidateQuotas(const v1::Quotas& quotas, std::string_view field) {
  double rate = quotas.enqueue_rate();
  if (rate == 0 || (std::isfinite(rate) && rate >= kMinEnqueueRate)) {
    return Status::Ok();
  }
  return InvalidArgument(
      Join(field, "enqueue_rate") + ": must be 0 (no limit) " +
      "or a finite number >= " + FormatNumber(kMinEnqueueRate) + ", got " +
      FormatNumber(rate));
}

}  // namespace

Status ValidateTenant(const v1::Tenant& tenant, std::string_view field) {
  FAIRQ_RETURN_IF_ERROR(ValidateName(tenant.name(), Join(field, "name")));
  if (!tenant.org().empty()) {
    FAIRQ_RETURN_IF_ERROR(ValidateName(tenant.org(), Join(field, "org")));
  }
  return ValidateTenantSettings(tenant, field);
}

Status ValidateTenantSettings(const v1::Tenant& tenant,
                              std::string_view field) {
  if (!v1::CapMode_IsValid(tenant.cap_mode())) {
    return InvalidArgument(Join(field, "cap_mode") + ": unknown mode " +
                           std::to_string(tenant.cap_mode()));
  }
  sched::TenantConfig config = ToSchedulerUnchecked(tenant);
  config.name = "-";  // checked by ValidateTenant, not here
  FAIRQ_RETURN_IF_ERROR(Prefixed(field, sched::Validate(config)));
  return ValidateQuotas(tenant.quotas(), Join(field, "quotas"));
}

Status ValidateTenantMask(const google::protobuf::FieldMask& mask,
                          std::string_view field) {
  // `name` is the key and `paused` belongs to Pause/ResumeTenant; a path
  // into a SlotLimit would split its oneof.
  static constexpr std::array<std::string_view, 9> kPaths = {
      "org",
      "weight",
      "cap",
      "cap_mode",
      "floor",
      "quotas",
      "quotas.max_queued",
      "quotas.enqueue_rate",
      "quotas.enqueue_burst"};
  for (int i = 0; i < mask.paths_size(); ++i) {
    const std::string& path = mask.paths(i);
    if (std::find(kPaths.begin(), kPaths.end(), path) != kPaths.end()) {
      continue;
    }
    return InvalidArgument(
        Join(field, "paths[" + std::to_string(i) + "]") + ": \"" +
        (ValidateName(path, "path").ok() ? path : std::string("?")) +
        "\" is not a setting SetTenant can change (org, weight, cap, "
        "cap_mode, floor, quotas, quotas.max_queued, quotas.enqueue_rate, "
        "quotas.enqueue_burst)");
  }
  return Status::Ok();
}

v1::Tenant MergeTenant(const v1::Tenant& current, const v1::Tenant& update,
                       const google::protobuf::FieldMask& mask) {
  using google::protobuf::util::FieldMaskUtil;
  FieldMaskUtil::MergeOptions options;
  options.set_replace_message_fields(true);  // "cap" with no cap clears it
  v1::Tenant merged = current;
  FieldMaskUtil::MergeMessageTo(update, mask, options, &merged);
  return merged;
}

StatusOr<sched::TenantConfig> ToSchedulerTenant(const v1::Tenant& tenant,
                                                std::string_view field) {
  FAIRQ_RETURN_IF_ERROR(ValidateTenant(tenant, field));
  return ToSchedulerUnchecked(tenant);
}

v1::Tenant FromSchedulerTenant(const sched::TenantConfig& config) {
  v1::Tenant tenant;
  tenant.set_name(config.name);
  tenant.set_org(config.org);
  tenant.set_weight(config.weight);
  if (config.cap.is_set())
    *tenant.mutable_cap() = FromSchedulerLimit(config.cap);
  tenant.set_cap_mode(FromSchedulerCapMode(config.cap_mode));
  if (config.floor.is_set()) {
    *tenant.mutable_floor() = FromSchedulerLimit(config.floor);
  }
  return tenant;
}

sched::SlotLimit ToSchedulerLimit(const v1::SlotLimit& limit) {
  switch (limit.limit_case()) {
    case v1::SlotLimit::kSlots:
      return sched::SlotLimit::Count(limit.slots());
    case v1::SlotLimit::kShare:
      return sched::SlotLimit::Share(limit.share());
    case v1::SlotLimit::LIMIT_NOT_SET:
      break;
  }
  return sched::SlotLimit();
}

v1::SlotLimit FromSchedulerLimit(const sched::SlotLimit& limit) {
  v1::SlotLimit out;
  if (!limit.is_set()) return out;
  if (limit.is_share()) {
    out.set_share(limit.value());
  } else {
    out.set_slots(static_cast<uint32_t>(limit.value()));
  }
  return out;
}

sched::CapMode ToSchedulerCapMode(v1::CapMode mode) {
  return mode == v1::CAP_MODE_HARD ? sched::CapMode::kHard
                                   : sched::CapMode::kWorkConserving;
}

v1::CapMode FromSchedulerCapMode(sched::CapMode mode) {
  return mode == sched::CapMode::kHard ? v1::CAP_MODE_HARD
                                       : v1::CAP_MODE_WORK_CONSERVING;
}

}  // namespace fairq::config
