#include "sim/workload.h"

#include <algorithm>
#include <random>

namespace fairq::sim {
namespace {

// splitmix64: gives each arrival its own well-mixed seed, so editing one
// arrival's jitter leaves every other arrival's costs unchanged.
uint64_t MixSeed(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + (stream + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double ArrivalTime(const ArrivalSpec& arrival, uint64_t k) {
  // from + k / rate, not a running sum, so long streams do not drift.
  return arrival.steady ? arrival.from + static_cast<double>(k) / arrival.rate
                        : arrival.at;
}

void Expand(const ArrivalSpec& arrival, uint64_t seed, size_t stream,
            std::vector<SimJob>* jobs) {
  std::mt19937_64 engine(MixSeed(seed, stream));
  uint64_t count = arrival.JobCount();
  for (uint64_t k = 0; k < count; ++k) {
    double cost = arrival.cost;
    if (arrival.cost_jitter > 0) {
      double u = (2 * UnitInterval(engine()) - 1) * arrival.cost_jitter;
      cost = std::max(0.0, arrival.cost * (1 + u));
    }
    jobs->push_back({ArrivalTime(arrival, k),
                     static_cast<uint32_t>(arrival.tenant),
                     static_cast<uint32_t>(arrival.pool), arrival.priority,
                     cost, arrival.declared_cost});
  }
}

}  // namespace

double UnitInterval(uint64_t bits) {
  // The top 53 bits fill a double's mantissa exactly.
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

std::vector<SimJob> ExpandArrivals(const Scenario& scenario) {
  std::vector<SimJob> jobs;
  jobs.reserve(scenario.TotalJobs());
  for (size_t i = 0; i < scenario.arrivals.size(); ++i) {
    Expand(scenario.arrivals[i], scenario.seed, i, &jobs);
  }
  std::stable_sort(
      jobs.begin(), jobs.end(),
      [](const SimJob& a, const SimJob& b) { return a.arrival < b.arrival; });
  return jobs;
}

}  // namespace fairq::sim
