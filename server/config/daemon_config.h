// DaemonConfig: every setting of fairqd, read from one YAML file, checked, and
// with a default for every key the file leaves out. config/fairqd.yaml
// documents each field with its default and range.
//
// Plain values. ParseConfig and LoadConfig never throw and are safe to call
// from any thread; a loaded config is immutable by convention.
#ifndef FAIRQ_SERVER_CONFIG_DAEMON_CONFIG_H_
#define FAIRQ_SERVER_CONFIG_DAEMON_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fairq/v1/fairq.pb.h"
#include "sched/types.h"

namespace fairq::config {

// Bounds the config enforces that the service also applies per request
// (JobSpec.lease_duration, max_attempts, payload and batch sizes).
inline constexpr uint32_t kMaxLeaseSeconds = 12 * 3600;
inline constexpr uint32_t kMaxAttempts = 1000;
inline constexpr uint32_t kMaxPayloadBytes = 64u << 20;
inline constexpr uint32_t kMaxBatch = 10000;

// 100 ms: beyond that a paced sync would hold acknowledgements for longer
// than any group it could gather is worth.
inline constexpr uint32_t kMaxSyncIntervalUs = 100000;

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError };
enum class LogFormat { kText, kJson };

std::string_view LogLevelName(LogLevel level);
std::string_view LogFormatName(LogFormat format);

// Weight 1, no cap (work-conserving), no floor, no quotas, no name.
v1::Tenant DefaultTenantSettings();

// What every tenant starts from: those the file lists (their own fields
// override these) and those created on first use.
struct TenantDefaults {
  // A template: `name` and `org` are empty, `paused` is false.
  v1::Tenant settings = DefaultTenantSettings();
  // Attempts of a job that names none (JobSpec.max_attempts 0); 1..1000.
  uint32_t max_attempts = 5;
  // Retry backoff of a job without its own RetryPolicy: the n-th retry waits
  // min(max, initial * 2^(n-1)) with jitter. initial 0..3600,
  // max initial..86400.
  double initial_backoff_seconds = 1;
  double max_backoff_seconds = 300;
};

struct MetricsConfig {
  // Tenants with Prometheus label series of their own; the others are
  // summed under tenant="_other" (docs/metrics.md). 0..10000.
  uint32_t max_tenant_series = 100;
};

struct LogConfig {
  LogLevel level = LogLevel::kInfo;
  LogFormat format = LogFormat::kText;
};

struct DaemonConfig {
  // The file the config came from ("" for the built-in defaults).
  std::string source;

  // gRPC address: "host:port" (port 0 picks a free one) or "unix:/path".
  std::string listen = "127.0.0.1:7070";
  // Prometheus /metrics address: "host:port" (port 0 picks a free one); ""
  // turns the exporter off.
  std::string metrics_listen = "127.0.0.1:9464";
  // RocksDB directory; relative paths are taken from the working directory.
  std::string data_dir = "./data";
  // Sync each write to disk before replying. false trades the last moments
  // of acknowledged work on power loss for throughput.
  bool sync = true;
  // Writes that arrive while a sync runs wait for the next one, which
  // starts this many microseconds after the running one started, and share
  // it; a write that finds no sync under way is synced at once. 0: sync as
  // soon as the last one ended. Ignored without `sync`.
  // 0..kMaxSyncIntervalUs.
  uint32_t sync_min_interval_us = 1000;
  // The pacing in effect: none without sync, which has no fsync to space.
  uint32_t effective_sync_interval_us() const {
    return sync ? sync_min_interval_us : 0;
  }

  uint32_t default_lease_seconds = 30;    // 1..kMaxLeaseSeconds
  uint32_t max_payload_bytes = 1u << 20;  // 1..kMaxPayloadBytes
  uint32_t max_batch = 1000;              // 1..kMaxBatch
  // The most a job's spec may weigh: the payload limit plus up to 80 KiB
  // of labels (64 of 1,152 bytes), idempotency key and names.
  uint64_t max_spec_bytes() const {
    return uint64_t{max_payload_bytes} + (80 << 10);
  }
  bool auto_create_tenants = true;
  bool auto_create_pools = true;
  // Tenants and pools that auto-creation and SetTenant may bring the
  // broker to; beyond, they are refused with RESOURCE_EXHAUSTED. Every
  // tenant and pool costs memory, so a client that puts ids in tenant or
  // pool names would otherwise grow it without end. Those stored or
  // listed in this file always load. 1..10,000,000 and 1..4096.
  uint32_t max_tenants = 100'000;
  uint32_t max_pools = 1024;
  // A pool's live capacity (what share caps and floors are shares of) is the
  // sum of slots of its workers seen within this window. 1..3600.
  uint32_t worker_liveness_seconds = 30;
  // Bound of the queue into the dispatcher thread; when it is full RPCs get
  // RESOURCE_EXHAUSTED. 16..10,000,000.
  uint32_t command_queue_capacity = 65536;
  // How long an idempotency key is remembered. 1..2,592,000 (30 days).
  uint32_t idempotency_window_seconds = 86400;
  // Reports (Complete, Fail, Release) remembered so that an exact repeat is
  // answered OK (docs/api.md, "Repeated reports"); 16 bytes each, rounded up to
  // a power of two. 1024..16,777,216.
  uint32_t repeat_window_reports = 262'144;
  // READY + SCHEDULED jobs over all tenants before Enqueue gets
  // RESOURCE_EXHAUSTED; 0 means unlimited.
  uint64_t max_queued_total = 0;

  // Checked by sched::Validate; policy by sched::ParsePolicy.
  sched::SchedulerOptions scheduling;
  TenantDefaults tenant_defaults;
  // Pools that exist from the start; always holds "default" (first unless
  // the file places it).
  std::vector<std::string> pools = {"default"};
  std::vector<sched::OrgConfig> orgs;
  // Fully resolved: tenant_defaults already applied, weights set (never 0),
  // names unique and valid (ValidateTenant holds for each).
  std::vector<v1::Tenant> tenants;
  MetricsConfig metrics;
  LogConfig log;
};

// Reads and checks the file at `path`. Errors read
// "path:line: field: problem", e.g.
// "fairqd.yaml:12: tenants[1].weight: must be between 0.000001 and 1000000,
// got 0";
// unknown keys, duplicate keys and duplicate names are errors. NOT_FOUND
// when the file cannot be read.
StatusOr<DaemonConfig> LoadConfig(const std::string& path);

// The same for YAML text in memory; `source` names it in messages. Empty
// text (or only comments) gives the defaults.
StatusOr<DaemonConfig> ParseConfig(std::string_view text,
                                   const std::string& source);

// A few lines of "section: key value, ..." with every effective value, for
// the daemon to log at start. At most ten tenants are listed by name; a
// relative data_dir is also shown resolved against the current directory.
std::string DescribeEffective(const DaemonConfig& config);

}  // namespace fairq::config

#endif  // FAIRQ_SERVER_CONFIG_DAEMON_CONFIG_H_
