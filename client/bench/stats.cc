#include "bench/stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace fairq::bench {

double Percentile(const std::vector<double>& sorted, double p) {
  assert(!sorted.empty() && p > 0 && p <= 100);
  // Nearest rank: ceil(p/100 * n), 1-based.
  auto rank = static_cast<size_t>(
      std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

Summary Summarize(std::vector<double> samples) {
  Summary summary;
  if (samples.empty()) return summary;
  std::sort(samples.begin(), samples.end());
  summary.count = samples.size();
  summary.mean = std::accumulate(samples.begin(), samples.end(), 0.0) /
                 static_cast<double>(samples.size());
  summary.p50 = Percentile(samples, 50);
  summary.p99 = Percentile(samples, 99);
  summary.max = samples.back();
  return summary;
}

}  // namespace fairq::bench
