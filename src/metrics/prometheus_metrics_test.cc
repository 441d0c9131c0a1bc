#include "metrics/prometheus_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <chrono>
#include <sstream>

#include "metrics/exposition_test_util.h"

namespace fairq::metrics {
namespace {

int64_t UnixNowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch())
      .count();
}

// A PrometheusMetrics whose "dispatcher" is the test thread: a scrape's
// snapshot visits `state` at `now_ms` at once.
class PrometheusMetricsTest : public ::testing::Test {
 protected:
  void Make(uint32_t max_tenant_series,
            std::vector<std::string> rpc_methods = {}) {
    PrometheusOptions options;
    options.max_tenant_series = max_tenant_series;
    options.rpc_methods = std::move(rpc_methods);
    metrics_ = std::make_shared<PrometheusMetrics>(options);
    metrics_->SetSources(
        {[this](SnapshotVisitor visit, std::function<void()> finished) {
           visit(state_, now_ms_);
           finished();
         },
         [] { return uint64_t{7}; }, [] { return false; }});
  }

  void AddTenants(std::initializer_list<const char*> names) {
    for (const char* name : names) {
      metrics_->NameTenant(static_cast<uint32_t>(state_.tenants.size()), name);
      state_.tenants.push_back(
          {1, static_cast<uint32_t>(state_.org_weights.size()), false});
      state_.org_weights.push_back(1);
    }
  }

  Samples Scrape() {
    std::ostringstream text;
    prometheus::TextSerializer().Serialize(text, metrics_->Collect());
    text_ = text.str();
    return ParseExposition(text_);
  }

  static std::string TP(const std::string& name, const std::string& tenant,
                        const std::string& pool = "default") {
    return Key(name, {{"tenant", tenant}, {"pool", pool}});
  }

  std::shared_ptr<PrometheusMetrics> metrics_;
  BrokerState state_;
  int64_t now_ms_ = UnixNowMs();
  std::string text_;  // the last scrape, for failure messages
};

TEST_F(PrometheusMetricsTest, CountersByTenantAndPool) {
  Make(10);
  AddTenants({"a", "b"});
  metrics_->NamePool(0, "default");
  metrics_->NamePool(1, "gpu");
  for (int i = 0; i < 3; ++i) metrics_->Count(0, 0, JobEvent::kEnqueued);
  metrics_->Count(1, 1, JobEvent::kEnqueued);
  metrics_->LeaseStarted(0, 0, 5, now_ms_);
  metrics_->LeaseEnded(0, 0, 1.5, now_ms_ + 1500);
  metrics_->Count(0, 0, JobEvent::kCompleted);
  metrics_->Count(1, 1, JobEvent::kFailed);
  metrics_->Count(1, 1, JobEvent::kRetried);
  metrics_->Count(1, 1, JobEvent::kLeaseExpired);
  metrics_->Count(1, 1, JobEvent::kDead);
  metrics_->Count(1, 1, JobEvent::kCanceled);
  metrics_->Rejected(0, Rejection::kRateLimited);
  metrics_->Rejected(kNoTenant, Rejection::kUnknownTenant);
  metrics_->Rejected(kNoTenant, Rejection::kTenantLimit);
  Samples s = Scrape();
  EXPECT_EQ(Value(s, TP("fairq_jobs_enqueued_total", "a")), 3) << text_;
  EXPECT_EQ(Value(s, TP("fairq_jobs_enqueued_total", "b", "gpu")), 1);
  EXPECT_EQ(Value(s, TP("fairq_jobs_dispatched_total", "a")), 1);
  EXPECT_EQ(Value(s, TP("fairq_jobs_completed_total", "a")), 1);
  EXPECT_EQ(Value(s, TP("fairq_worker_seconds_total", "a")), 1.5);
  for (const char* event :
       {"failed", "retried", "lease_expired", "dead", "canceled"}) {
    EXPECT_EQ(
        Value(s, TP(std::string("fairq_jobs_") + event + "_total", "b", "gpu")),
        1)
        << event;
  }
  EXPECT_EQ(Value(s, TP("fairq_jobs_failed_total", "a")), 0);
  EXPECT_EQ(Value(s, Key("fairq_admission_rejections_total",
                         {{"tenant", "a"}, {"reason", "rate_limited"}})),
            1);
  EXPECT_EQ(Value(s, Key("fairq_admission_rejections_total",
                         {{"tenant", "_other"}, {"reason", "unknown_tenant"}})),
            1);
  EXPECT_EQ(Value(s, Key("fairq_admission_rejections_total",
                         {{"tenant", "_other"}, {"reason", "tenant_limit"}})),
            1);
  EXPECT_EQ(Value(s, "fairq_dispatcher_queue_depth"), 7);
  EXPECT_EQ(Value(s, "fairq_store_failed"), 0);
}

TEST_F(PrometheusMetricsTest, TenantsPastTheCapAddUpUnderOther) {
  Make(2);
  AddTenants({"a", "b", "c", "d"});
  metrics_->NamePool(0, "default");
  for (uint32_t t = 0; t < 4; ++t) {
    for (uint32_t n = 0; n <= t; ++n)
      metrics_->Count(t, 0, JobEvent::kEnqueued);
  }
  state_.rows = {{0, 0, 1, 0, 0, 0, now_ms_ - 1000, std::nullopt, 0},
                 {1, 0, 2, 0, 0, 0, now_ms_ - 2000, std::nullopt, 0},
                 {2, 0, 3, 1, 0, 0, now_ms_ - 3000, std::nullopt, 0},
                 {3, 0, 4, 0, 2, 5, now_ms_ - 4000, std::nullopt, 0}};
  Samples s = Scrape();
  EXPECT_EQ(Value(s, TP("fairq_jobs_enqueued_total", "a")), 1) << text_;
  EXPECT_EQ(Value(s, TP("fairq_jobs_enqueued_total", "b")), 2);
  EXPECT_EQ(Value(s, TP("fairq_jobs_enqueued_total", "_other")), 3 + 4);
  EXPECT_EQ(Value(s, TP("fairq_jobs_enqueued_total", "c")), -1);
  auto jobs = [&](const char* tenant, const char* state) {
    return Value(
        s, Key("fairq_jobs",
               {{"tenant", tenant}, {"pool", "default"}, {"state", state}}));
  };
  EXPECT_EQ(jobs("_other", "ready"), 7);
  EXPECT_EQ(jobs("_other", "scheduled"), 1);
  EXPECT_EQ(jobs("_other", "leased"), 2);
  EXPECT_EQ(jobs("_other", "dead"), 5);
  EXPECT_EQ(jobs("a", "ready"), 1);
  // _other's oldest job is the oldest of its tenants' (d's, 4 s).
  EXPECT_GE(Value(s, TP("fairq_oldest_ready_age_seconds", "_other")), 4);
  EXPECT_LT(Value(s, TP("fairq_oldest_ready_age_seconds", "a")), 4);
  EXPECT_EQ(Value(s, "fairq_metrics_tenant_series"), 2);
  EXPECT_EQ(Value(s, Key("fairq_tenant_weight", {{"tenant", "a"}})), 1);
  EXPECT_EQ(Value(s, Key("fairq_tenant_weight", {{"tenant", "_other"}})), -1);
}

TEST_F(PrometheusMetricsTest, IdleTenantIsEvictedAndABusyOtherTenantPromoted) {
  Make(1);
  AddTenants({"idle", "busy"});
  metrics_->NamePool(0, "default");
  metrics_->Count(0, 0, JobEvent::kEnqueued);
  metrics_->Count(1, 0, JobEvent::kEnqueued);
  Samples s = Scrape();
  EXPECT_EQ(Value(s, TP("fairq_jobs_enqueued_total", "idle")), 1) << text_;
  EXPECT_EQ(Value(s, TP("fairq_jobs_enqueued_total", "_other")), 1);

  // "busy" keeps enqueueing; "idle" does nothing for the eviction time.
  metrics_->Count(1, 0, JobEvent::kEnqueued);
  now_ms_ += std::chrono::milliseconds(std::chrono::minutes(10)).count();
  s = Scrape();
  // The slot changed hands at this scrape: idle's series are gone, and
  // busy's own series start with its next event.
  EXPECT_EQ(Value(s, TP("fairq_jobs_enqueued_total", "idle")), -1) << text_;
  metrics_->Count(1, 0, JobEvent::kEnqueued);
  s = Scrape();
  EXPECT_EQ(Value(s, TP("fairq_jobs_enqueued_total", "busy")), 1) << text_;
  // What busy did while in _other stays in _other's total.
  EXPECT_EQ(Value(s, TP("fairq_jobs_enqueued_total", "_other")), 2);
  EXPECT_EQ(Value(s, "fairq_metrics_tenant_series"), 1);
}

// Review case (a): an idle tenant's dead letters move with it into _other
// when a busy tenant takes its label, so _other's DEAD gauge jumps though
// nothing died. That move is by design (the busiest keep their series);
// FairqDeadLettersGrowing leaves _other's gauge out for it
// (deploy/prometheus/tests/alerts_test.yaml has the same story).
TEST_F(PrometheusMetricsTest, EvictionMovesATenantsDeadLettersIntoOther) {
  Make(1);
  AddTenants({"a", "b"});
  metrics_->NamePool(0, "default");
  for (int i = 0; i < 5; ++i) metrics_->Count(0, 0, JobEvent::kDead);
  metrics_->Count(1, 0, JobEvent::kEnqueued);  // _other: the label is a's
  state_.rows = {{0, 0, 0, 0, 0, 5, std::nullopt, std::nullopt, 0},
                 {1, 0, 1, 0, 0, 0, now_ms_, std::nullopt, 0}};
  auto dead = [&](const Samples& s, const char* tenant) {
    return Value(
        s, Key("fairq_jobs",
               {{"tenant", tenant}, {"pool", "default"}, {"state", "dead"}}));
  };
  Samples s = Scrape();
  EXPECT_EQ(dead(s, "a"), 5) << text_;
  EXPECT_EQ(dead(s, "_other"), 0);

  // b stays busy; a has had no event for the eviction time.
  metrics_->Count(1, 0, JobEvent::kEnqueued);
  now_ms_ += std::chrono::milliseconds(std::chrono::minutes(10)).count();
  s = Scrape();
  EXPECT_EQ(dead(s, "a"), -1) << text_;
  EXPECT_EQ(dead(s, "_other"), 5);
  EXPECT_EQ(dead(s, "b"), 0);
  EXPECT_EQ(Value(s, TP("fairq_jobs_dead_total", "a")), -1);
  EXPECT_EQ(Value(s, "fairq_metrics_tenant_series"), 1);
}

// Review case (b): after a restart a tenant whose only jobs are DEAD has
// had no event, yet it has a row, so it takes a free label at once instead
// of showing its dead letters under _other until its next event.
TEST_F(PrometheusMetricsTest, ATenantWithOnlyDeadJobsTakesAFreeLabel) {
  Make(100);
  AddTenants({"a"});
  metrics_->NamePool(0, "default");
  state_.rows = {{0, 0, 0, 0, 0, 5, std::nullopt, std::nullopt, 0}};
  Samples s = Scrape();
  auto jobs = [&](const char* tenant, const char* state) {
    return Value(
        s, Key("fairq_jobs",
               {{"tenant", tenant}, {"pool", "default"}, {"state", state}}));
  };
  EXPECT_EQ(jobs("a", "dead"), 5) << text_;
  EXPECT_EQ(jobs("a", "ready"), 0);
  EXPECT_EQ(jobs("_other", "dead"), -1);
  EXPECT_EQ(Value(s, "fairq_metrics_tenant_series"), 1);
  EXPECT_EQ(Value(s, Key("fairq_tenant_weight", {{"tenant", "a"}})), 1);
}

TEST_F(PrometheusMetricsTest, WaitHistogramAndWindowQuantiles) {
  Make(10);
  AddTenants({"a"});
  metrics_->NamePool(0, "default");
  // Waits of 1..100 ms.
  for (int ms = 1; ms <= 100; ++ms) metrics_->LeaseStarted(0, 0, ms, now_ms_);
  Samples s = Scrape();
  auto bucket = [&](const char* le) {
    return Value(s, Key("fairq_queue_wait_seconds_bucket",
                        {{"tenant", "a"}, {"pool", "default"}, {"le", le}}));
  };
  EXPECT_EQ(bucket("0.001"), 1) << text_;
  EXPECT_EQ(bucket("0.01"), 10);
  EXPECT_EQ(bucket("0.05"), 50);
  EXPECT_EQ(bucket("0.1"), 100);
  EXPECT_EQ(bucket("+Inf"), 100);
  EXPECT_EQ(Value(s, TP("fairq_queue_wait_seconds_count", "a")), 100);
  EXPECT_NEAR(Value(s, TP("fairq_queue_wait_seconds_sum", "a")), 5.05, 1e-9);
  auto quantile = [&](const char* q) {
    return Value(s,
                 Key("fairq_queue_wait_window_seconds",
                     {{"tenant", "a"}, {"pool", "default"}, {"quantile", q}}));
  };
  // Within each quantile's tolerated rank error (5%, 1%, 0.1%).
  EXPECT_NEAR(quantile("0.5"), 0.050, 0.0051);
  EXPECT_NEAR(quantile("0.9"), 0.090, 0.0011);
  EXPECT_NEAR(quantile("0.99"), 0.099, 0.0011);
  EXPECT_EQ(Value(s, TP("fairq_queue_wait_window_seconds_count", "a")), 100);
}

TEST_F(PrometheusMetricsTest, ScrapeTimeGaugesForTenantsAndPools) {
  Make(10);
  AddTenants({"a", "b"});
  metrics_->NamePool(0, "default");
  state_.tenants[0].weight = 3;
  state_.org_weights[0] = 3;
  state_.pools = {{2, 8, 3, 9.6}};
  // a (weight 3, cap 4) holds 3 of 8 slots with jobs ready: its target is
  // min(cap 4, 3/4 of 8), so it is starved. b holds 5, nothing ready.
  state_.rows = {{0, 0, 10, 0, 3, 0, now_ms_ - 5000, 4, 0},
                 {1, 0, 0, 0, 5, 0, std::nullopt, std::nullopt, 0}};
  Samples s = Scrape();
  EXPECT_EQ(Value(s, TP("fairq_oldest_ready_age_seconds", "a")), 5) << text_;
  EXPECT_EQ(Value(s, TP("fairq_oldest_ready_age_seconds", "b")), 0);
  EXPECT_EQ(Value(s, TP("fairq_tenant_starved", "a")), 1);
  EXPECT_EQ(Value(s, TP("fairq_tenant_starved", "b")), 0);
  EXPECT_EQ(Value(s, TP("fairq_tenant_cap_slots", "a")), 4);
  EXPECT_EQ(Value(s, TP("fairq_tenant_cap_slots", "b")), -1);
  EXPECT_EQ(Value(s, Key("fairq_tenant_weight", {{"tenant", "a"}})), 3);
  EXPECT_EQ(Value(s, Key("fairq_workers", {{"pool", "default"}})), 2);
  EXPECT_EQ(Value(s, Key("fairq_worker_slots", {{"pool", "default"}})), 8);
  EXPECT_EQ(Value(s, Key("fairq_pool_tenants", {{"pool", "default"}})), 3);
  EXPECT_EQ(Value(s, Key("fairq_pool_floor_slots", {{"pool", "default"}})),
            9.6);
}

// A paused tenant's READY jobs wait by an operator's choice: its oldest
// age reads 0 and pages nobody (it grew, and the critical alert fired after
// every pause of five minutes). Its jobs still count in the job gauges.
TEST_F(PrometheusMetricsTest, APausedTenantsJobsAreLeftOutOfTheOldestAge) {
  Make(10);
  AddTenants({"a", "b"});
  metrics_->NamePool(0, "default");
  state_.tenants[0].paused = true;
  state_.rows = {{0, 0, 4, 0, 0, 0, now_ms_ - 600'000, std::nullopt, 0},
                 {1, 0, 1, 0, 0, 0, now_ms_ - 2000, std::nullopt, 0}};
  Samples s = Scrape();
  EXPECT_EQ(Value(s, TP("fairq_oldest_ready_age_seconds", "a")), 0) << text_;
  EXPECT_EQ(Value(s, TP("fairq_oldest_ready_age_seconds", "b")), 2);
  EXPECT_EQ(
      Value(s, Key("fairq_jobs",
                   {{"tenant", "a"}, {"pool", "default"}, {"state", "ready"}})),
      4);
  // What the age leaves out is shown: a dashboard or an alert can tell a
  // paused tenant from an idle one.
  EXPECT_EQ(Value(s, Key("fairq_tenant_paused", {{"tenant", "a"}})), 1);
  EXPECT_EQ(Value(s, Key("fairq_tenant_paused", {{"tenant", "b"}})), 0);
}

// After the wall clock steps back, broker time runs ahead of it for a while
// (server/broker/broker_clock.h); a job's age is still broker time's.
TEST_F(PrometheusMetricsTest, AgesAreTakenInTheBrokersTime) {
  Make(10);
  AddTenants({"a"});
  metrics_->NamePool(0, "default");
  now_ms_ += 3'600'000;
  state_.rows = {{0, 0, 1, 0, 0, 0, now_ms_ - 7000, std::nullopt, 0}};
  Samples s = Scrape();
  EXPECT_EQ(Value(s, TP("fairq_oldest_ready_age_seconds", "a")), 7) << text_;
}

TEST_F(PrometheusMetricsTest, FairShareRatioOverTheWindow) {
  Make(10);
  AddTenants({"a", "b", "c"});
  metrics_->NamePool(0, "default");
  state_.pools = {{1, 4}};
  // a holds 3 slots and b 1 for 10 s; c waits with nothing. Equal weights:
  // 40 slot-seconds, 13.33 each entitled.
  for (int i = 0; i < 3; ++i) metrics_->LeaseStarted(0, 0, 0, now_ms_);
  metrics_->LeaseStarted(1, 0, 0, now_ms_);
  now_ms_ += 10'000;
  state_.rows = {{0, 0, 0, 0, 3, 0, std::nullopt, std::nullopt, 0},
                 {1, 0, 0, 0, 1, 0, std::nullopt, std::nullopt, 0},
                 {2, 0, 5, 0, 0, 0, now_ms_, std::nullopt, 0}};
  Samples s = Scrape();
  EXPECT_NEAR(Value(s, TP("fairq_tenant_fair_share_ratio", "a")),
              30 / (40.0 / 3), 1e-9)
      << text_;
  EXPECT_NEAR(Value(s, TP("fairq_tenant_fair_share_ratio", "b")),
              10 / (40.0 / 3), 1e-9);
  EXPECT_EQ(Value(s, TP("fairq_tenant_fair_share_ratio", "c")), 0);
  EXPECT_EQ(Value(s, TP("fairq_tenant_starved", "c")), 1);
}

TEST_F(PrometheusMetricsTest, RpcCallsByMethodAndCode) {
  Make(10, {"/fairq.v1.Producer/Enqueue"});
  metrics_->RpcFinished("/fairq.v1.Producer/Enqueue", 0, 0.001);
  metrics_->RpcFinished("/fairq.v1.Producer/Enqueue", 0, 0.002);
  metrics_->RpcFinished("/fairq.v1.Producer/Enqueue", 8, 0.003);
  metrics_->RpcFinished("/made.up/Method", 12, 0.004);
  Samples s = Scrape();
  auto calls = [&](const char* method, const char* code) {
    return Value(s, Key("fairq_rpc_requests_total",
                        {{"method", method}, {"code", code}}));
  };
  EXPECT_EQ(calls("fairq.v1.Producer/Enqueue", "OK"), 2) << text_;
  EXPECT_EQ(calls("fairq.v1.Producer/Enqueue", "RESOURCE_EXHAUSTED"), 1);
  EXPECT_EQ(calls("other", "UNIMPLEMENTED"), 1);
  EXPECT_EQ(Value(s, Key("fairq_rpc_duration_seconds_count",
                         {{"method", "fairq.v1.Producer/Enqueue"}})),
            3);
}

TEST_F(PrometheusMetricsTest, BrokerWideHistogramsAndBuildInfo) {
  Make(10);
  metrics_->TurnDone(0.0002);
  metrics_->GroupCommitted(0.004, 3);
  metrics_->LeasedSpec(SpecSource::kReadAhead);
  metrics_->LeasedSpec(SpecSource::kReadAhead);
  metrics_->LeasedSpec(SpecSource::kStore);
  metrics_->ReadAheadUnused(3);
  metrics_->ReportRepeated();
  metrics_->ReportRepeated();
  Samples s = Scrape();
  EXPECT_EQ(Value(s, "fairq_dispatcher_turn_seconds_count"), 1) << text_;
  auto specs = [&](const char* source) {
    return Value(s, Key("fairq_leased_specs_total", {{"source", source}}));
  };
  EXPECT_EQ(specs("enqueue_cache"), 0);
  EXPECT_EQ(specs("read_ahead"), 2);
  EXPECT_EQ(specs("store"), 1);
  EXPECT_EQ(Value(s, "fairq_read_ahead_unused_total"), 3);
  EXPECT_EQ(Value(s, "fairq_repeated_reports_total"), 2);
  EXPECT_EQ(
      Value(s, Key("fairq_store_write_seconds_bucket", {{"le", "0.005"}})), 1);
  EXPECT_EQ(Value(s, Key("fairq_store_write_group_size_bucket", {{"le", "2"}})),
            0);
  EXPECT_EQ(Value(s, Key("fairq_store_write_group_size_bucket", {{"le", "4"}})),
            1);
  int build_info = 0;
  for (const auto& [key, value] : s) {
    if (key.starts_with("fairq_build_info{") && value == 1) ++build_info;
  }
  EXPECT_EQ(build_info, 1);
}

TEST_F(PrometheusMetricsTest, NoSnapshotInTimeLeavesScrapeGaugesOut) {
  PrometheusOptions options;
  options.snapshot_timeout = std::chrono::milliseconds(1);
  metrics_ = std::make_shared<PrometheusMetrics>(options);
  std::function<void()> never_called;
  metrics_->SetSources({[&](SnapshotVisitor, std::function<void()> finished) {
                          never_called = std::move(
                              finished);  // a dispatcher that is stuck
                        },
                        [] { return uint64_t{3}; }, [] { return true; }});
  Samples s = Scrape();
  EXPECT_EQ(Value(s, "fairq_metrics_snapshot_failures_total"), 1) << text_;
  EXPECT_EQ(Value(s, "fairq_metrics_tenant_series"), -1);
  // What needs no dispatcher is still there.
  EXPECT_EQ(Value(s, "fairq_store_failed"), 1);
  EXPECT_EQ(Value(s, "fairq_dispatcher_queue_depth"), 3);
}

}  // namespace
}  // namespace fairq::metrics
