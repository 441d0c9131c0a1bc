#include "server/config/daemon_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <utility>

#include "server/config/names.h"
#include "server/config/tenant_settings.h"
#include "yaml/yaml_fields.h"

namespace fairq::config {

using yaml::ErrorAt;
using yaml::FieldOf;
using yaml::FieldReader;
using yaml::FormatNumber;
using yaml::LineOf;
using yaml::ProblemOf;

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

constexpr std::array<std::pair<LogLevel, std::string_view>, 5> kLogLevels{{
    {LogLevel::kTrace, "trace"},
    {LogLevel::kDebug, "debug"},
    {LogLevel::kInfo, "info"},
    {LogLevel::kWarn, "warn"},
    {LogLevel::kError, "error"},
}};

constexpr std::array<std::pair<LogFormat, std::string_view>, 2> kLogFormats{{
    {LogFormat::kText, "text"},
    {LogFormat::kJson, "json"},
}};

std::string Quoted(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

// A whole number in [lo, hi] under `key`, or `fallback` when it is absent.
template <typename T>
T IntegerIn(FieldReader& r, std::string_view key, T fallback, int64_t lo,
            int64_t hi) {
  std::optional<int64_t> value = r.OptInteger(key);
  if (!value) return fallback;
  if (*value >= lo && *value <= hi) return static_cast<T>(*value);
  r.Fail(key, (hi == kInt64Max ? "must be >= " + std::to_string(lo)
                               : "must be between " + std::to_string(lo) +
                                     " and " + std::to_string(hi)) +
                  ", got " + std::to_string(*value));
  return fallback;
}

// A section whose keys are all commented out reads as an empty mapping.
YAML::Node SectionNode(const FieldReader& parent, std::string_view key) {
  YAML::Node node = parent.Get(key);
  if (!node.IsDefined() || node.IsNull())
    return YAML::Node(YAML::NodeType::Map);
  return node;
}

// "host:port" with a port in 0..65535 (gRPC's forms, IPv6 in brackets), or
// "unix:/path". Names are not resolved here: that happens at bind time.
bool IsAddress(std::string_view address) {
  if (address.starts_with("unix:")) return address.size() > 5;
  size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5) return false;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
  }
  return std::stoi(std::string(port)) <= 65535;
}

void ReadAddress(FieldReader& r, std::string_view key, bool may_be_empty,
                 std::string* address) {
  std::optional<std::string> text = r.OptString(key);
  if (!text) return;
  if (!(may_be_empty && text->empty()) && !IsAddress(*text)) {
    r.Fail(key, "expected host:port (e.g. 127.0.0.1:7070) or unix:/path, got " +
                    Quoted(*text));
  }
  *address = *text;
}

// Reads the YAML tree into a DaemonConfig; the first problem ends the reading.
class Loader {
 public:
  explicit Loader(std::string source) { config_.source = std::move(source); }

  StatusOr<DaemonConfig> Load(const YAML::Node& root);

 private:
  const std::string& source() const { return config_.source; }

  using ReadItem = Status (Loader::*)(const YAML::Node& item,
                                      const std::string& path);
  // Calls `read(item, path)` for each entry of the list under `key`; an
  // absent or empty key is an empty list.
  Status ForEachItem(FieldReader& parent, std::string_view key, ReadItem read);

  Status ReadServer(FieldReader& top);
  Status ReadLimits(FieldReader& top);
  Status ReadScheduling(FieldReader& top);
  Status ReadTenantDefaults(FieldReader& top);
  void ReadBackoff(FieldReader& r);
  Status ReadTenantSettings(FieldReader& r, v1::Tenant* tenant);
  void ReadSlotLimit(FieldReader& r, std::string_view key, v1::SlotLimit* limit,
                     bool* present);
  Status ReadQuotas(FieldReader& r, v1::Quotas* quotas);
  Status ReadPool(const YAML::Node& node, const std::string& path);
  Status ReadOrg(const YAML::Node& node, const std::string& path);
  Status ReadTenant(const YAML::Node& node, const std::string& path);
  Status ReadMetrics(FieldReader& top);
  Status ReadLog(FieldReader& top);
  // A shared validator's "path.key...: problem", placed at key's line.
  Status AtLine(const FieldReader& r, const Status& status) const;

  DaemonConfig config_;
  std::vector<int> pool_lines_;
  std::vector<int> org_lines_;
  std::vector<int> tenant_lines_;
};

StatusOr<DaemonConfig> Loader::Load(const YAML::Node& root) {
  FieldReader top(source(),
                  root.IsNull() ? YAML::Node(YAML::NodeType::Map) : root, "",
                  {"listen",
                   "metrics_listen",
                   "data_dir",
                   "sync",
                   "sync_min_interval_us",
                   "default_lease_seconds",
                   "max_payload_bytes",
                   "max_batch",
                   "auto_create_tenants",
                   "auto_create_pools",
                   "max_tenants",
                   "max_pools",
                   "worker_liveness_seconds",
                   "command_queue_capacity",
                   "idempotency_window_seconds",
                   "repeat_window_reports",
                   "max_queued_total",
                   "scheduling",
                   "tenant_defaults",
                   "pools",
                   "orgs",
                   "tenants",
                   "metrics",
                   "log"});
  config_.pools.clear();
  FAIRQ_RETURN_IF_ERROR(ReadServer(top));
  FAIRQ_RETURN_IF_ERROR(ReadLimits(top));
  FAIRQ_RETURN_IF_ERROR(ReadScheduling(top));
  FAIRQ_RETURN_IF_ERROR(ReadTenantDefaults(top));
  FAIRQ_RETURN_IF_ERROR(ForEachItem(top, "pools", &Loader::ReadPool));
  FAIRQ_RETURN_IF_ERROR(ForEachItem(top, "orgs", &Loader::ReadOrg));
  FAIRQ_RETURN_IF_ERROR(ForEachItem(top, "tenants", &Loader::ReadTenant));
  FAIRQ_RETURN_IF_ERROR(ReadMetrics(top));
  FAIRQ_RETURN_IF_ERROR(ReadLog(top));
  std::vector<std::string>& pools = config_.pools;
  if (std::find(pools.begin(), pools.end(), "default") == pools.end()) {
    pools.insert(pools.begin(), "default");
  }
  return std::move(config_);
}

Status Loader::ForEachItem(FieldReader& parent, std::string_view key,
                           ReadItem read) {
  return parent.ForEachItem(
      key, FieldReader::ListRule::kOptional,
      [&](const YAML::Node& item, const std::string& path) {
        return (this->*read)(item, path);
      });
}

Status Loader::ReadServer(FieldReader& top) {
  ReadAddress(top, "listen", false, &config_.listen);
  ReadAddress(top, "metrics_listen", true, &config_.metrics_listen);
  // The exporter (prometheus-cpp's civetweb) serves TCP only.
  top.Require(!config_.metrics_listen.starts_with("unix:"), "metrics_listen",
              "expected host:port (the exporter cannot serve a unix "
              "socket), got " + Quoted(config_.metrics_listen));
  config_.data_dir = top.OptString("data_dir").value_or(config_.data_dir);
  top.Require(!config_.data_dir.empty(), "data_dir", "must not be empty");
  config_.sync = top.OptBool("sync").value_or(config_.sync);
  config_.sync_min_interval_us =
      IntegerIn(top, "sync_min_interval_us", config_.sync_min_interval_us, 0,
                kMaxSyncIntervalUs);
  return top.status();
}

Status Loader::ReadLimits(FieldReader& top) {
  DaemonConfig& c = config_;
  c.default_lease_seconds =
      IntegerIn(top, "default_lease_seconds", c.default_lease_seconds, 1,
                kMaxLeaseSeconds);
  c.max_payload_bytes = IntegerIn(top, "max_payload_bytes", c.max_payload_bytes,
                                  1, kMaxPayloadBytes);
  c.max_batch = IntegerIn(top, "max_batch", c.max_batch, 1, kMaxBatch);
  c.auto_create_tenants =
      top.OptBool("auto_create_tenants").value_or(c.auto_create_tenants);
  c.auto_create_pools =
      top.OptBool("auto_create_pools").value_or(c.auto_create_pools);
  c.max_tenants = IntegerIn(top, "max_tenants", c.max_tenants, 1, 10'000'000);
  c.max_pools = IntegerIn(top, "max_pools", c.max_pools, 1, 4096);
  c.worker_liveness_seconds = IntegerIn(top, "worker_liveness_seconds",
                                        c.worker_liveness_seconds, 1, 3600);
  c.command_queue_capacity = IntegerIn(
      top, "command_queue_capacity", c.command_queue_capacity, 16, 10'000'000);
  c.idempotency_window_seconds =
      IntegerIn(top, "idempotency_window_seconds", c.idempotency_window_seconds,
                1, 30 * 86400);
  c.repeat_window_reports = IntegerIn(top, "repeat_window_reports",
                                      c.repeat_window_reports, 1024, 1u << 24);
  c.max_queued_total =
      IntegerIn(top, "max_queued_total", c.max_queued_total, 0, kInt64Max);
  return top.status();
}

Status Loader::ReadScheduling(FieldReader& top) {
  FieldReader r(source(), SectionNode(top, "scheduling"),
                top.FieldPath("scheduling"),
                {"policy", "quantum", "max_deficit", "default_cost",
                 "estimate_alpha", "min_charge"});
  sched::SchedulerOptions& options = config_.scheduling;
  if (std::optional<std::string> name = r.OptString("policy")) {
    StatusOr<sched::Policy> policy = sched::ParsePolicy(*name);
    if (policy.ok()) options.policy = *policy;
    r.Adopt("policy", policy.status());
  }
  options.quantum = r.OptNumber("quantum").value_or(options.quantum);
  options.max_deficit =
      r.OptNumber("max_deficit").value_or(options.max_deficit);
  options.default_cost =
      r.OptNumber("default_cost").value_or(options.default_cost);
  options.estimate_alpha =
      r.OptNumber("estimate_alpha").value_or(options.estimate_alpha);
  options.min_charge = r.OptNumber("min_charge").value_or(options.min_charge);
  if (!r.ok()) return r.status();
  // The scheduler's own rules, reported against the field they name.
  Status valid = sched::Validate(options);
  r.Adopt(FieldOf(valid), valid);
  return r.status();
}

Status Loader::ReadTenantDefaults(FieldReader& top) {
  FieldReader r(source(), SectionNode(top, "tenant_defaults"),
                top.FieldPath("tenant_defaults"),
                {"weight", "max_attempts", "initial_backoff_seconds",
                 "max_backoff_seconds", "quotas", "cap", "cap_mode", "floor"});
  TenantDefaults& defaults = config_.tenant_defaults;
  defaults.max_attempts =
      IntegerIn(r, "max_attempts", defaults.max_attempts, 1, kMaxAttempts);
  ReadBackoff(r);
  FAIRQ_RETURN_IF_ERROR(ReadTenantSettings(r, &defaults.settings));
  return AtLine(r, ValidateTenantSettings(defaults.settings,
                                          top.FieldPath("tenant_defaults")));
}

void Loader::ReadBackoff(FieldReader& r) {
  TenantDefaults& defaults = config_.tenant_defaults;
  double& initial = defaults.initial_backoff_seconds;
  initial = r.OptNumber("initial_backoff_seconds").value_or(initial);
  r.Require(initial >= 0 && initial <= 3600, "initial_backoff_seconds",
            "must lie in [0, 3600], got " + FormatNumber(initial));
  double& max = defaults.max_backoff_seconds;
  max = r.OptNumber("max_backoff_seconds").value_or(max);
  r.Require(max >= initial && max <= 86400, "max_backoff_seconds",
            "must lie in [initial_backoff_seconds (" + FormatNumber(initial) +
                "), 86400], got " + FormatNumber(max));
}

// weight, cap, cap_mode, floor and quotas: what tenants and their defaults
// share. Fields the mapping leaves out keep the value `tenant` came with.
Status Loader::ReadTenantSettings(FieldReader& r, v1::Tenant* tenant) {
  if (std::optional<double> weight = r.OptNumber("weight")) {
    // The API reads 0 as "unset, so 1"; a file that writes 0 means it, and
    // gets the scheduler's weight rule (an org's check looks at the weight
    // alone). Other values meet that rule in ValidateTenantSettings.
    if (*weight == 0) {
      r.Adopt("weight", sched::Validate(sched::OrgConfig{"-", *weight}));
    }
    tenant->set_weight(*weight);
  }
  bool present = tenant->has_cap();
  ReadSlotLimit(r, "cap", tenant->mutable_cap(), &present);
  if (!present) tenant->clear_cap();
  present = tenant->has_floor();
  ReadSlotLimit(r, "floor", tenant->mutable_floor(), &present);
  if (!present) tenant->clear_floor();
  if (std::optional<std::string> mode = r.OptString("cap_mode")) {
    StatusOr<sched::CapMode> parsed = sched::ParseCapMode(*mode);
    if (parsed.ok()) tenant->set_cap_mode(FromSchedulerCapMode(*parsed));
    r.Adopt("cap_mode", parsed.status());
  }
  if (!r.ok() || !r.Has("quotas")) return r.status();
  return ReadQuotas(r, tenant->mutable_quotas());
}

// "4" (slots), "50%" (a share of live capacity) or "none" (no limit, for a
// tenant to drop a limit its defaults set).
void Loader::ReadSlotLimit(FieldReader& r, std::string_view key,
                           v1::SlotLimit* limit, bool* present) {
  std::optional<std::string> text = r.OptString(key);
  if (!text) return;
  *present = *text != "none";
  if (!*present) return;
  StatusOr<sched::SlotLimit> parsed =
      sched::SlotLimit::Parse(*text, r.FieldPath(key));
  if (parsed.ok()) *limit = FromSchedulerLimit(*parsed);
  r.Adopt(key, parsed.status());
}

Status Loader::ReadQuotas(FieldReader& parent, v1::Quotas* quotas) {
  FieldReader r(source(), SectionNode(parent, "quotas"),
                parent.FieldPath("quotas"),
                {"max_queued", "enqueue_rate", "enqueue_burst"});
  quotas->set_max_queued(
      IntegerIn(r, "max_queued", quotas->max_queued(), 0, kInt64Max));
  double rate = r.OptNumber("enqueue_rate").value_or(quotas->enqueue_rate());
  r.Require(rate >= 0, "enqueue_rate",
            "must be >= 0 jobs/s, got " + FormatNumber(rate));
  quotas->set_enqueue_rate(rate);
  quotas->set_enqueue_burst(IntegerIn(r, "enqueue_burst",
                                      quotas->enqueue_burst(), 0,
                                      std::numeric_limits<uint32_t>::max()));
  return r.status();
}

Status Loader::ReadPool(const YAML::Node& node, const std::string& path) {
  int line = LineOf(node);
  if (!node.IsScalar()) return ErrorAt(source(), line, path, "expected a name");
  const std::string& name = node.Scalar();
  if (std::optional<std::string> problem = NameProblem(name)) {
    return ErrorAt(source(), line, path, *problem);
  }
  for (size_t i = 0; i < config_.pools.size(); ++i) {
    if (config_.pools[i] != name) continue;
    return ErrorAt(source(), line, path,
                   "duplicate pool " + Quoted(name) + " (first at line " +
                       std::to_string(pool_lines_[i]) + ")");
  }
  config_.pools.push_back(name);
  pool_lines_.push_back(line);
  return Status::Ok();
}

Status Loader::ReadOrg(const YAML::Node& node, const std::string& path) {
  FieldReader r(source(), node, path, {"name", "weight"});
  sched::OrgConfig org{r.String("name"), r.OptNumber("weight").value_or(1.0)};
  if (r.ok()) r.Adopt("name", ValidateName(org.name, "name"));
  if (!r.ok()) return r.status();
  Status valid = sched::Validate(org);
  r.Adopt(FieldOf(valid), valid);
  for (size_t i = 0; i < config_.orgs.size(); ++i) {
    r.Require(config_.orgs[i].name != org.name, "name",
              "duplicate organisation " + Quoted(org.name) +
                  " (first at line " + std::to_string(org_lines_[i]) + ")");
  }
  config_.orgs.push_back(std::move(org));
  org_lines_.push_back(r.line());
  return r.status();
}

Status Loader::ReadTenant(const YAML::Node& node, const std::string& path) {
  FieldReader r(
      source(), node, path,
      {"name", "org", "weight", "cap", "cap_mode", "floor", "quotas"});
  v1::Tenant tenant = config_.tenant_defaults.settings;
  tenant.set_name(r.String("name"));
  if (r.ok()) r.Adopt("name", ValidateName(tenant.name(), "name"));
  tenant.set_org(r.OptString("org").value_or(""));
  if (r.ok() && r.Has("org")) r.Adopt("org", ValidateName(tenant.org(), "org"));
  FAIRQ_RETURN_IF_ERROR(ReadTenantSettings(r, &tenant));
  FAIRQ_RETURN_IF_ERROR(AtLine(r, ValidateTenant(tenant, path)));
  for (size_t i = 0; i < config_.tenants.size(); ++i) {
    r.Require(config_.tenants[i].name() != tenant.name(), "name",
              "duplicate tenant " + Quoted(tenant.name()) + " (first at line " +
                  std::to_string(tenant_lines_[i]) + ")");
  }
  config_.tenants.push_back(std::move(tenant));
  tenant_lines_.push_back(r.line());
  return r.status();
}

Status Loader::ReadMetrics(FieldReader& top) {
  FieldReader r(source(), SectionNode(top, "metrics"), top.FieldPath("metrics"),
                {"max_tenant_series"});
  MetricsConfig& metrics = config_.metrics;
  metrics.max_tenant_series = IntegerIn(r, "max_tenant_series",
                                        metrics.max_tenant_series, 0, 10000);
  return r.status();
}

Status Loader::ReadLog(FieldReader& top) {
  FieldReader r(source(), SectionNode(top, "log"), top.FieldPath("log"),
                {"level", "format"});
  if (std::optional<std::string> level = r.OptString("level")) {
    auto it = std::find_if(kLogLevels.begin(), kLogLevels.end(),
                           [&](const auto& p) { return p.second == *level; });
    r.Require(it != kLogLevels.end(), "level",
              "unknown level " + Quoted(*level) +
                  " (expected trace, debug, info, warn or error)");
    if (it != kLogLevels.end()) config_.log.level = it->first;
  }
  if (std::optional<std::string> format = r.OptString("format")) {
    auto it = std::find_if(kLogFormats.begin(), kLogFormats.end(),
                           [&](const auto& p) { return p.second == *format; });
    r.Require(it != kLogFormats.end(), "format",
              "unknown format " + Quoted(*format) + " (expected text or json)");
    if (it != kLogFormats.end()) config_.log.format = it->first;
  }
  return r.status();
}

Status Loader::AtLine(const FieldReader& r, const Status& status) const {
  if (status.ok()) return status;
  std::string_view field = FieldOf(status);
  std::string_view key = field;
  std::string prefix = r.FieldPath("");  // "tenants[2]." (or "" at the top)
  if (key.starts_with(prefix)) key.remove_prefix(prefix.size());
  key = key.substr(0, key.find('.'));
  return ErrorAt(source(), r.Line(key), field, ProblemOf(status));
}

}  // namespace

v1::Tenant DefaultTenantSettings() {
  v1::Tenant tenant;
  tenant.set_weight(1.0);
  tenant.set_cap_mode(v1::CAP_MODE_WORK_CONSERVING);
  tenant.mutable_quotas();  // present, all 0: unlimited
  return tenant;
}

std::string_view LogLevelName(LogLevel level) {
  for (const auto& [value, name] : kLogLevels) {
    if (value == level) return name;
  }
  return "unknown";
}

std::string_view LogFormatName(LogFormat format) {
  for (const auto& [value, name] : kLogFormats) {
    if (value == format) return name;
  }
  return "unknown";
}

StatusOr<DaemonConfig> ParseConfig(std::string_view text,
                                   const std::string& source) {
  return yaml::LoadDocument<DaemonConfig>(
      text, source,
      [&](const YAML::Node& root) { return Loader(source).Load(root); });
}

StatusOr<DaemonConfig> LoadConfig(const std::string& path) {
  // A directory opens and reads as empty text, which would mean "all
  // defaults": a mistyped --config must fail instead.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return NotFound(path + ": is a directory, not a config file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot read: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return NotFound(path + ": cannot read: " + std::strerror(errno));
  return ParseConfig(text.str(), path);
}

}  // namespace fairq::config
