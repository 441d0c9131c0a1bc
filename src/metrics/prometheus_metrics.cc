#include "metrics/prometheus_metrics.h"

#include <algorithm>
#include <utility>

#include "base/code_name.h"
#include "metrics/build_info.h"

namespace fairq::metrics {
namespace {

constexpr char kOtherTenant[] = "_other";

// The contract's buckets (docs/metrics.md): 1 ms to an hour.
const prometheus::Histogram::BucketBoundaries kWaitBuckets = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,  1,
    2.5,   5,      10,    30,   60,    120,  300, 600,  1800, 3600};
const prometheus::Histogram::BucketBoundaries kTurnBuckets = {
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
    0.005,   0.01,     0.025,   0.05,   0.1,     0.25,   0.5,   1};
const prometheus::Histogram::BucketBoundaries kWriteBuckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
// The writer holds at most 64 turns.
const prometheus::Histogram::BucketBoundaries kGroupBuckets = {1,  2,  4, 8,
                                                               16, 32, 64};
// Lease long polls last up to their wait (30 s by default).
const prometheus::Histogram::BucketBoundaries kRpcBuckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30,    60};
// Quantile with its tolerated rank error: tighter where the tail matters.
// Each observation is inserted into every age bucket's estimator, and
// prometheus-cpp's CKMS insert shifts a sorted vector, so the sample count
// the error implies is paid per lease on the dispatcher thread: 5 buckets at
// 0.1% for p99 cost ~19% of that thread at 60k leases/s; 2 at 0.5% ~1%.
const prometheus::Summary::Quantiles kWaitQuantiles = {
    {0.5, 0.05}, {0.9, 0.01}, {0.99, 0.005}};
constexpr std::chrono::seconds kWaitWindow{60};
constexpr int kWaitWindowBuckets = 2;

constexpr std::array<const char*, kJobEventCount> kJobEventNames = {
    "enqueued",      "completed", "failed", "retried",
    "lease_expired", "canceled",  "dead",   "released"};
constexpr std::array<const char*, kJobEventCount> kJobEventHelp = {
    "Jobs accepted by Enqueue or EnqueueBatch.",
    "Leased attempts that completed.",
    "Attempts a worker reported failed (retryable or not).",
    "Failed or lapsed attempts that will be retried.",
    "Leases that lapsed without an answer.",
    "Queued jobs canceled or purged.",
    "Jobs moved to DEAD.",
    "Leased jobs a worker gave back unstarted (Release)."};
constexpr std::array<const char*, kSpecSourceCount> kSpecSourceNames = {
    "enqueue_cache", "read_ahead", "store"};
constexpr std::array<const char*, kRejectionCount> kRejectionNames = {
    "tenant_queue_full", "rate_limited", "broker_full", "unknown_tenant",
    "tenant_limit"};

template <class T>
prometheus::Family<T>& Build(prometheus::detail::Builder<T> builder,
                             const std::string& name, const std::string& help,
                             prometheus::Registry& registry) {
  return builder.Name(name).Help(help).Register(registry);
}

}  // namespace

PrometheusMetrics::PrometheusMetrics(PrometheusOptions options)
    : options_(std::move(options)),
      registry_(std::make_shared<prometheus::Registry>()),
      dispatched_(Build(prometheus::BuildCounter(),
                        "fairq_jobs_dispatched_total", "Leases granted.",
                        *registry_)),
      worker_seconds_(Build(prometheus::BuildCounter(),
                            "fairq_worker_seconds_total",
                            "Worker-seconds consumed, as workers reported "
                            "them (a lapsed lease counts its whole length).",
                            *registry_)),
      rejections_(Build(prometheus::BuildCounter(),
                        "fairq_admission_rejections_total",
                        "Enqueues refused, by reason.", *registry_)),
      wait_(Build(prometheus::BuildHistogram(), "fairq_queue_wait_seconds",
                  "Queue wait: from ready (enqueue or due time) to lease.",
                  *registry_)),
      wait_window_(Build(
          prometheus::BuildSummary(), "fairq_queue_wait_window_seconds",
          "Queue wait quantiles over a sliding 60 s window.", *registry_)),
      turn_(Build(prometheus::BuildHistogram(), "fairq_dispatcher_turn_seconds",
                  "Dispatcher loop turn: commands, timers, matching, handing "
                  "the turn to the writer.",
                  *registry_)
                .Add({}, kTurnBuckets)),
      read_ahead_unused_(
          Build(prometheus::BuildCounter(), "fairq_read_ahead_unused_total",
                "Specs read ahead of a deep backlog's leases that were "
                "pushed out of the payload cache before a lease took them.",
                *registry_)
              .Add({})),
      repeated_reports_(
          Build(prometheus::BuildCounter(), "fairq_repeated_reports_total",
                "Complete, Fail and Release items that repeated a report taken "
                "before (its answer was lost) and were answered OK again.",
                *registry_)
              .Add({})),
      store_write_(Build(prometheus::BuildHistogram(),
                         "fairq_store_write_seconds",
                         "Group commit: write and sync of the batched turns.",
                         *registry_)
                       .Add({}, kWriteBuckets)),
      store_group_(Build(prometheus::BuildHistogram(),
                         "fairq_store_write_group_size",
                         "Dispatcher turns per group commit.", *registry_)
                       .Add({}, kGroupBuckets)),
      rpc_calls_(Build(prometheus::BuildCounter(), "fairq_rpc_requests_total",
                       "gRPC calls finished, by method and status code.",
                       *registry_)),
      rpc_duration_(Build(prometheus::BuildHistogram(),
                          "fairq_rpc_duration_seconds",
                          "gRPC call latency, from the call's start to its "
                          "status being sent.",
                          *registry_)),
      snapshot_failures_(
          Build(prometheus::BuildCounter(),
                "fairq_metrics_snapshot_failures_total",
                "Scrapes that got no broker snapshot in time; their "
                "scrape-time gauges are missing.",
                *registry_)
              .Add({})),
      labels_(options_.max_tenant_series, options_.idle_eviction.count()),
      slots_(options_.max_tenant_series + 1),
      window_(options_.share_window.count()) {
  for (size_t e = 0; e < kJobEventCount; ++e) {
    job_events_[e] =
        &Build(prometheus::BuildCounter(),
               std::string("fairq_jobs_") + kJobEventNames[e] + "_total",
               kJobEventHelp[e], *registry_);
  }
  auto& specs = Build(prometheus::BuildCounter(), "fairq_leased_specs_total",
                      "Leased jobs, by where their spec came from: the cache "
                      "of specs enqueued just before, the read-ahead of a "
                      "deep backlog, or a read by id.",
                      *registry_);
  for (size_t s = 0; s < kSpecSourceCount; ++s) {
    leased_specs_[s] = &specs.Add({{"source", kSpecSourceNames[s]}});
  }
  Build(prometheus::BuildGauge(), "fairq_build_info",
        "1, labeled with the version and source revision of this fairqd.",
        *registry_)
      .Add({{"version", std::string(BuildVersion())},
            {"revision", std::string(BuildRevision())}})
      .Set(1);
  auto series = [this](std::string label) {
    auto rpc = std::make_unique<RpcSeries>();
    rpc->duration = &rpc_duration_.Add({{"method", label}}, kRpcBuckets);
    rpc->method = std::move(label);
    return rpc;
  };
  for (const std::string& method : options_.rpc_methods) {
    std::string label = method.starts_with('/') ? method.substr(1) : method;
    rpcs_.emplace_back(method, series(std::move(label)));
  }
  std::sort(rpcs_.begin(), rpcs_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  other_rpc_ = series("other");
}

PrometheusMetrics::~PrometheusMetrics() = default;

// --- Dispatcher thread -----------------------------------------------------

void PrometheusMetrics::NameTenant(uint32_t tenant, std::string_view name) {
  if (tenant >= tenant_names_.size()) tenant_names_.resize(tenant + 1);
  tenant_names_[tenant] = name;
  // A tenant called "_other" would share the aggregate's series.
  if (name == kOtherTenant) labels_.KeepInOther(tenant);
}

void PrometheusMetrics::NamePool(uint32_t pool, std::string_view name) {
  if (pool >= pool_names_.size()) pool_names_.resize(pool + 1);
  pool_names_[pool] = name;
}

void PrometheusMetrics::Count(uint32_t tenant, uint32_t pool, JobEvent event) {
  Series(tenant, pool).events[static_cast<size_t>(event)]->Increment();
}

void PrometheusMetrics::Rejected(uint32_t tenant, Rejection reason) {
  uint32_t slot =
      tenant == kNoTenant ? TenantLabels::kOther : labels_.Touch(tenant);
  auto index = static_cast<size_t>(reason);
  prometheus::Counter*& counter = slots_[slot].rejections[index];
  if (counter == nullptr) {
    counter = &rejections_.Add(
        {{"tenant", SlotName(slot)}, {"reason", kRejectionNames[index]}});
  }
  counter->Increment();
}

void PrometheusMetrics::LeaseStarted(uint32_t tenant, uint32_t pool,
                                     int64_t wait_ms, int64_t now_ms) {
  PoolSeries& series = Series(tenant, pool);
  series.dispatched->Increment();
  double wait_s = static_cast<double>(std::max<int64_t>(0, wait_ms)) / 1000;
  series.wait->Observe(wait_s);
  series.wait_window->Observe(wait_s);
  window_.Started(tenant, pool, now_ms);
}

void PrometheusMetrics::LeaseAdopted(uint32_t tenant, uint32_t pool,
                                     int64_t now_ms) {
  window_.Started(tenant, pool, now_ms);
}

void PrometheusMetrics::LeaseEnded(uint32_t tenant, uint32_t pool,
                                   double runtime_s, int64_t now_ms) {
  if (runtime_s > 0) Series(tenant, pool).worker_seconds->Increment(runtime_s);
  window_.Ended(tenant, pool, now_ms);
}

void PrometheusMetrics::TurnDone(double seconds) { turn_.Observe(seconds); }

void PrometheusMetrics::LeasedSpec(SpecSource source) {
  leased_specs_[static_cast<size_t>(source)]->Increment();
}

void PrometheusMetrics::ReadAheadUnused(size_t specs) {
  read_ahead_unused_.Increment(static_cast<double>(specs));
}

void PrometheusMetrics::ReportRepeated() { repeated_reports_.Increment(); }

const std::string& PrometheusMetrics::SlotName(uint32_t slot) const {
  static const std::string kOther = kOtherTenant;
  static const std::string kUnnamed;
  if (slot == TenantLabels::kOther) return kOther;
  uint32_t tenant = labels_.holder(slot);
  return tenant < tenant_names_.size() ? tenant_names_[tenant] : kUnnamed;
}

const std::string& PrometheusMetrics::PoolName(uint32_t pool) const {
  static const std::string kUnnamed;
  return pool < pool_names_.size() ? pool_names_[pool] : kUnnamed;
}

PrometheusMetrics::PoolSeries& PrometheusMetrics::CreateSeries(uint32_t slot,
                                                               uint32_t pool) {
  std::vector<PoolSeries>& pools = slots_[slot].pools;
  if (pool >= pools.size()) pools.resize(pool + 1);
  prometheus::Labels labels = {{"tenant", SlotName(slot)},
                               {"pool", PoolName(pool)}};
  PoolSeries& series = pools[pool];
  for (size_t e = 0; e < kJobEventCount; ++e) {
    series.events[e] = &job_events_[e]->Add(labels);
  }
  series.worker_seconds = &worker_seconds_.Add(labels);
  series.wait = &wait_.Add(labels, kWaitBuckets);
  series.wait_window = &wait_window_.Add(labels, kWaitQuantiles,
                                         std::chrono::milliseconds(kWaitWindow),
                                         kWaitWindowBuckets);
  series.dispatched = &dispatched_.Add(labels);  // last: marks it complete
  return series;
}

void PrometheusMetrics::DropSeries(uint32_t slot) {
  SlotSeries& slot_series = slots_[slot];
  for (PoolSeries& series : slot_series.pools) {
    if (!series.dispatched) continue;
    for (size_t e = 0; e < kJobEventCount; ++e) {
      job_events_[e]->Remove(series.events[e]);
    }
    worker_seconds_.Remove(series.worker_seconds);
    wait_.Remove(series.wait);
    wait_window_.Remove(series.wait_window);
    dispatched_.Remove(series.dispatched);
  }
  for (prometheus::Counter* counter : slot_series.rejections) {
    if (counter) rejections_.Remove(counter);
  }
  slot_series = SlotSeries{};
}

// --- Writer sync thread ----------------------------------------------------

void PrometheusMetrics::GroupCommitted(double seconds, size_t turns) {
  store_write_.Observe(seconds);
  store_group_.Observe(static_cast<double>(turns));
}

// --- gRPC threads ----------------------------------------------------------

PrometheusMetrics::RpcSeries& PrometheusMetrics::RpcOf(
    std::string_view method) {
  auto it = std::lower_bound(
      rpcs_.begin(), rpcs_.end(), method,
      [](const auto& entry, std::string_view m) { return entry.first < m; });
  if (it != rpcs_.end() && it->first == method) return *it->second;
  return *other_rpc_;
}

void PrometheusMetrics::RpcFinished(std::string_view method, int code,
                                    double seconds) {
  RpcSeries& series = RpcOf(method);
  size_t index = CanonicalCodeIndex(code);
  prometheus::Counter* counter =
      series.calls[index].load(std::memory_order_acquire);
  if (counter == nullptr) {
    std::lock_guard lock(rpc_mu_);
    counter = series.calls[index].load(std::memory_order_relaxed);
    if (counter == nullptr) {
      counter = &rpc_calls_.Add(
          {{"method", series.method}, {"code", std::string(kCanonicalCodeNames[index])}});
      series.calls[index].store(counter, std::memory_order_release);
    }
  }
  counter->Increment();
  series.duration->Observe(seconds);
}

}  // namespace fairq::metrics
