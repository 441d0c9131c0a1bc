// The broker's state for a metrics scrape (docs/metrics.md).
#include <cmath>
#include <map>

#include "server/broker/broker.h"
#include "server/config/tenant_settings.h"

namespace fairq::server {

void Broker::HandleMetricsSnapshot(MetricsSnapshotCommand& c, int64_t now_ms) {
  c.visit(MetricsState(), now_ms);
  c.done(Status::Ok());
}

// O(tenants + the tenant-pool pairs in use), like GetQueueStats: a scrape
// runs on the dispatcher, so it must not walk every tenant x pool.
metrics::BrokerState Broker::MetricsState() const {
  metrics::BrokerState state;
  // Organisations as the scheduler weighs them: the configured ones, weight
  // 1 for one only named by a tenant, and a tenant without one on its own.
  std::map<std::string, uint32_t> orgs;
  for (const sched::OrgConfig& org : orgs_) {
    orgs.emplace(org.name, static_cast<uint32_t>(state.org_weights.size()));
    state.org_weights.push_back(org.weight);
  }
  for (const TenantInfo& tenant : tenants_) {
    const v1::Tenant& settings = tenant.config;
    double weight = settings.weight() > 0 ? settings.weight() : 1;
    uint32_t org = static_cast<uint32_t>(state.org_weights.size());
    if (settings.org().empty()) {
      state.org_weights.push_back(weight);
    } else if (auto [it, added] = orgs.emplace(settings.org(), org); added) {
      state.org_weights.push_back(1);
    } else {
      org = it->second;
    }
    state.tenants.push_back({weight, org, settings.paused()});
  }
  std::vector<uint32_t> workers = workers_.WorkersPerPool(pools_.size());
  for (uint32_t p = 0; p < pools_.size(); ++p) {
    state.pools.push_back(
        {workers[p], workers_.Capacity(p),
         static_cast<uint32_t>(scheduler_->TenantsIn(p).size()),
         scheduler_->FloorDemand(p)});
  }
  for (auto [t, p] : PairsInUse()) {
    sched::TenantPoolStats stats = *scheduler_->Stats(t, p);
    const Depth& depth = PeekDepth(t, p);
    if (stats.queued + depth.scheduled + depth.leased + depth.dead == 0) {
      continue;
    }
    metrics::TenantPoolState row{t,
                                 p,
                                 stats.queued,
                                 depth.scheduled,
                                 depth.leased,
                                 depth.dead,
                                 std::nullopt,
                                 std::nullopt,
                                 0};
    if (stats.oldest_ready_at) {
      row.oldest_ready_ms = std::llround(*stats.oldest_ready_at * 1000);
    }
    row.cap_slots = stats.cap_slots;
    row.floor_slots = stats.whole_floor_slots;
    state.rows.push_back(row);
  }
  return state;
}

}  // namespace fairq::server
