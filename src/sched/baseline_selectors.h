// The baseline policies fairq is measured against: arrival order (with caps
// ignored, hard, or binding only while others wait) and round robin by job
// count. They exist for the simulator's comparisons, so they favour plain
// code over speed: arrival order scans the active tenants on each decision.
//
// Not thread-safe; owned by a Pool.
#ifndef FAIRQ_SCHED_BASELINE_SELECTORS_H_
#define FAIRQ_SCHED_BASELINE_SELECTORS_H_

#include <optional>
#include <vector>

#include "sched/deficit_ring.h"
#include "sched/selector.h"

namespace fairq::sched {

// fifo, hard-cap and wc-cap: the tenant whose next job arrived first.
class ArrivalOrderSelector : public Selector {
 public:
  enum class Caps { kIgnore, kHard, kWhileOthersWait };
  ArrivalOrderSelector(const std::vector<PoolTenant>& tenants, Caps caps)
      : tenants_(tenants), caps_(caps) {}

  void Refile(TenantId tenant) override;
  void Detach(TenantId) override {}
  std::optional<TenantId> Pick() override;
  void Charge(TenantId, double) override {}
  double Deficit(TenantId) const override { return 0; }

 private:
  static constexpr size_t kAbsent = static_cast<size_t>(-1);
  template <class Eligible>
  std::optional<TenantId> Earliest(Eligible eligible) const;

  const std::vector<PoolTenant>& tenants_;
  const Caps caps_;
  std::vector<TenantId> active_;     // tenants with work, any order
  std::vector<size_t> position_;     // index in active_, or kAbsent
};

// rr: one job per tenant with work, in turn; caps and weights ignored.
class RoundRobinSelector : public Selector {
 public:
  explicit RoundRobinSelector(const std::vector<PoolTenant>& tenants)
      : tenants_(tenants) {}

  void Refile(TenantId tenant) override;
  void Detach(TenantId) override {}
  std::optional<TenantId> Pick() override;
  void Charge(TenantId, double) override {}
  double Deficit(TenantId) const override { return 0; }

 private:
  struct Access {
    std::vector<RingLinks>& links;
    RingLinks& Links(uint32_t id) { return links[id]; }
  };

  const std::vector<PoolTenant>& tenants_;
  std::vector<RingLinks> links_;
  DeficitRing ring_;
};

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_BASELINE_SELECTORS_H_
