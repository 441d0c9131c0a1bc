// DescribeEffective: kept apart from the loader so that daemon_config.cc is
// only about reading the file.
#include <filesystem>
#include <string>
#include <system_error>

#include "base/format_number.h"
#include "server/config/daemon_config.h"
#include "server/config/tenant_settings.h"

namespace fairq::config {
namespace {

// Enough to see the shape of a large tenant list without flooding the log.
constexpr size_t kTenantsListed = 10;

std::string OnOff(bool value) { return value ? "on" : "off"; }

// A relative data_dir depends on where fairqd was started: say where.
std::string DataDir(const std::string& dir) {
  std::filesystem::path path(dir);
  if (path.is_absolute()) return dir;
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) return dir;
  return dir + " (" + absolute.lexically_normal().string() + ")";
}

std::string Limit(uint64_t value) {
  return value == 0 ? "unlimited" : std::to_string(value);
}

std::string Quotas(const v1::Quotas& q) {
  return "max_queued " + Limit(q.max_queued()) + ", enqueue_rate " +
         (q.enqueue_rate() == 0 ? "unlimited"
                                : FormatNumber(q.enqueue_rate()) + "/s") +
         ", enqueue_burst " +
         (q.enqueue_burst() == 0 ? "auto" : std::to_string(q.enqueue_burst()));
}

// "weight 2, cap 50% (hard), floor 1": the scheduling settings in the words
// of the config file.
std::string Settings(const v1::Tenant& tenant) {
  sched::SlotLimit cap = ToSchedulerLimit(tenant.cap());
  std::string out =
      "weight " + FormatNumber(tenant.weight() == 0 ? 1.0 : tenant.weight());
  out += ", cap " + cap.ToString();
  if (cap.is_set()) {
    out +=
        std::string(" (") +
        std::string(sched::CapModeName(ToSchedulerCapMode(tenant.cap_mode()))) +
        ")";
  }
  out += ", floor " + ToSchedulerLimit(tenant.floor()).ToString();
  return out;
}

std::string Tenants(const std::vector<v1::Tenant>& tenants) {
  std::string out = "tenants (" + std::to_string(tenants.size()) + "):";
  if (tenants.empty()) return out + " none configured";
  for (size_t i = 0; i < tenants.size() && i < kTenantsListed; ++i) {
    const v1::Tenant& t = tenants[i];
    out += (i == 0 ? " " : "; ") + t.name() + " (";
    if (!t.org().empty()) out += "org " + t.org() + ", ";
    out += Settings(t) + ", " + Quotas(t.quotas()) + ")";
  }
  if (tenants.size() > kTenantsListed) {
    out += "; and " + std::to_string(tenants.size() - kTenantsListed) + " more";
  }
  return out;
}

std::string Orgs(const std::vector<sched::OrgConfig>& orgs) {
  std::string out = "orgs:";
  if (orgs.empty()) return out + " none configured";
  for (size_t i = 0; i < orgs.size(); ++i) {
    out += (i == 0 ? " " : ", ") + orgs[i].name + " (weight " +
           FormatNumber(orgs[i].weight) + ")";
  }
  return out;
}

std::string Pools(const std::vector<std::string>& pools) {
  std::string out = "pools:";
  for (size_t i = 0; i < pools.size(); ++i) {
    out += (i == 0 ? " " : ", ") + pools[i];
  }
  return out;
}

}  // namespace

std::string DescribeEffective(const DaemonConfig& c) {
  const sched::SchedulerOptions& s = c.scheduling;
  const TenantDefaults& d = c.tenant_defaults;
  std::string out;
  out += "config: " + (c.source.empty() ? "built-in defaults" : c.source);
  out += "\nserver: listen " + c.listen + ", metrics " +
         (c.metrics_listen.empty()
              ? std::string("off")
              : c.metrics_listen + " (max_tenant_series " +
                    std::to_string(c.metrics.max_tenant_series) + ")") +
         ", data_dir " + DataDir(c.data_dir) + ", sync " + OnOff(c.sync) +
         (c.effective_sync_interval_us() > 0
              ? " (paced: " + std::to_string(c.effective_sync_interval_us()) +
                    " us)"
              : "");
  out += "\njobs: lease " + std::to_string(c.default_lease_seconds) +
         " s, max_payload " + std::to_string(c.max_payload_bytes) +
         " bytes, max_batch " + std::to_string(c.max_batch) +
         ", idempotency_window " +
         std::to_string(c.idempotency_window_seconds) + " s, repeat_window " +
         std::to_string(c.repeat_window_reports) + " reports";
  out += "\nadmission: command_queue " +
         std::to_string(c.command_queue_capacity) + ", max_queued_total " +
         Limit(c.max_queued_total) + ", auto_create tenants " +
         OnOff(c.auto_create_tenants) + " pools " + OnOff(c.auto_create_pools) +
         ", max_tenants " + std::to_string(c.max_tenants) + ", max_pools " +
         std::to_string(c.max_pools) + ", worker_liveness " +
         std::to_string(c.worker_liveness_seconds) + " s";
  out += "\nscheduling: policy " + std::string(sched::PolicyName(s.policy)) +
         ", quantum " + FormatNumber(s.quantum) + ", max_deficit " +
         FormatNumber(s.max_deficit) + ", default_cost " +
         FormatNumber(s.default_cost) + ", estimate_alpha " +
         FormatNumber(s.estimate_alpha) + ", min_charge " +
         FormatNumber(s.min_charge);
  out += "\ntenant_defaults: " + Settings(d.settings) + ", " +
         Quotas(d.settings.quotas()) + ", max_attempts " +
         std::to_string(d.max_attempts) + ", backoff " +
         FormatNumber(d.initial_backoff_seconds) + ".." +
         FormatNumber(d.max_backoff_seconds) + " s";
  out += "\n" + Pools(c.pools);
  out += "\n" + Orgs(c.orgs);
  out += "\n" + Tenants(c.tenants);
  out += "\nlog: level " + std::string(LogLevelName(c.log.level)) +
         ", format " + std::string(LogFormatName(c.log.format));
  return out;
}

}  // namespace fairq::config
