// PrometheusMetrics at scrape time: the snapshot asked of the dispatcher,
// folded into rows by tenant label there (Digest), and turned into gauge
// families on the exporter thread (Collect).
#include <algorithm>
#include <condition_variable>
#include <map>
#include <utility>

#include "metrics/prometheus_metrics.h"

namespace fairq::metrics {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

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

}  // namespace

// One tenant label in one pool, as a scrape exports it.
struct PrometheusMetrics::ScrapeRow {
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

// What one scrape exports beyond the registry.
struct PrometheusMetrics::ScrapeView {
  struct Pool {
    std::string name;
    PoolState state;
  };
  std::vector<ScrapeRow> rows;
  std::map<std::pair<uint32_t, uint32_t>, size_t> row_of;  // (slot, pool)
  struct Tenant {
    std::string name;
    double weight = 0;
    bool paused = false;
  };
  std::vector<Tenant> tenants;  // those with a label of their own
  std::vector<Pool> pools;
  uint32_t tenant_series = 0;
  // The dispatcher's time at the snapshot. Ages are taken against it, not
  // against this thread's wall clock: the oldest-ready times are broker
  // time, which runs ahead of the wall clock for a while after the wall
  // clock steps back (server/broker/broker_clock.h).
  int64_t taken_ms = 0;
};

// A tenant with jobs in a pool now, or slot-seconds in it over the window.
struct PrometheusMetrics::TenantInPool {
  uint32_t tenant = 0;
  const TenantPoolState* row = nullptr;  // null: no jobs now
  double received = 0;
};

// --- Dispatcher thread -------------------------------------------------------

PrometheusMetrics::ScrapeRow& PrometheusMetrics::RowFor(ScrapeView& view,
                                                        uint32_t slot,
                                                        uint32_t pool) const {
  auto [it, added] =
      view.row_of.emplace(std::pair(slot, pool), view.rows.size());
  if (added) {
    view.rows.emplace_back();
    view.rows.back().tenant = SlotName(slot);
    view.rows.back().pool = PoolName(pool);
  }
  return view.rows[it->second];
}

std::map<uint32_t, std::vector<PrometheusMetrics::TenantInPool>>
PrometheusMetrics::TenantsByPool(const BrokerState& state) const {
  std::map<std::pair<uint32_t, uint32_t>, TenantInPool> pairs;  // pool, tenant
  for (const TenantPoolState& row : state.rows) {
    if (row.tenant < state.tenants.size()) {
      TenantInPool& entry = pairs[{row.pool, row.tenant}];
      entry.tenant = row.tenant;
      entry.row = &row;
    }
  }
  window_.ForEachReceived([&](uint32_t tenant, uint32_t pool, double got) {
    if (tenant < state.tenants.size()) {
      TenantInPool& entry = pairs[{pool, tenant}];
      entry.tenant = tenant;
      entry.received = got;
    }
  });
  std::map<uint32_t, std::vector<TenantInPool>> by_pool;
  for (const auto& [key, entry] : pairs) by_pool[key.first].push_back(entry);
  return by_pool;
}

// Works out one pool's shares per tenant (docs/metrics.md, "Fair share")
// and adds each tenant into its label's row.
void PrometheusMetrics::FoldPool(const BrokerState& state, uint32_t pool,
                                 const std::vector<TenantInPool>& tenants,
                                 ScrapeView& view) const {
  std::vector<ShareInput> now_inputs, window_inputs;
  double total = 0;
  for (const TenantInPool& t : tenants) {
    const TenantState& settings = state.tenants[t.tenant];
    bool runs =
        t.row && ((t.row->ready > 0 && !settings.paused) || t.row->leased > 0);
    now_inputs.push_back({settings.weight, settings.org, runs});
    window_inputs.push_back(
        {settings.weight, settings.org, runs || t.received > 0});
    total += t.received;
  }
  std::vector<double> now_shares = PoolShares(now_inputs, state.org_weights);
  std::vector<double> window_shares =
      PoolShares(window_inputs, state.org_weights);
  uint32_t slots = pool < state.pools.size() ? state.pools[pool].slots : 0;
  for (size_t i = 0; i < tenants.size(); ++i) {
    const TenantInPool& t = tenants[i];
    uint32_t slot = labels_.SlotOf(t.tenant);
    ScrapeRow& out = RowFor(view, slot, pool);
    if (const TenantPoolState* row = t.row) {
      out.ready += row->ready;
      out.scheduled += row->scheduled;
      out.leased += row->leased;
      out.dead += row->dead;
      // A paused tenant's jobs wait by an operator's choice: left out of
      // the age that pages (as out of `starved` and the fair share), which
      // would otherwise page for every pause and, in `_other`, hide the
      // tenants beside it. fairqctl stats still shows their age.
      const bool paused = state.tenants[t.tenant].paused;
      if (!paused && row->oldest_ready_ms &&
          (!out.oldest_ready_ms ||
           *row->oldest_ready_ms < *out.oldest_ready_ms)) {
        out.oldest_ready_ms = row->oldest_ready_ms;
      }
      if (slot != TenantLabels::kOther) out.cap_slots = row->cap_slots;
      uint64_t runnable = paused ? 0 : row->ready;
      out.starved |= Starved(runnable, row->leased, now_shares[i], slots,
                             row->cap_slots, row->floor_slots);
    }
    if (window_inputs[i].active) {
      out.in_share = true;
      out.received += t.received;
      out.entitled += total * window_shares[i];
    }
  }
}

// The broker's state at a scrape, folded into rows by tenant label: the
// labels are rebalanced first, then each pool's tenants are summed into
// their labels' rows.
PrometheusMetrics::ScrapeView PrometheusMetrics::Digest(
    const BrokerState& state, int64_t now_ms) {
  using Jobs = TenantLabels::Jobs;
  std::vector<Jobs> jobs(state.tenants.size(), Jobs::kNone);
  for (const TenantPoolState& row : state.rows) {
    if (row.tenant >= jobs.size()) continue;
    if (row.ready + row.scheduled + row.leased > 0) {
      jobs[row.tenant] = Jobs::kLive;
    } else if (row.dead > 0 && jobs[row.tenant] == Jobs::kNone) {
      jobs[row.tenant] = Jobs::kDeadOnly;
    }
  }
  for (uint32_t slot : labels_.Rebalance(jobs, now_ms)) DropSeries(slot);
  window_.Advance(now_ms);

  ScrapeView view;
  // Labels keep showing (as zeros) in every pool they have series in.
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
    for (uint32_t pool = 0; pool < slots_[slot].pools.size(); ++pool) {
      if (slots_[slot].pools[pool].dispatched) RowFor(view, slot, pool);
    }
  }
  for (const auto& [pool, tenants] : TenantsByPool(state)) {
    FoldPool(state, pool, tenants, view);
  }
  for (uint32_t slot = 1; slot <= labels_.max_labeled(); ++slot) {
    uint32_t tenant = labels_.holder(slot);
    if (tenant < state.tenants.size()) {
      view.tenants.push_back({SlotName(slot), state.tenants[tenant].weight,
                              state.tenants[tenant].paused});
    }
  }
  for (uint32_t pool = 0; pool < state.pools.size(); ++pool) {
    view.pools.push_back({PoolName(pool), state.pools[pool]});
  }
  view.tenant_series = labels_.labeled();
  view.taken_ms = now_ms;
  return view;
}

// --- Exporter threads --------------------------------------------------------

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

void PrometheusMetrics::AppendTenantGauges(
    const ScrapeView& view, std::vector<MetricFamily>& families) const {
  MetricFamily age =
      GaugeFamily("fairq_oldest_ready_age_seconds",
                  "Age of the oldest READY job at scrape time, paused "
                  "tenants' left out; 0 when none.");
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
  for (const ScrapeRow& row : view.rows) {
    std::vector<ClientMetric::Label> labels = {{"tenant", row.tenant},
                                               {"pool", row.pool}};
    int64_t age_ms =
        row.oldest_ready_ms ? view.taken_ms - *row.oldest_ready_ms : 0;
    age.metric.push_back(GaugeMetric(
        labels, static_cast<double>(std::max<int64_t>(0, age_ms)) / 1000));
    for (auto [state, count] :
         {std::pair{"ready", row.ready}, std::pair{"scheduled", row.scheduled},
          std::pair{"leased", row.leased}, std::pair{"dead", row.dead}}) {
      std::vector<ClientMetric::Label> with_state = labels;
      with_state.push_back({"state", state});
      jobs.metric.push_back(
          GaugeMetric(std::move(with_state), static_cast<double>(count)));
    }
    if (row.cap_slots) {
      cap.metric.push_back(GaugeMetric(labels, *row.cap_slots));
    }
    if (row.in_share) {
      // Nobody received anything: nobody fell short of a share of it.
      double value = row.entitled > 0 ? row.received / row.entitled : 1;
      ratio.metric.push_back(GaugeMetric(labels, value));
    }
    starved.metric.push_back(GaugeMetric(labels, row.starved ? 1 : 0));
  }
  MetricFamily weight =
      GaugeFamily("fairq_tenant_weight", "The tenant's configured weight.");
  MetricFamily paused = GaugeFamily(
      "fairq_tenant_paused",
      "1 while an operator has the tenant paused (its jobs wait, and are "
      "left out of the oldest-job age).");
  for (const ScrapeView::Tenant& tenant : view.tenants) {
    weight.metric.push_back(
        GaugeMetric({{"tenant", tenant.name}}, tenant.weight));
    paused.metric.push_back(
        GaugeMetric({{"tenant", tenant.name}}, tenant.paused ? 1 : 0));
  }
  for (MetricFamily* family :
       {&age, &jobs, &cap, &ratio, &starved, &weight, &paused}) {
    families.push_back(std::move(*family));
  }
}

void PrometheusMetrics::AppendPoolGauges(
    const ScrapeView& view, std::vector<MetricFamily>& families) const {
  MetricFamily workers = GaugeFamily("fairq_workers", "Live workers.");
  MetricFamily slots =
      GaugeFamily("fairq_worker_slots", "Live worker slots (capacity).");
  MetricFamily tenants = GaugeFamily(
      "fairq_pool_tenants",
      "Tenants holding scheduling state in the pool (used it since the "
      "start).");
  MetricFamily floors =
      GaugeFamily("fairq_pool_floor_slots",
                  "Floors of the tenants active in the pool, in slots; above "
                  "fairq_worker_slots they cannot all be met.");
  for (const ScrapeView::Pool& pool : view.pools) {
    workers.metric.push_back(
        GaugeMetric({{"pool", pool.name}}, pool.state.workers));
    slots.metric.push_back(
        GaugeMetric({{"pool", pool.name}}, pool.state.slots));
    tenants.metric.push_back(
        GaugeMetric({{"pool", pool.name}}, pool.state.tenants));
    floors.metric.push_back(
        GaugeMetric({{"pool", pool.name}}, pool.state.floor_slots));
  }
  for (MetricFamily* family : {&workers, &slots, &tenants, &floors}) {
    families.push_back(std::move(*family));
  }
  families.push_back(
      GaugeFamily("fairq_metrics_tenant_series",
                  "Tenants with label series of their own (at most "
                  "metrics.max_tenant_series)."));
  families.back().metric.push_back(GaugeMetric({}, view.tenant_series));
}

std::vector<MetricFamily> PrometheusMetrics::Collect() const {
  std::optional<ScrapeView> view = Snapshot();
  std::vector<MetricFamily> families = registry_->Collect();
  auto single = [&](std::string name, std::string help, double value) {
    families.push_back(GaugeFamily(std::move(name), std::move(help)));
    families.back().metric.push_back(GaugeMetric({}, value));
  };
  // These need no dispatcher, so they are there even when it is stuck.
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
  if (view) {
    AppendTenantGauges(*view, families);
    AppendPoolGauges(*view, families);
  }
  return families;
}

}  // namespace fairq::metrics
