#include "bench/host_cpu.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <string>

namespace fairq::bench {
namespace {

// The fields of the "cpu" line this needs, in their order there.
enum Field { kUser, kNice, kSystem, kIdle, kIowait, kIrq, kSoftirq, kSteal };
constexpr int kFields = kSteal + 1;

}  // namespace

std::optional<CpuTimes> ParseCpuLine(std::string_view line) {
  constexpr std::string_view kTag = "cpu ";
  if (line.substr(0, kTag.size()) != kTag) return std::nullopt;
  line.remove_prefix(kTag.size());
  uint64_t value[kFields];
  for (uint64_t& v : value) {
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    auto [end, error] =
        std::from_chars(line.data(), line.data() + line.size(), v);
    if (error != std::errc() || end == line.data()) return std::nullopt;
    line.remove_prefix(static_cast<size_t>(end - line.data()));
  }
  CpuTimes times;
  times.busy = value[kUser] + value[kNice] + value[kSystem] + value[kIrq] +
               value[kSoftirq];
  times.steal = value[kSteal];
  times.total = times.busy + times.steal + value[kIdle] + value[kIowait];
  return times;
}

std::optional<CpuTimes> ReadHostCpu() {
  std::ifstream stat("/proc/stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  return ParseCpuLine(line);
}

std::optional<CpuShare> ShareBetween(const CpuTimes& before,
                                     const CpuTimes& after) {
  if (after.total <= before.total) return std::nullopt;
  auto total = static_cast<double>(after.total - before.total);
  // The kernel's iowait count can go back (proc(5)), so a total that
  // includes it can grow less than its parts: clamp rather than report
  // over 100%.
  auto pct = [total](uint64_t from, uint64_t to) {
    return to <= from
               ? 0.0
               : std::min(100.0, 100 * static_cast<double>(to - from) / total);
  };
  CpuShare share;
  share.busy_pct = pct(before.busy, after.busy);
  share.steal_pct = pct(before.steal, after.steal);
  return share;
}

bool QuietBetween(const CpuTimes& before, const CpuTimes& after) {
  std::optional<CpuShare> share = ShareBetween(before, after);
  return share && share->steal_pct < kQuietStealPct;
}

}  // namespace fairq::bench
