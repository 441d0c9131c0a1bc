#include "sched/types.h"

#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "base/format_number.h"

namespace fairq::sched {
namespace {

constexpr std::array<std::pair<Policy, std::string_view>, 5> kPolicyNames{{
    {Policy::kFifo, "fifo"},
    {Policy::kRoundRobin, "rr"},
    {Policy::kHardCap, "hard-cap"},
    {Policy::kWorkConservingCap, "wc-cap"},
    {Policy::kDrr, "drr"},
}};

constexpr std::array<std::pair<CapMode, std::string_view>, 2> kCapModeNames{{
    {CapMode::kWorkConserving, "work-conserving"},
    {CapMode::kHard, "hard"},
}};

// NaN fails both comparisons, so it is refused too.
Status CheckRange(double value, double min, double max,
                  std::string_view field) {
  if (value >= min && value <= max) return Status::Ok();
  return InvalidArgument(std::string(field) + ": must be between " +
                         FormatNumber(min) + " and " + FormatNumber(max) +
                         ", got " + FormatNumber(value));
}

Status CheckWeight(double value, std::string_view field) {
  return CheckRange(value, kMinWeight, kMaxWeight, field);
}

}  // namespace

std::string_view PolicyName(Policy policy) {
  for (const auto& [value, name] : kPolicyNames) {
    if (value == policy) return name;
  }
  return "unknown";
}

StatusOr<Policy> ParsePolicy(std::string_view name) {
  for (const auto& [value, known] : kPolicyNames) {
    if (known == name) return value;
  }
  return InvalidArgument("policy: unknown policy \"" + std::string(name) +
                         "\" (expected fifo, rr, hard-cap, wc-cap or drr)");
}

std::string_view CapModeName(CapMode mode) {
  for (const auto& [value, name] : kCapModeNames) {
    if (value == mode) return name;
  }
  return "unknown";
}

StatusOr<CapMode> ParseCapMode(std::string_view name) {
  for (const auto& [value, known] : kCapModeNames) {
    if (known == name) return value;
  }
  return InvalidArgument("cap_mode: unknown mode \"" + std::string(name) +
                         "\" (expected hard or work-conserving)");
}

Status Validate(const TenantConfig& config) {
  if (config.name.empty()) return InvalidArgument("name: must not be empty");
  FAIRQ_RETURN_IF_ERROR(CheckWeight(config.weight, "weight"));
  FAIRQ_RETURN_IF_ERROR(config.cap.Validate("cap"));
  FAIRQ_RETURN_IF_ERROR(config.floor.Validate("floor"));
  bool comparable = config.cap.is_set() && config.floor.is_set() &&
                    config.cap.is_share() == config.floor.is_share();
  if (comparable && config.floor.value() > config.cap.value()) {
    return InvalidArgument("floor: " + config.floor.ToString() +
                           " exceeds the cap " + config.cap.ToString());
  }
  return Status::Ok();
}

Status Validate(const OrgConfig& config) {
  if (config.name.empty()) return InvalidArgument("name: must not be empty");
  return CheckWeight(config.weight, "weight");
}

Status Validate(const SchedulerOptions& options) {
  FAIRQ_RETURN_IF_ERROR(CheckRange(options.quantum, 1e-6, 1e6, "quantum"));
  FAIRQ_RETURN_IF_ERROR(
      CheckRange(options.max_deficit, 1e-6, kMaxSeconds, "max_deficit"));
  FAIRQ_RETURN_IF_ERROR(
      CheckRange(options.default_cost, 1e-6, kMaxSeconds, "default_cost"));
  if (options.max_deficit < options.quantum) {
    return InvalidArgument("max_deficit: must be at least the quantum (" +
                           FormatNumber(options.quantum) + "), got " +
                           FormatNumber(options.max_deficit));
  }
  if (!(options.min_charge >= 0 && options.min_charge <= options.quantum)) {
    return InvalidArgument("min_charge: must lie in [0, quantum (" +
                           FormatNumber(options.quantum) + ")], got " +
                           FormatNumber(options.min_charge));
  }
  if (!(options.estimate_alpha > 0 && options.estimate_alpha <= 1)) {
    return InvalidArgument("estimate_alpha: must lie in (0, 1], got " +
                           FormatNumber(options.estimate_alpha));
  }
  return Status::Ok();
}

}  // namespace fairq::sched
