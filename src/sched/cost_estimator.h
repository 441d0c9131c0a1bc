// CostEstimator: the learned cost of one tenant's jobs in one pool, an
// exponentially weighted moving average of measured runtimes.
//
// Plain value; owned by the thread that owns the Scheduler.
#ifndef FAIRQ_SCHED_COST_ESTIMATOR_H_
#define FAIRQ_SCHED_COST_ESTIMATOR_H_

#include <cstdint>

namespace fairq::sched {

class CostEstimator {
 public:
  // REQUIRES: runtime >= 0 and finite; alpha in (0, 1].
  void Observe(double runtime, double alpha) {
    mean_ = samples_ == 0 ? runtime : mean_ + alpha * (runtime - mean_);
    ++samples_;
  }
  // The learned mean, or `fallback` before the first measurement.
  double Estimate(double fallback) const {
    return samples_ == 0 ? fallback : mean_;
  }

 private:
  double mean_ = 0;
  uint64_t samples_ = 0;
};

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_COST_ESTIMATOR_H_
