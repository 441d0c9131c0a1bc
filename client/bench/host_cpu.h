// The whole machine's CPU time, from /proc/stat (Linux), so that a result
// says whether the machine was disturbed while it was measured. "Steal" is
// time the hypervisor gave this VM's vCPUs to other guests: a benchmark
// feels it as stalls no change to fairqd can remove (docs/benchmarks.md).
//
// Pure functions apart from ReadHostCpu; safe from any thread.
#ifndef FAIRQ_CLIENT_BENCH_HOST_CPU_H_
#define FAIRQ_CLIENT_BENCH_HOST_CPU_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace fairq::bench {

// A run or a second is quiet when the hypervisor took less than this share
// of the machine's CPU time in it, in percent: the latency target was met
// in most such runs and in none with more (docs/benchmarks.md,
// twenty-fourth round).
inline constexpr double kQuietStealPct = 0.25;

// Clock ticks summed over every CPU since boot.
struct CpuTimes {
  uint64_t busy = 0;   // user, nice, system, irq, softirq
  uint64_t steal = 0;  // taken by the hypervisor
  uint64_t total = 0;  // busy + steal + idle + iowait
};

// Shares of the time between two reads, in percent of `total`.
struct CpuShare {
  double busy_pct = 0;
  double steal_pct = 0;
};

// Parses /proc/stat's first line, "cpu  user nice system idle iowait irq
// softirq steal ..."; nullopt if the line is not of that shape.
std::optional<CpuTimes> ParseCpuLine(std::string_view line);

// The machine's times now; nullopt where /proc/stat cannot be read.
std::optional<CpuTimes> ReadHostCpu();

// nullopt if no tick passed between the two reads.
std::optional<CpuShare> ShareBetween(const CpuTimes& before,
                                     const CpuTimes& after);

// True if ticks passed between the two reads and under kQuietStealPct of
// them were stolen.
bool QuietBetween(const CpuTimes& before, const CpuTimes& after);

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_HOST_CPU_H_
