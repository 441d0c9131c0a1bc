// PrometheusMetrics: the Metrics hooks recorded in prometheus-cpp counters,
// histograms and summaries, plus the gauges a scrape computes from a
// snapshot of the broker. It is the Collectable that MetricsExporter
// serves; docs/metrics.md lists every metric.
//
// Threading: each hook runs on the thread metrics.h names. The per-tenant
// series tables (which tenant has its own label, the fair-share window)
// belong to the dispatcher thread: hooks and the snapshot visitor touch
// them, nothing else. Collect runs on the exporter's threads: it asks the
// dispatcher for a snapshot through the snapshot source, waits a bounded
// time, and reads only what the visitor handed back; the series themselves
// are prometheus-cpp's, which lock internally.
#ifndef FAIRQ_METRICS_PROMETHEUS_METRICS_H_
#define FAIRQ_METRICS_PROMETHEUS_METRICS_H_

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/summary.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/code_name.h"
#include "metrics/broker_state.h"
#include "metrics/fair_share.h"
#include "metrics/metrics.h"
#include "metrics/tenant_labels.h"

namespace fairq::metrics {

struct PrometheusOptions {
  // Tenants with label series of their own; the rest share "_other".
  uint32_t max_tenant_series = 100;
  // How long a labeled tenant must be idle before an active "_other"
  // tenant may take its slot.
  std::chrono::milliseconds idle_eviction{std::chrono::minutes(10)};
  // The trailing window of fairq_tenant_fair_share_ratio.
  std::chrono::milliseconds share_window{std::chrono::seconds(60)};
  // How long a scrape waits for the dispatcher's snapshot; past it the
  // scrape-time gauges are left out of that scrape.
  std::chrono::milliseconds snapshot_timeout{std::chrono::seconds(2)};
  // gRPC methods ("/package.Service/Method") with series of their own;
  // calls to others count under method="other".
  std::vector<std::string> rpc_methods;
};

// How a scrape reaches the rest of fairqd. Each is called on an exporter
// thread and must be thread-safe.
struct MetricsSources {
  // Runs `visit` on the dispatcher thread, then `finished`; or only
  // `finished` when the dispatcher cannot take it (full, shutting down).
  std::function<void(SnapshotVisitor visit, std::function<void()> finished)>
      snapshot;
  std::function<uint64_t()> queue_depth;  // commands waiting
  std::function<bool()> store_failed;
};

class PrometheusMetrics final : public Metrics, public prometheus::Collectable {
 public:
  explicit PrometheusMetrics(PrometheusOptions options);
  ~PrometheusMetrics() override;

  // REQUIRES: before the first scrape (the exporter starts after this).
  void SetSources(MetricsSources sources) { sources_ = std::move(sources); }

  // Metrics (see metrics.h for the thread of each).
  void NameTenant(uint32_t tenant, std::string_view name) override;
  void NamePool(uint32_t pool, std::string_view name) override;
  void Count(uint32_t tenant, uint32_t pool, JobEvent event) override;
  void Rejected(uint32_t tenant, Rejection reason) override;
  void LeaseStarted(uint32_t tenant, uint32_t pool, int64_t wait_ms,
                    int64_t now_ms) override;
  void LeaseAdopted(uint32_t tenant, uint32_t pool, int64_t now_ms) override;
  void LeaseEnded(uint32_t tenant, uint32_t pool, double runtime_s,
                  int64_t now_ms) override;
  void TurnDone(double seconds) override;
  void LeasedSpec(SpecSource source) override;
  void ReadAheadUnused(size_t specs) override;
  void ReportRepeated() override;
  void GroupCommitted(double seconds, size_t turns) override;
  void RpcFinished(std::string_view method, int code, double seconds) override;

  // prometheus::Collectable: every metric, the scrape-time gauges computed
  // from a fresh snapshot. Any thread but the dispatcher's.
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  // prometheus_scrape.cc
  struct ScrapeRow;
  struct ScrapeView;
  struct TenantInPool;
  // One tenant label (a tenant's own, or "_other") in one pool.
  struct PoolSeries {
    std::array<prometheus::Counter*, kJobEventCount> events{};
    prometheus::Counter* dispatched = nullptr;  // null: not created yet
    prometheus::Counter* worker_seconds = nullptr;
    prometheus::Histogram* wait = nullptr;
    prometheus::Summary* wait_window = nullptr;
  };
  struct SlotSeries {
    std::vector<PoolSeries> pools;  // by pool id
    std::array<prometheus::Counter*, kRejectionCount> rejections{};
  };
  struct RpcSeries {
    std::string method;  // the label value
    prometheus::Histogram* duration = nullptr;
    std::array<std::atomic<prometheus::Counter*>, kCanonicalCodeNames.size()>
        calls{};  // by code
  };
  template <class T>
  using Family = prometheus::Family<T>;

  // Dispatcher thread.
  PoolSeries& Series(uint32_t tenant, uint32_t pool) {
    uint32_t slot = labels_.Touch(tenant);
    SlotSeries& series = slots_[slot];
    if (pool < series.pools.size() && series.pools[pool].dispatched) {
      return series.pools[pool];
    }
    return CreateSeries(slot, pool);
  }
  PoolSeries& CreateSeries(uint32_t slot, uint32_t pool);
  const std::string& SlotName(uint32_t slot) const;
  const std::string& PoolName(uint32_t pool) const;
  void DropSeries(uint32_t slot);
  ScrapeView Digest(const BrokerState& state, int64_t now_ms);
  std::map<uint32_t, std::vector<TenantInPool>> TenantsByPool(
      const BrokerState& state) const;
  void FoldPool(const BrokerState& state, uint32_t pool,
                const std::vector<TenantInPool>& tenants,
                ScrapeView& view) const;
  ScrapeRow& RowFor(ScrapeView& view, uint32_t slot, uint32_t pool) const;
  // Exporter threads.
  std::optional<ScrapeView> Snapshot() const;
  void AppendTenantGauges(const ScrapeView& view,
                          std::vector<prometheus::MetricFamily>& out) const;
  void AppendPoolGauges(const ScrapeView& view,
                        std::vector<prometheus::MetricFamily>& out) const;
  // gRPC threads.
  RpcSeries& RpcOf(std::string_view method);

  const PrometheusOptions options_;
  MetricsSources sources_;
  std::shared_ptr<prometheus::Registry> registry_;

  Family<prometheus::Counter>* job_events_[kJobEventCount];
  Family<prometheus::Counter>& dispatched_;
  Family<prometheus::Counter>& worker_seconds_;
  Family<prometheus::Counter>& rejections_;
  Family<prometheus::Histogram>& wait_;
  Family<prometheus::Summary>& wait_window_;
  prometheus::Histogram& turn_;
  prometheus::Counter* leased_specs_[kSpecSourceCount];
  prometheus::Counter& read_ahead_unused_;
  prometheus::Counter& repeated_reports_;
  prometheus::Histogram& store_write_;
  prometheus::Histogram& store_group_;
  Family<prometheus::Counter>& rpc_calls_;
  Family<prometheus::Histogram>& rpc_duration_;
  prometheus::Counter& snapshot_failures_;

  // Dispatcher thread.
  std::vector<std::string> tenant_names_;  // by tenant id
  std::vector<std::string> pool_names_;    // by pool id
  TenantLabels labels_;
  std::vector<SlotSeries> slots_;  // by slot; [kOther] is "_other"
  ShareWindow window_;

  // Built in the constructor, read-only after: sorted by the full method.
  std::vector<std::pair<std::string, std::unique_ptr<RpcSeries>>> rpcs_;
  std::unique_ptr<RpcSeries> other_rpc_;
  std::mutex rpc_mu_;  // creating a (method, code) counter
};

}  // namespace fairq::metrics

#endif  // FAIRQ_METRICS_PROMETHEUS_METRICS_H_
