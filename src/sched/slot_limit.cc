#include "sched/slot_limit.h"

#include <charconv>
#include <cmath>
#include <string>

#include "base/format_number.h"

namespace fairq::sched {
namespace {

// Share arithmetic meets values such as 0.5 * 8; the slack keeps a share that
// lands on a whole slot from rounding the wrong way.
constexpr double kSlack = 1e-9;

StatusOr<double> ParseNumber(std::string_view text, std::string_view field) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(),
                                   value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgument(std::string(field) + ": expected a slot count like 4 "
                           "or a share like \"50%\", got \"" +
                           std::string(text) + "\"");
  }
  return value;
}

}  // namespace

StatusOr<SlotLimit> SlotLimit::Parse(std::string_view text,
                                     std::string_view field) {
  bool percent = !text.empty() && text.back() == '%';
  if (percent) text.remove_suffix(1);
  StatusOr<double> number = ParseNumber(text, field);
  if (!number.ok()) return number.status();
  SlotLimit limit;
  if (percent) {
    limit = Share(*number / 100.0);
  } else if (*number >= 0 && *number == std::floor(*number) &&
             *number < static_cast<double>(kUnlimited)) {
    limit = Count(static_cast<uint32_t>(*number));
  } else {
    return InvalidArgument(std::string(field) +
                           ": a slot count must be a whole number, got " +
                           std::string(text));
  }
  Status status = limit.Validate(field);
  if (!status.ok()) return status;
  return limit;
}

Status SlotLimit::Validate(std::string_view field) const {
  if (kind_ == kShare && !(value_ > 0 && value_ <= 1)) {
    return InvalidArgument(std::string(field) +
                           ": a share must lie in (0%, 100%], got " +
                           ToString());
  }
  if (kind_ == kCount && value_ < 1) {
    return InvalidArgument(std::string(field) +
                           ": a slot count must be at least 1, got " +
                           ToString());
  }
  return Status::Ok();
}

uint32_t SlotLimit::CapSlots(uint32_t capacity) const {
  switch (kind_) {
    case kNone:
      return kUnlimited;
    case kCount:
      return static_cast<uint32_t>(value_);
    case kShare: {
      double slots = std::floor(value_ * capacity + kSlack);
      return std::max<uint32_t>(1, static_cast<uint32_t>(slots));
    }
  }
  return kUnlimited;
}

uint32_t SlotLimit::FloorSlots(uint32_t capacity) const {
  return static_cast<uint32_t>(std::ceil(ExactSlots(capacity) - kSlack));
}

uint32_t SlotLimit::WholeFloorSlots(uint32_t capacity) const {
  return static_cast<uint32_t>(std::floor(ExactSlots(capacity) + kSlack));
}

double SlotLimit::ExactSlots(uint32_t capacity) const {
  switch (kind_) {
    case kNone:
      return 0;
    case kCount:
      return value_;
    case kShare:
      return value_ * capacity;
  }
  return 0;
}

std::string SlotLimit::ToString() const {
  switch (kind_) {
    case kNone:
      return "none";
    case kCount:
      return std::to_string(static_cast<uint64_t>(value_));
    case kShare:
      return FormatNumber(value_ * 100) + "%";
  }
  return "none";
}

}  // namespace fairq::sched
