#include "sched/scheduler.h"

#include <cmath>
#include <string>
#include <utility>

#include "base/format_number.h"
#include "sched/pool.h"

namespace fairq::sched {
namespace {

// NaN fails the comparison, so it is refused too.
Status CheckSeconds(double value, std::string_view field) {
  if (value >= 0 && value <= kMaxSeconds) return Status::Ok();
  return InvalidArgument(std::string(field) + ": must be between 0 and " +
                         FormatNumber(kMaxSeconds) + " seconds, got " +
                         FormatNumber(value));
}

// A point in time only needs to be a usable number: callers pass Unix
// seconds (1.7e9 today), far past the bound on durations.
Status CheckTime(double value, std::string_view field) {
  if (std::isfinite(value) && value >= 0) return Status::Ok();
  return InvalidArgument(std::string(field) +
                         ": must be a finite time >= 0, got " +
                         FormatNumber(value));
}

}  // namespace

StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(
    SchedulerOptions options) {
  FAIRQ_RETURN_IF_ERROR(Validate(options));
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(options)));
}

Scheduler::Scheduler(SchedulerOptions options) : options_(std::move(options)) {}

Scheduler::~Scheduler() = default;

Status Scheduler::CheckTenant(TenantId tenant) const {
  if (tenant < tenants_.size()) return Status::Ok();
  return NotFound("tenant: no tenant with id " + std::to_string(tenant));
}

Status Scheduler::CheckPool(PoolId pool) const {
  if (pool < pools_.size()) return Status::Ok();
  return NotFound("pool: no pool with id " + std::to_string(pool));
}

StatusOr<PoolId> Scheduler::AddPool(std::string_view name) {
  if (name.empty()) return InvalidArgument("pool: name must not be empty");
  std::string key(name);
  if (pool_ids_.count(key)) {
    return AlreadyExists("pool: \"" + key + "\" exists already");
  }
  auto id = static_cast<PoolId>(pools_.size());
  pools_.push_back(
      std::make_unique<Pool>(key, options_, org_weights_, settings_));
  pool_ids_.emplace(std::move(key), id);
  return id;
}

const std::vector<TenantId>& Scheduler::TenantsIn(PoolId pool) const {
  return pools_[pool]->tenants();
}

double Scheduler::FloorDemand(PoolId pool) const {
  return pools_[pool]->floor_demand();
}

StatusOr<PoolId> Scheduler::FindPool(std::string_view name) const {
  auto it = pool_ids_.find(std::string(name));
  if (it == pool_ids_.end()) {
    return NotFound("pool: unknown pool \"" + std::string(name) + "\"");
  }
  return it->second;
}

Status Scheduler::SetCapacity(PoolId pool, uint32_t slots) {
  FAIRQ_RETURN_IF_ERROR(CheckPool(pool));
  pools_[pool]->SetCapacity(slots);
  return Status::Ok();
}

StatusOr<OrgId> Scheduler::SetOrg(const OrgConfig& config) {
  FAIRQ_RETURN_IF_ERROR(Validate(config));
  auto it = org_ids_.find(config.name);
  if (it != org_ids_.end()) {
    org_weights_[it->second] = config.weight;
    for (auto& pool : pools_) pool->OrgWeightChanged(it->second);
    return it->second;
  }
  auto id = static_cast<OrgId>(org_weights_.size());
  org_weights_.push_back(config.weight);
  org_ids_.emplace(config.name, id);
  return id;
}

// A tenant without an organisation gets one of its own, unnamed so no other
// tenant can join it, weighted like the tenant.
StatusOr<OrgId> Scheduler::ResolveOrg(const TenantConfig& config,
                                      std::optional<OrgId> own_org_id) {
  if (!config.org.empty()) {
    auto it = org_ids_.find(config.org);
    if (it != org_ids_.end()) return it->second;
    return SetOrg(OrgConfig{config.org, 1.0});
  }
  if (own_org_id) {
    org_weights_[*own_org_id] = config.weight;
    return *own_org_id;
  }
  auto id = static_cast<OrgId>(org_weights_.size());
  org_weights_.push_back(config.weight);
  return id;
}

StatusOr<TenantId> Scheduler::AddTenant(const TenantConfig& config) {
  FAIRQ_RETURN_IF_ERROR(Validate(config));
  if (tenant_ids_.count(config.name)) {
    return AlreadyExists("tenant: \"" + config.name + "\" exists already");
  }
  StatusOr<OrgId> org = ResolveOrg(config, std::nullopt);
  if (!org.ok()) return org.status();
  auto id = static_cast<TenantId>(tenants_.size());
  bool own = config.org.empty();
  tenants_.push_back(Tenant{config, *org, false,
                            own ? std::optional<OrgId>(*org) : std::nullopt});
  tenant_ids_.emplace(config.name, id);
  PushSettings(id);
  return id;
}

Status Scheduler::UpdateTenant(TenantId tenant, const TenantConfig& config) {
  FAIRQ_RETURN_IF_ERROR(CheckTenant(tenant));
  Tenant& current = tenants_[tenant];
  TenantConfig next = config;
  if (next.name.empty()) next.name = current.config.name;
  if (next.name != current.config.name) {
    return InvalidArgument("name: a tenant cannot be renamed (\"" +
                           current.config.name + "\" to \"" + next.name +
                           "\")");
  }
  FAIRQ_RETURN_IF_ERROR(Validate(next));
  if (next.org.empty() || next.org != current.config.org) {
    StatusOr<OrgId> org = ResolveOrg(next, current.own_org_id);
    if (!org.ok()) return org.status();
    current.org = *org;
    if (next.org.empty()) current.own_org_id = *org;
  }
  current.config = std::move(next);
  PushSettings(tenant);
  return Status::Ok();
}

StatusOr<TenantId> Scheduler::FindTenant(std::string_view name) const {
  auto it = tenant_ids_.find(std::string(name));
  if (it == tenant_ids_.end()) {
    return NotFound("tenant: unknown tenant \"" + std::string(name) + "\"");
  }
  return it->second;
}

StatusOr<TenantConfig> Scheduler::GetTenant(TenantId tenant) const {
  FAIRQ_RETURN_IF_ERROR(CheckTenant(tenant));
  return tenants_[tenant].config;
}

Status Scheduler::SetPaused(TenantId tenant, bool paused) {
  FAIRQ_RETURN_IF_ERROR(CheckTenant(tenant));
  tenants_[tenant].paused = paused;
  PushSettings(tenant);
  return Status::Ok();
}

void Scheduler::PushSettings(TenantId tenant) {
  const Tenant& t = tenants_[tenant];
  if (tenant >= settings_.size()) settings_.resize(tenant + 1);
  settings_[tenant] = {t.org,        t.config.org.empty(), t.config.weight,
                       t.config.cap, t.config.cap_mode,    t.config.floor,
                       t.paused};
  for (auto& pool : pools_) pool->SettingsChanged(tenant);
}

Status Scheduler::Enqueue(const JobSpec& job, double now) {
  FAIRQ_RETURN_IF_ERROR(CheckTenant(job.tenant));
  FAIRQ_RETURN_IF_ERROR(CheckPool(job.pool));
  if (job.cost) FAIRQ_RETURN_IF_ERROR(CheckSeconds(*job.cost, "cost"));
  FAIRQ_RETURN_IF_ERROR(CheckTime(now, "now"));
  if (running_.count(job.id)) {
    return AlreadyExists("job: " + std::to_string(job.id) + " is running");
  }
  pools_[job.pool]->Enqueue(job.tenant, job.priority, job.id, job.cost, now);
  return Status::Ok();
}

StatusOr<std::optional<Dispatch>> Scheduler::LeaseNextJob(PoolId pool) {
  FAIRQ_RETURN_IF_ERROR(CheckPool(pool));
  std::optional<Pool::Leased> leased = pools_[pool]->LeaseNext();
  if (!leased) return std::optional<Dispatch>();
  const Dispatch& dispatch = leased->dispatch;
  bool inserted =
      running_
          .emplace(dispatch.job,
                   RunningJob{dispatch.tenant, pool, leased->priority,
                              leased->declared_cost, dispatch.charged_cost})
          .second;
  if (!inserted) {
    // The id was queued twice (a caller broke Enqueue's REQUIRES). Undo
    // this lease so the tenant does not lose a slot for good.
    pools_[pool]->EndAttempt(dispatch.tenant, dispatch.charged_cost, 0, false,
                             std::nullopt);
    return Internal("job: " + std::to_string(dispatch.job) +
                    " was queued while already running; dropped the copy");
  }
  return std::optional<Dispatch>(dispatch);
}

StatusOr<Scheduler::RunningJob> Scheduler::EndAttempt(JobId job,
                                                      double runtime,
                                                      bool succeeded) {
  FAIRQ_RETURN_IF_ERROR(CheckSeconds(runtime, "runtime"));
  auto it = running_.find(job);
  if (it == running_.end()) {
    return NotFound("job: " + std::to_string(job) + " is not running");
  }
  RunningJob running = it->second;
  running_.erase(it);
  pools_[running.pool]->EndAttempt(running.tenant, running.charged, runtime,
                                   succeeded, running.declared_cost);
  return running;
}

Status Scheduler::Complete(JobId job, double runtime) {
  return EndAttempt(job, runtime, true).status();
}

Status Scheduler::Fail(JobId job, double runtime) {
  return EndAttempt(job, runtime, false).status();
}

Status Scheduler::Requeue(JobId job, double runtime, double now) {
  FAIRQ_RETURN_IF_ERROR(CheckTime(now, "now"));
  StatusOr<RunningJob> ended = EndAttempt(job, runtime, false);
  if (!ended.ok()) return ended.status();
  pools_[ended->pool]->Enqueue(ended->tenant, ended->priority, job,
                               ended->declared_cost, now);
  return Status::Ok();
}

Status Scheduler::Cancel(TenantId tenant, PoolId pool, JobId job) {
  FAIRQ_RETURN_IF_ERROR(CheckTenant(tenant));
  FAIRQ_RETURN_IF_ERROR(CheckPool(pool));
  if (pools_[pool]->Cancel(tenant, job)) return Status::Ok();
  return NotFound("job: " + std::to_string(job) + " is not queued for tenant " +
                  tenants_[tenant].config.name + " in pool " +
                  pools_[pool]->name());
}

StatusOr<std::vector<JobId>> Scheduler::Purge(TenantId tenant, PoolId pool) {
  FAIRQ_RETURN_IF_ERROR(CheckTenant(tenant));
  FAIRQ_RETURN_IF_ERROR(CheckPool(pool));
  return pools_[pool]->Purge(tenant);
}

Status Scheduler::AdoptRunning(const JobSpec& job) {
  FAIRQ_RETURN_IF_ERROR(CheckTenant(job.tenant));
  FAIRQ_RETURN_IF_ERROR(CheckPool(job.pool));
  if (job.cost) FAIRQ_RETURN_IF_ERROR(CheckSeconds(*job.cost, "cost"));
  if (running_.count(job.id)) {
    return AlreadyExists("job: " + std::to_string(job.id) + " is running");
  }
  Pool& pool = *pools_[job.pool];
  double cost = job.cost.value_or(pool.Stats(job.tenant).estimate);
  pool.AdoptRunning(job.tenant, cost);
  running_.emplace(job.id, RunningJob{job.tenant, job.pool, job.priority,
                                      job.cost, cost});
  return Status::Ok();
}

StatusOr<bool> Scheduler::OverShare(TenantId tenant, PoolId pool) const {
  FAIRQ_RETURN_IF_ERROR(CheckTenant(tenant));
  FAIRQ_RETURN_IF_ERROR(CheckPool(pool));
  return pools_[pool]->OverShare(tenant);
}

StatusOr<TenantPoolStats> Scheduler::Stats(TenantId tenant,
                                           PoolId pool) const {
  FAIRQ_RETURN_IF_ERROR(CheckTenant(tenant));
  FAIRQ_RETURN_IF_ERROR(CheckPool(pool));
  return pools_[pool]->Stats(tenant);
}

}  // namespace fairq::sched
