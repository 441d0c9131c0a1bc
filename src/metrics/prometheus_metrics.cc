#include "metrics/prometheus_metrics.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <utility>

#include "metrics/build_info.h"

namespace fairq::metrics {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

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
const prometheus::Summary::Quantiles kWaitQuantiles = {
    {0.5, 0.05}, {0.9, 0.01}, {0.99, 0.001}};
constexpr std::chrono::seconds kWaitWindow{60};
constexpr int kWaitWindowBuckets = 5;

constexpr std::array<const char*, kJobEventCount> kJobEventNames = {
    "enqueued",      "completed", "failed", "retried",
    "lease_expired", "canceled",  "dead"};
constexpr std::array<const char*, kJobEventCount> kJobEventHelp = {
    "Jobs accepted by Enqueue or EnqueueBatch.",
    "Leased attempts that completed.",
    "Attempts a worker reported failed (retryable or not).",
    "Failed or lapsed attempts that will be retried.",
    "Leases that lapsed without an answer.",
    "Queued jobs canceled or purged.",
    "Jobs moved to DEAD."};
constexpr std::array<const char*, kRejectionCount> kRejectionNames = {
    "tenant_queue_full", "rate_limited", "broker_full", "unknown_tenant"};
constexpr std::array<const char*, 17> kCodeNames = {"OK",
                                                    "CANCELLED",
                                                    "UNKNOWN",
                                                    "INVALID_ARGUMENT",
                                                    "DEADLINE_EXCEEDED",
                                                    "NOT_FOUND",
                                                    "ALREADY_EXISTS",
                                                    "PERMISSION_DENIED",
                                                    "RESOURCE_EXHAUSTED",
                                                    "FAILED_PRECONDITION",
                                                    "ABORTED",
                                                    "OUT_OF_RANGE",
                                                    "UNIMPLEMENTED",
                                                    "INTERNAL",
                                                    "UNAVAILABLE",
                                                    "DATA_LOSS",
                                                    "UNAUTHENTICATED"};
constexpr size_t kUnknownCode = 2;

template <class T>
prometheus::Family<T>& Build(prometheus::detail::Builder<T> builder,
                             const std::string& name, const std::string& help,
                             prometheus::Registry& registry) {
  return builder.Name(name).Help(help).Register(registry);
}

ClientMetric GaugeMetric(std::vector<ClientMetric::Label> labels,
                         double value) {
  ClientMetric metric;
  metric.label = std::move(labels);
  metric.gauge.value = value;
  return metric;
}

MetricFamily GaugeFamily(std::string name, std::string help) {
  return MetricFamily{std::move(name), std::move(help), MetricType::Gauge, {}};
}

int64_t UnixNowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// What one scrape exports beyond the registry, by tenant label and pool.
struct PrometheusMetrics::ScrapeView {
  struct Row {
    std::string tenant;
    std::string pool;
    uint64_t ready = 0;
    uint64_t scheduled = 0;
    uint64_t leased = 0;
    uint64_t dead = 0;
    std::optional<int64_t> oldest_ready_ms;
    std::optional<uint32_t> cap_slots;  // own labels only
    bool starved = false;
    bool in_share = false;  // active in the pool within the share window
    double received = 0;    // slot-seconds over the window
    double entitled = 0;
  };
  struct Pool {
    std::string name;
    PoolState state;
  };
  std::vector<Row> rows;
  std::vector<std::pair<std::string, double>> weights;  // own labels only
  std::vector<Pool> pools;
  uint32_t tenant_series = 0;
};

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
                  "Dispatcher loop turn: timers, commands, matching, handing "
                  "the turn to the writer.",
                  *registry_)
                .Add({}, kTurnBuckets)),
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

const std::string& PrometheusMetrics::SlotName(uint32_t slot) const {
  static const std::string kOther = kOtherTenant;
  static const std::string kUnnamed;
  if (slot == TenantLabels::kOther) return kOther;
  uint32_t tenant = labels_.holder(slot);
  return tenant < tenant_names_.size() ? tenant_names_[tenant] : kUnnamed;
}

PrometheusMetrics::PoolSeries& PrometheusMetrics::CreateSeries(uint32_t slot,
                                                               uint32_t pool) {
  std::vector<PoolSeries>& pools = slots_[slot].pools;
  if (pool >= pools.size()) pools.resize(pool + 1);
  static const std::string kUnnamed;
  prometheus::Labels labels = {
      {"tenant", SlotName(slot)},
      {"pool", pool < pool_names_.size() ? pool_names_[pool] : kUnnamed}};
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

// The broker's state at a scrape, folded into rows by tenant label: the
// labels are rebalanced first, then each pool's shares are worked out per
// tenant and summed into its label's row.
PrometheusMetrics::ScrapeView PrometheusMetrics::Digest(
    const BrokerState& state, int64_t now_ms) {
  std::vector<bool> busy(state.tenants.size());
  for (const TenantPoolState& row : state.rows) {
    if (row.tenant < busy.size() &&
        row.ready + row.scheduled + row.leased > 0) {
      busy[row.tenant] = true;
    }
  }
  for (uint32_t slot : labels_.Rebalance(busy, now_ms)) DropSeries(slot);
  window_.Advance(now_ms);

  ScrapeView view;
  std::map<std::pair<uint32_t, uint32_t>, size_t> row_of;  // (slot, pool)
  auto row_for = [&](uint32_t slot, uint32_t pool) -> ScrapeView::Row& {
    auto [it, added] = row_of.emplace(std::pair(slot, pool), view.rows.size());
    if (added) {
      view.rows.emplace_back();
      view.rows.back().tenant = SlotName(slot);
      view.rows.back().pool =
          pool < pool_names_.size() ? pool_names_[pool] : "";
    }
    return view.rows[it->second];
  };
  // Labels keep showing (as zeros) in every pool they have series in.
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
    for (uint32_t pool = 0; pool < slots_[slot].pools.size(); ++pool) {
      if (slots_[slot].pools[pool].dispatched) row_for(slot, pool);
    }
  }

  // Every (pool, tenant) with jobs now or slot-seconds in the window.
  struct Pair {
    const TenantPoolState* row = nullptr;
    double received = 0;
  };
  std::map<std::pair<uint32_t, uint32_t>, Pair> pairs;
  for (const TenantPoolState& row : state.rows) {
    if (row.tenant < state.tenants.size()) {
      pairs[{row.pool, row.tenant}].row = &row;
    }
  }
  window_.ForEachReceived([&](uint32_t tenant, uint32_t pool, double got) {
    if (tenant < state.tenants.size()) pairs[{pool, tenant}].received = got;
  });

  auto begin = pairs.begin();
  while (begin != pairs.end()) {
    uint32_t pool = begin->first.first;
    auto end = begin;
    std::vector<ShareInput> now_inputs, window_inputs;
    double total = 0;
    for (; end != pairs.end() && end->first.first == pool; ++end) {
      const TenantState& tenant = state.tenants[end->first.second];
      const TenantPoolState* row = end->second.row;
      bool runs =
          row && ((row->ready > 0 && !tenant.paused) || row->leased > 0);
      now_inputs.push_back({tenant.weight, tenant.org, runs});
      window_inputs.push_back(
          {tenant.weight, tenant.org, runs || end->second.received > 0});
      total += end->second.received;
    }
    std::vector<double> now_shares = PoolShares(now_inputs, state.org_weights);
    std::vector<double> window_shares =
        PoolShares(window_inputs, state.org_weights);
    uint32_t slots = pool < state.pools.size() ? state.pools[pool].slots : 0;
    size_t i = 0;
    for (auto it = begin; it != end; ++it, ++i) {
      uint32_t slot = labels_.SlotOf(it->first.second);
      ScrapeView::Row& out = row_for(slot, pool);
      if (const TenantPoolState* row = it->second.row) {
        out.ready += row->ready;
        out.scheduled += row->scheduled;
        out.leased += row->leased;
        out.dead += row->dead;
        if (row->oldest_ready_ms &&
            (!out.oldest_ready_ms ||
             *row->oldest_ready_ms < *out.oldest_ready_ms)) {
          out.oldest_ready_ms = row->oldest_ready_ms;
        }
        if (slot != TenantLabels::kOther) out.cap_slots = row->cap_slots;
        bool paused = state.tenants[it->first.second].paused;
        out.starved |=
            Starved(paused ? 0 : row->ready, row->leased, now_shares[i], slots,
                    row->cap_slots, row->floor_slots);
      }
      if (window_inputs[i].active) {
        out.in_share = true;
        out.received += it->second.received;
        out.entitled += total * window_shares[i];
      }
    }
    begin = end;
  }

  for (uint32_t slot = 1; slot <= labels_.max_labeled(); ++slot) {
    uint32_t tenant = labels_.holder(slot);
    if (tenant < state.tenants.size()) {
      view.weights.emplace_back(SlotName(slot), state.tenants[tenant].weight);
    }
  }
  for (uint32_t pool = 0; pool < state.pools.size(); ++pool) {
    view.pools.push_back({pool < pool_names_.size() ? pool_names_[pool] : "",
                          state.pools[pool]});
  }
  view.tenant_series = labels_.labeled();
  return view;
}

// --- Writer thread ---------------------------------------------------------

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
  size_t index = code >= 0 && static_cast<size_t>(code) < kCodeNames.size()
                     ? static_cast<size_t>(code)
                     : kUnknownCode;
  prometheus::Counter* counter =
      series.calls[index].load(std::memory_order_acquire);
  if (counter == nullptr) {
    std::lock_guard lock(rpc_mu_);
    counter = series.calls[index].load(std::memory_order_relaxed);
    if (counter == nullptr) {
      counter = &rpc_calls_.Add(
          {{"method", series.method}, {"code", kCodeNames[index]}});
      series.calls[index].store(counter, std::memory_order_release);
    }
  }
  counter->Increment();
  series.duration->Observe(seconds);
}

// --- Exporter threads ------------------------------------------------------

std::optional<PrometheusMetrics::ScrapeView> PrometheusMetrics::Snapshot()
    const {
  if (!sources_.snapshot) return std::nullopt;
  struct Pending {
    std::mutex mu;
    std::condition_variable cv;
    bool finished = false;
    std::optional<ScrapeView> view;
  };
  auto pending = std::make_shared<Pending>();
  // Collect is const by prometheus-cpp's interface, but the visitor runs on
  // the dispatcher thread, which owns the state Digest updates. `this`
  // outlives the dispatcher (the daemon destroys it last), so a visit that
  // runs after this scrape gave up is still safe.
  auto* self = const_cast<PrometheusMetrics*>(this);
  sources_.snapshot(
      [self, pending](const BrokerState& state, int64_t now_ms) {
        ScrapeView view = self->Digest(state, now_ms);
        std::lock_guard lock(pending->mu);
        pending->view = std::move(view);
      },
      [pending] {
        {
          std::lock_guard lock(pending->mu);
          pending->finished = true;
        }
        pending->cv.notify_all();
      });
  std::unique_lock lock(pending->mu);
  pending->cv.wait_for(lock, options_.snapshot_timeout,
                       [&] { return pending->finished; });
  if (!pending->view) snapshot_failures_.Increment();
  return std::move(pending->view);
}

std::vector<MetricFamily> PrometheusMetrics::Collect() const {
  std::optional<ScrapeView> view = Snapshot();
  std::vector<MetricFamily> families = registry_->Collect();
  auto single = [&](std::string name, std::string help, double value) {
    families.push_back(GaugeFamily(std::move(name), std::move(help)));
    families.back().metric.push_back(GaugeMetric({}, value));
  };
  if (sources_.queue_depth) {
    single("fairq_dispatcher_queue_depth",
           "Commands waiting for the dispatcher.",
           static_cast<double>(sources_.queue_depth()));
  }
  if (sources_.store_failed) {
    single("fairq_store_failed",
           "1 while the store is in the failed state (a write failed; "
           "fairqd needs a restart).",
           sources_.store_failed() ? 1 : 0);
  }
  if (!view) return families;
  // Ages are taken now, at the scrape, so they grow while a job waits.
  int64_t now_ms = UnixNowMs();
  MetricFamily age =
      GaugeFamily("fairq_oldest_ready_age_seconds",
                  "Age of the oldest READY job at scrape time; 0 when none.");
  MetricFamily jobs = GaugeFamily("fairq_jobs", "Jobs in each state.");
  MetricFamily cap = GaugeFamily("fairq_tenant_cap_slots",
                                 "The tenant's cap in slots at the pool's "
                                 "live capacity; absent without a cap.");
  MetricFamily ratio = GaugeFamily(
      "fairq_tenant_fair_share_ratio",
      "Slot-seconds received / entitled over the last 60 s (1 = its share).");
  MetricFamily starved = GaugeFamily(
      "fairq_tenant_starved",
      "1 while the tenant has READY jobs and runs fewer than its weighted "
      "share of the pool's live slots.");
  for (const ScrapeView::Row& row : view->rows) {
    std::vector<ClientMetric::Label> labels = {{"tenant", row.tenant},
                                               {"pool", row.pool}};
    double age_s = 0;
    if (row.oldest_ready_ms) {
      age_s = static_cast<double>(
                  std::max<int64_t>(0, now_ms - *row.oldest_ready_ms)) /
              1000;
    }
    age.metric.push_back(GaugeMetric(labels, age_s));
    for (auto [state, count] :
         {std::pair{"ready", row.ready}, std::pair{"scheduled", row.scheduled},
          std::pair{"leased", row.leased}, std::pair{"dead", row.dead}}) {
      std::vector<ClientMetric::Label> with_state = labels;
      with_state.push_back({"state", state});
      jobs.metric.push_back(
          GaugeMetric(std::move(with_state), static_cast<double>(count)));
    }
    if (row.cap_slots)
      cap.metric.push_back(GaugeMetric(labels, *row.cap_slots));
    if (row.in_share) {
      // Nobody received anything: nobody fell short of a share of it.
      double value = row.entitled > 0 ? row.received / row.entitled : 1;
      ratio.metric.push_back(GaugeMetric(labels, value));
    }
    starved.metric.push_back(GaugeMetric(labels, row.starved ? 1 : 0));
  }
  MetricFamily weight =
      GaugeFamily("fairq_tenant_weight", "The tenant's configured weight.");
  for (const auto& [tenant, value] : view->weights) {
    weight.metric.push_back(GaugeMetric({{"tenant", tenant}}, value));
  }
  MetricFamily workers = GaugeFamily("fairq_workers", "Live workers.");
  MetricFamily slots =
      GaugeFamily("fairq_worker_slots", "Live worker slots (capacity).");
  for (const ScrapeView::Pool& pool : view->pools) {
    workers.metric.push_back(
        GaugeMetric({{"pool", pool.name}}, pool.state.workers));
    slots.metric.push_back(
        GaugeMetric({{"pool", pool.name}}, pool.state.slots));
  }
  for (MetricFamily* family :
       {&age, &jobs, &cap, &ratio, &starved, &weight, &workers, &slots}) {
    families.push_back(std::move(*family));
  }
  single("fairq_metrics_tenant_series",
         "Tenants with label series of their own (at most "
         "metrics.max_tenant_series).",
         view->tenant_series);
  return families;
}

}  // namespace fairq::metrics
