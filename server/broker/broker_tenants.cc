// Tenants and pools: lookup, auto-creation, settings, pause.
#include <algorithm>

#include "absl/strings/string_view.h"
#include "server/broker/broker.h"
#include "server/config/tenant_settings.h"

namespace fairq::server {
namespace {

constexpr char kDefaultPool[] = "default";

// A pool as stored: an empty name is the default pool. (absl's view: this
// absl build's maps look up by it, not by std::string_view.)
absl::string_view PoolName(const std::string& pool) {
  return pool.empty() ? absl::string_view(kDefaultPool)
                      : absl::string_view(pool);
}

}  // namespace

uint32_t Broker::AddPool(const std::string& name) {
  auto id = static_cast<uint32_t>(pools_.size());
  ExpectOk(scheduler_->AddPool(name).status(), "add a pool");
  pools_.push_back(PoolInfo{name});
  pool_ids_.emplace(name, id);
  metrics_.NamePool(id, name);
  pool_has_news_.push_back(false);
  return id;
}

std::optional<sched::PoolId> Broker::FindPool(const std::string& pool) const {
  auto it = pool_ids_.find(PoolName(pool));
  if (it == pool_ids_.end()) return std::nullopt;
  return it->second;
}

Status Broker::CanUsePool(const std::string& pool,
                          std::string_view field) const {
  if (FindPool(pool)) return Status::Ok();
  std::string name(PoolName(pool));
  if (!config_.auto_create_pools) {
    return InvalidArgument(std::string(field) + ": unknown pool \"" + name +
                           "\" (auto_create_pools is off)");
  }
  if (pools_.size() >= config_.max_pools) {
    return ResourceExhausted("max_pools: the broker holds " +
                             std::to_string(pools_.size()) + " pools; pool \"" +
                             name + "\" is not created");
  }
  return Status::Ok();
}

StatusOr<sched::PoolId> Broker::FindOrCreatePool(const std::string& pool,
                                                 Turn& turn,
                                                 std::string_view field) {
  if (std::optional<sched::PoolId> found = FindPool(pool)) return *found;
  FAIRQ_RETURN_IF_ERROR(CanUsePool(pool, field));
  std::string name(PoolName(pool));
  uint32_t id = AddPool(name);
  v1::PoolRecord record;
  record.set_id(id);
  turn.batch.PutPool(name, record);
  return id;
}

StatusOr<sched::TenantId> Broker::FindOrCreateTenant(const std::string& name,
                                                     Turn& turn) {
  auto it = tenant_ids_.find(name);
  if (it != tenant_ids_.end()) return it->second;
  if (!config_.auto_create_tenants) {
    return NotFound("tenant: unknown tenant \"" + name +
                    "\" (auto_create_tenants is off)");
  }
  FAIRQ_RETURN_IF_ERROR(RoomForTenant(name));
  v1::Tenant settings = config_.tenant_defaults.settings;
  settings.set_name(name);
  auto id = static_cast<sched::TenantId>(tenants_.size());
  FAIRQ_RETURN_IF_ERROR(ApplyTenant(id, settings));
  PersistTenant(id, turn);
  return id;
}

Status Broker::ApplyTenant(sched::TenantId id, const v1::Tenant& settings) {
  StatusOr<sched::TenantConfig> converted =
      config::ToSchedulerTenant(settings, "tenant");
  if (!converted.ok()) return converted.status();
  if (id == tenants_.size()) {
    StatusOr<sched::TenantId> added = scheduler_->AddTenant(*converted);
    if (!added.ok()) return added.status();
    tenants_.push_back(TenantInfo{settings, 0});
    tenant_ids_.emplace(settings.name(), id);
    metrics_.NameTenant(id, settings.name());
  } else {
    FAIRQ_RETURN_IF_ERROR(scheduler_->UpdateTenant(id, *converted));
    tenants_[id].config = settings;
  }
  FAIRQ_RETURN_IF_ERROR(scheduler_->SetPaused(id, settings.paused()));
  for (size_t pool = 0; pool < pool_has_news_.size(); ++pool) {
    pool_has_news_[pool] = true;  // a raised cap or a resume frees work
  }
  return Status::Ok();
}

Status Broker::RoomForTenant(const std::string& name) const {
  if (tenants_.size() < config_.max_tenants) return Status::Ok();
  return ResourceExhausted("max_tenants: the broker holds " +
                           std::to_string(tenants_.size()) +
                           " tenants; tenant \"" + name + "\" is not created");
}

void Broker::PersistTenant(sched::TenantId id, Turn& turn) {
  v1::TenantRecord record;
  record.set_id(id);
  *record.mutable_config() = tenants_[id].config;
  turn.batch.PutTenant(record);
}

Status Broker::ApplyOrgs(const std::vector<sched::OrgConfig>& orgs) {
  for (const sched::OrgConfig& org : orgs) {
    FAIRQ_RETURN_IF_ERROR(scheduler_->SetOrg(org).status());
    auto known = std::find_if(orgs_.begin(), orgs_.end(), [&](const auto& o) {
      return o.name == org.name;
    });
    if (known != orgs_.end()) {
      known->weight = org.weight;
    } else {
      orgs_.push_back(org);
    }
  }
  return Status::Ok();
}

// Answered at once, not through the writer: organisations are not stored.
void Broker::HandleSetOrgs(SetOrgsCommand& c) { c.done(ApplyOrgs(c.orgs)); }

void Broker::HandleAddPools(AddPoolsCommand& c, Turn& turn) {
  AddListedPools(c.pools, turn);
  Reply(turn, std::move(c.done), Status::Ok());
}

void Broker::HandleReload(ReloadCommand& c, Turn& turn) {
  HandleSetOrgs(c.parts->orgs);
  HandleAddPools(c.parts->pools, turn);
  for (SetTenantCommand& tenant : c.parts->tenants) {
    HandleSetTenant(tenant, turn);
  }
  Reply(turn, std::move(c.done), Status::Ok());
}

void Broker::AddListedPools(const std::vector<std::string>& names, Turn& turn) {
  for (const std::string& name : names) {
    if (pool_ids_.contains(name)) continue;
    v1::PoolRecord record;
    record.set_id(AddPool(name));
    turn.batch.PutPool(name, record);
  }
}

void Broker::HandleSetTenant(SetTenantCommand& c, Turn& turn) {
  auto it = tenant_ids_.find(c.tenant->name());
  v1::Tenant settings = *c.tenant;
  if (c.mask != nullptr) {
    v1::Tenant current;
    if (it != tenant_ids_.end()) {
      current = tenants_[it->second].config;
    } else {  // as auto-creation makes it
      current = config_.tenant_defaults.settings;
      current.set_name(c.tenant->name());
    }
    settings = config::MergeTenant(current, *c.tenant, *c.mask);
  }
  // "0 on input means 1" (fairq.proto): store and report the weight that
  // applies, so GetTenant never shows the invalid 0.
  if (settings.weight() == 0) settings.set_weight(1);
  sched::TenantId id = it != tenant_ids_.end()
                           ? it->second
                           : static_cast<sched::TenantId>(tenants_.size());
  Status status = Status::Ok();
  if (it != tenant_ids_.end()) {
    settings.set_paused(tenants_[id].config.paused());  // Pause/Resume own it
  } else {
    settings.set_paused(false);
    if (!c.from_config) status = RoomForTenant(settings.name());
  }
  if (status.ok()) status = ApplyTenant(id, settings);
  if (status.ok()) {
    PersistTenant(id, turn);
    *c.response = tenants_[id].config;
  }
  Reply(turn, std::move(c.done), status);
}

void Broker::HandleGetTenant(GetTenantCommand& c, Turn& turn) {
  auto it = tenant_ids_.find(c.name);
  if (it == tenant_ids_.end()) {
    Reply(turn, std::move(c.done),
          NotFound("tenant: unknown tenant \"" + c.name + "\""));
    return;
  }
  *c.response = tenants_[it->second].config;
  Reply(turn, std::move(c.done), Status::Ok());
}

void Broker::HandleListTenants(ListTenantsCommand& c, Turn& turn) {
  std::vector<const v1::Tenant*> sorted;
  for (const TenantInfo& tenant : tenants_) sorted.push_back(&tenant.config);
  std::sort(sorted.begin(), sorted.end(),
            [](const v1::Tenant* a, const v1::Tenant* b) {
              return a->name() < b->name();
            });
  for (const v1::Tenant* tenant : sorted) *c.response->add_tenants() = *tenant;
  Reply(turn, std::move(c.done), Status::Ok());
}

void Broker::HandlePauseTenant(PauseTenantCommand& c, Turn& turn) {
  auto it = tenant_ids_.find(c.name);
  if (it == tenant_ids_.end()) {
    Reply(turn, std::move(c.done),
          NotFound("tenant: unknown tenant \"" + c.name + "\""));
    return;
  }
  v1::Tenant settings = tenants_[it->second].config;
  settings.set_paused(c.paused);
  Status status = ApplyTenant(it->second, settings);
  if (status.ok()) {
    PersistTenant(it->second, turn);
    *c.response = tenants_[it->second].config;
  }
  Reply(turn, std::move(c.done), status);
}

}  // namespace fairq::server
