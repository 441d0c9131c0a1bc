// CostEstimator: the learned cost of one tenant's jobs in one pool, an
// exponentially weighted moving average of measured runtimes.
// DeclaredCostScale: how far the costs a tenant declares are from what its
// jobs measure, to charge declared costs at their measured scale.
//
// Plain values; owned by the thread that owns the Scheduler.
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

// A declared cost is charged at dispatch, and a refund of what the job did
// not use leaves at most one grant of credit (DrrSelector::CreditLimit), so
// a tenant that declares ten times what its jobs take would lose most of
// every refund, for good. Declared costs are therefore charged times the
// ratio of the tenant's mean measured runtime to its mean declared cost:
// a job declared twice as long as another is still charged twice as much,
// and a tenant whose declarations are right is charged them as declared.
class DeclaredCostScale {
 public:
  // REQUIRES: declared > 0, runtime >= 0, both finite; alpha in (0, 1].
  void Observe(double declared, double runtime, double alpha) {
    declared_.Observe(declared, alpha);
    measured_.Observe(runtime, alpha);
  }
  // 1 until a job that declared a cost has succeeded.
  double Scale() const {
    double declared = declared_.Estimate(0);
    return declared > 0 ? measured_.Estimate(0) / declared : 1;
  }

 private:
  CostEstimator declared_;
  CostEstimator measured_;
};

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_COST_ESTIMATOR_H_
