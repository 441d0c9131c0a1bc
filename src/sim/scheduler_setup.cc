#include "sim/scheduler_setup.h"

#include <string>
#include <utility>

#include "yaml/yaml_fields.h"

namespace fairq::sim {
namespace {

Status Refused(const Scenario& scenario, int line, const std::string& field,
               const Status& status) {
  return yaml::ErrorAt(scenario.source, line, field, status.message());
}

std::string Indexed(const char* list, size_t index) {
  return std::string(list) + "[" + std::to_string(index) + "]";
}

Status AddPools(const Scenario& scenario, SimScheduler* sim) {
  for (size_t i = 0; i < scenario.pools.size(); ++i) {
    const PoolSpec& pool = scenario.pools[i];
    StatusOr<sched::PoolId> id = sim->scheduler->AddPool(pool.name);
    Status status =
        id.ok() ? sim->scheduler->SetCapacity(*id, pool.workers) : id.status();
    if (!status.ok()) {
      return Refused(scenario, pool.line, "pools." + pool.name, status);
    }
    sim->pools.push_back(*id);
  }
  return Status::Ok();
}

Status AddTenants(const Scenario& scenario, SimScheduler* sim) {
  for (size_t i = 0; i < scenario.orgs.size(); ++i) {
    StatusOr<sched::OrgId> id = sim->scheduler->SetOrg(scenario.orgs[i].config);
    if (!id.ok()) {
      return Refused(scenario, scenario.orgs[i].line, Indexed("orgs", i),
                     id.status());
    }
  }
  for (size_t i = 0; i < scenario.tenants.size(); ++i) {
    const TenantSpec& tenant = scenario.tenants[i];
    StatusOr<sched::TenantId> id = sim->scheduler->AddTenant(tenant.config);
    if (!id.ok()) {
      return Refused(scenario, tenant.line, Indexed("tenants", i), id.status());
    }
    sim->tenants.push_back(*id);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<SimScheduler> BuildScheduler(const Scenario& scenario,
                                      sched::Policy policy) {
  sched::SchedulerOptions options = scenario.options;
  options.policy = policy;
  StatusOr<std::unique_ptr<sched::Scheduler>> scheduler =
      sched::Scheduler::Create(options);
  if (!scheduler.ok()) {
    return Refused(scenario, 0, "options", scheduler.status());
  }
  SimScheduler sim;
  sim.scheduler = std::move(scheduler).value();
  FAIRQ_RETURN_IF_ERROR(AddPools(scenario, &sim));
  FAIRQ_RETURN_IF_ERROR(AddTenants(scenario, &sim));
  return sim;
}

}  // namespace fairq::sim
