#include "sched/drr_selector.h"

#include <algorithm>

namespace fairq::sched {

DrrSelector::Standing DrrSelector::Classify(TenantId tenant) const {
  const PoolTenant& state = tenants_[tenant];
  if (!state.HasWork()) return Standing::kIdle;
  if (state.BelowWholeFloor()) return Standing::kBelowWholeFloor;
  if (state.BelowFloor()) return Standing::kBelowFloor;
  if (!state.AtCap()) return Standing::kShare;
  return state.settings.cap_mode == CapMode::kHard ? Standing::kHeld
                                                   : Standing::kBorrow;
}

std::optional<DrrSelector::Level> DrrSelector::LevelOf(Standing standing) {
  if (standing == Standing::kShare || standing == Standing::kBelowFloor) {
    return kShareLevel;
  }
  if (standing == Standing::kBorrow) return kBorrowLevel;
  return std::nullopt;
}

DrrSelector::OrgNode& DrrSelector::Org(OrgId org) {
  if (org >= org_nodes_.size()) org_nodes_.resize(org + 1);
  return org_nodes_[org];
}

void DrrSelector::Refile(TenantId tenant) {
  if (tenant >= tenant_nodes_.size()) tenant_nodes_.resize(tenant + 1);
  TenantNode& node = tenant_nodes_[tenant];
  Standing standing = Classify(tenant);
  if (standing == node.standing) return;
  Unlink(tenant);
  if (standing == Standing::kIdle) {
    BecomeIdle(tenant);
    return;
  }
  if (node.standing == Standing::kIdle) {
    node.org = tenants_[tenant].settings.org;
    OrgNode& org = Org(node.org);
    ++org.active;
    org.deficit += node.carried_debt;
    node.carried_debt = 0;
  }
  node.standing = standing;
  Link(tenant);
}

// A tenant alone in its organisation owns the organisation's debt (its own
// tenant-level debt is repaid at once by the round skipping of a one-member
// ring), so the debt moves with it: when it is the only active member, or,
// idle, when the organisation is its own (an idle named organisation's debt
// is its members', and stays).
void DrrSelector::Detach(TenantId tenant) {
  if (tenant >= tenant_nodes_.size()) return;
  TenantNode& node = tenant_nodes_[tenant];
  const TenantSettings& leaving = tenants_[tenant].settings;
  const bool idle = node.standing == Standing::kIdle;
  OrgNode& org = Org(idle ? leaving.org : node.org);
  if ((idle ? leaving.own_org : org.active == 1) && org.deficit < 0) {
    node.carried_debt += org.deficit;
    org.deficit = 0;
  }
  Unlink(tenant);
  BecomeIdle(tenant);
}

// Leaving the ring forfeits banked credit, so idling cannot save up for a
// burst. Debt is kept: a tenant that under-declared cost still repays it.
void DrrSelector::BecomeIdle(TenantId tenant) {
  TenantNode& node = tenant_nodes_[tenant];
  if (node.standing == Standing::kIdle) return;
  node.standing = Standing::kIdle;
  node.deficit = std::min(node.deficit, 0.0);
  OrgNode& org = Org(node.org);
  if (--org.active == 0) org.deficit = std::min(org.deficit, 0.0);
}

void DrrSelector::Link(TenantId tenant) {
  TenantNode& node = tenant_nodes_[tenant];
  TenantAccess tenant_access{*this};
  if (node.standing == Standing::kBelowWholeFloor) {
    whole_floor_ring_.Insert(tenant_access, tenant);
    return;
  }
  if (node.standing == Standing::kBelowFloor) {
    RoundUpAccess round_up_access{*this};
    round_up_ring_.Insert(round_up_access, tenant);
  }
  std::optional<Level> level = LevelOf(node.standing);
  if (!level) return;
  OrgNode& org = Org(node.org);
  if (org.tenants[*level].empty()) {
    OrgAccess org_access{*this, *level};
    org_rings_[*level].Insert(org_access, node.org);
  }
  org.tenants[*level].Insert(tenant_access, tenant);
}

void DrrSelector::Unlink(TenantId tenant) {
  TenantNode& node = tenant_nodes_[tenant];
  TenantAccess tenant_access{*this};
  if (node.standing == Standing::kBelowWholeFloor) {
    whole_floor_ring_.Erase(tenant_access, tenant);
    return;
  }
  if (node.standing == Standing::kBelowFloor) {
    RoundUpAccess round_up_access{*this};
    round_up_ring_.Erase(round_up_access, tenant);
  }
  std::optional<Level> level = LevelOf(node.standing);
  if (!level) return;
  OrgNode& org = Org(node.org);
  org.tenants[*level].Erase(tenant_access, tenant);
  if (org.tenants[*level].empty()) {
    OrgAccess org_access{*this, *level};
    org_rings_[*level].Erase(org_access, node.org);
  }
}

// Floors rounded down go first. The slots floors round up to go next,
// unless the floors already hold all their budget lets them while a tenant
// waits on DRR (FloorBudget); then those tenants compete in DRR like the
// rest.
std::optional<TenantId> DrrSelector::Pick() {
  TenantAccess tenant_access{*this};
  if (!whole_floor_ring_.empty()) {
    return whole_floor_ring_.NextInTurn(tenant_access);
  }
  if (!round_up_ring_.empty() && floors_.Open()) return PickRoundUp();
  if (std::optional<TenantId> tenant = PickAt(kShareLevel)) return tenant;
  return PickAt(kBorrowLevel);
}

// The member that won a round-up pick least recently, found by a walk of the
// ring (its members: the tenants between their floor rounded down and up,
// few). Taking turns by ring order alone is not fair here: when every job
// ends at once, all members leave the ring and rejoin in the same order,
// and the first took the extra slot every time (3, 2, 2 of 8 slots for
// three 30% floors, for good).
TenantId DrrSelector::PickRoundUp() {
  RoundUpAccess access{*this};
  TenantId best = round_up_ring_.NextInTurn(access);
  for (uint32_t i = 1; i < round_up_ring_.size(); ++i) {
    TenantId next = round_up_ring_.NextInTurn(access);
    if (tenant_nodes_[next].rounded_up_at < tenant_nodes_[best].rounded_up_at) {
      best = next;
    }
  }
  tenant_nodes_[best].rounded_up_at = ++round_up_picks_;
  return best;
}

std::optional<TenantId> DrrSelector::PickAt(Level level) {
  if (org_rings_[level].empty()) return std::nullopt;
  OrgAccess org_access{*this, level};
  OrgId org = org_rings_[level].NextWithCredit(org_access);
  TenantAccess tenant_access{*this};
  return org_nodes_[org].tenants[level].NextWithCredit(tenant_access);
}

void DrrSelector::Charge(TenantId tenant, double worker_seconds) {
  if (tenant >= tenant_nodes_.size()) tenant_nodes_.resize(tenant + 1);
  TenantNode& node = tenant_nodes_[tenant];
  bool idle = node.standing == Standing::kIdle;
  OrgId org_id = idle ? tenants_[tenant].settings.org : node.org;
  OrgNode& org = Org(org_id);
  // A refund can lift credit no higher than the ceiling, and no higher than
  // zero for whoever is idle (idle parties bank nothing).
  node.deficit = std::min(
      node.deficit - worker_seconds,
      idle ? 0.0 : CreditLimit(node.deficit, worker_seconds,
                               options_.quantum * Weight(tenant),
                               TenantCeiling(tenant)));
  org.deficit = std::min(
      org.deficit - worker_seconds,
      org.active == 0 ? 0.0
                      : CreditLimit(org.deficit, worker_seconds,
                                    options_.quantum * org_weights_[org_id],
                                    OrgCeiling(org_id)));
}

// A refund (a job ran shorter than it was charged) repays debt but leaves at
// most one turn's grant of credit, or what was there before. Banking more
// would let a tenant whose jobs were overestimated (the default cost before
// any runtime is known) take hundreds of short jobs in a row once the refunds
// come in, while newly arriving tenants wait.
double DrrSelector::CreditLimit(double before, double worker_seconds,
                                double grant, double ceiling) {
  if (worker_seconds >= 0) return ceiling;
  return std::min(ceiling, std::max(before, grant));
}

double DrrSelector::Deficit(TenantId tenant) const {
  return tenant < tenant_nodes_.size() ? tenant_nodes_[tenant].deficit : 0;
}

double DrrSelector::TenantCeiling(TenantId tenant) const {
  return options_.max_deficit * Weight(tenant);
}

double DrrSelector::OrgCeiling(OrgId org) const {
  return options_.max_deficit * org_weights_[org];
}

}  // namespace fairq::sched
