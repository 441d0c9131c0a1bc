// Summaries of latency samples: count, mean, p50, p99, max.
//
// Pure functions; safe from any thread. Percentiles use the nearest-rank
// method (the smallest sample with at least p% of samples at or below it),
// so every reported figure is a value that was actually measured.
#ifndef FAIRQ_CLIENT_BENCH_STATS_H_
#define FAIRQ_CLIENT_BENCH_STATS_H_

#include <cstddef>
#include <vector>

namespace fairq::bench {

struct Summary {
  size_t count = 0;
  double mean = 0;
  double p50 = 0;
  double p99 = 0;
  double max = 0;
};

// All zero when `samples` is empty. Samples keep their unit.
Summary Summarize(std::vector<double> samples);

// REQUIRES: `sorted` is non-empty and ascending; 0 < p <= 100.
double Percentile(const std::vector<double>& sorted, double p);

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_STATS_H_
