// DrrSelector: fairq's policy. Weighted deficit round robin charged in
// worker-seconds, in two levels (organisations, then the tenants inside
// each), with per-tenant caps and reserved floors.
//
// A tenant with work stands in one place:
//   below its floor rounded down -> the whole-floor ring, served before
//                       anyone else, in turn;
//   under its cap    -> its organisation's share ring (DRR); and, below the
//                       slot its floor rounds up to, the round-up ring too,
//                       served next while the pool's FloorBudget is open,
//                       to whoever had one least recently (otherwise that
//                       slot is won in DRR like any other);
//   at a work-conserving cap -> its organisation's borrow ring, served only
//                       when no share ring has anyone (nobody else waits);
//   at a hard cap    -> held, in no ring, until one of its jobs ends.
// An organisation sits in the top-level share (borrow) ring while any of its
// tenants is in its share (borrow) ring. Every dispatch is charged to both
// the tenant's and the organisation's credit, wherever it was picked.
//
// Not thread-safe; owned by a Pool.
#ifndef FAIRQ_SCHED_DRR_SELECTOR_H_
#define FAIRQ_SCHED_DRR_SELECTOR_H_

#include <array>
#include <optional>
#include <vector>

#include "sched/deficit_ring.h"
#include "sched/floor_budget.h"
#include "sched/selector.h"

namespace fairq::sched {

class DrrSelector : public Selector {
 public:
  DrrSelector(const SchedulerOptions& options,
              const std::vector<PoolTenant>& tenants,
              const std::vector<double>& org_weights, const FloorBudget& floors)
      : options_(options),
        tenants_(tenants),
        org_weights_(org_weights),
        floors_(floors) {}

  void Refile(TenantId tenant) override;
  void Detach(TenantId tenant) override;
  std::optional<TenantId> Pick() override;
  void Charge(TenantId tenant, double worker_seconds) override;
  double Deficit(TenantId tenant) const override;

 private:
  enum class Standing : uint8_t {
    kIdle,
    kBelowWholeFloor,
    kBelowFloor,
    kShare,
    kBorrow,
    kHeld
  };
  enum Level { kShareLevel = 0, kBorrowLevel = 1 };

  struct TenantNode {
    double deficit = 0;
    RingLinks links;  // in the whole-floor ring or one share/borrow ring
    RingLinks round_up_links;  // in the round-up ring
    uint64_t rounded_up_at = 0;  // the round-up pick it last won; 0: none
    Standing standing = Standing::kIdle;
    OrgId org = 0;    // the organisation it joined under while not idle
    // Debt brought from an organisation it left; charged to the next one it
    // joins, so moving between organisations cannot wipe what it owes.
    double carried_debt = 0;
  };
  struct RoundUpAccess {  // NextInTurn only: no credit
    DrrSelector& self;
    RingLinks& Links(uint32_t id) {
      return self.tenant_nodes_[id].round_up_links;
    }
  };
  struct OrgNode {
    double deficit = 0;
    uint32_t active = 0;  // tenants not idle
    std::array<RingLinks, 2> links;
    std::array<DeficitRing, 2> tenants;
  };
  struct TenantAccess {
    DrrSelector& self;
    RingLinks& Links(uint32_t id) { return self.tenant_nodes_[id].links; }
    double& Deficit(uint32_t id) { return self.tenant_nodes_[id].deficit; }
    double Grant(uint32_t id) { return self.options_.quantum * self.Weight(id); }
    double Ceiling(uint32_t id) { return self.TenantCeiling(id); }
  };
  struct OrgAccess {
    DrrSelector& self;
    Level level;
    RingLinks& Links(uint32_t id) { return self.org_nodes_[id].links[level]; }
    double& Deficit(uint32_t id) { return self.org_nodes_[id].deficit; }
    double Grant(uint32_t id) {
      return self.options_.quantum * self.org_weights_[id];
    }
    double Ceiling(uint32_t id) { return self.OrgCeiling(id); }
  };

  Standing Classify(TenantId tenant) const;
  std::optional<TenantId> PickAt(Level level);
  TenantId PickRoundUp();
  static std::optional<Level> LevelOf(Standing standing);
  void Link(TenantId tenant);
  void Unlink(TenantId tenant);
  void BecomeIdle(TenantId tenant);
  OrgNode& Org(OrgId org);
  double Weight(TenantId tenant) const { return tenants_[tenant].settings.weight; }
  double TenantCeiling(TenantId tenant) const;
  static double CreditLimit(double before, double worker_seconds, double grant,
                            double ceiling);
  double OrgCeiling(OrgId org) const;

  const SchedulerOptions& options_;
  const std::vector<PoolTenant>& tenants_;
  const std::vector<double>& org_weights_;
  const FloorBudget& floors_;
  std::vector<TenantNode> tenant_nodes_;
  std::vector<OrgNode> org_nodes_;
  DeficitRing whole_floor_ring_;
  DeficitRing round_up_ring_;
  uint64_t round_up_picks_ = 0;
  std::array<DeficitRing, 2> org_rings_;
};

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_DRR_SELECTOR_H_
