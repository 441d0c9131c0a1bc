// /metrics of a real fairqd, scraped over HTTP after a known workload: the
// oldest-job age grows while a job waits, wait percentiles show a delay the
// test put in, counters equal the operations done (a repeated report
// included), every name exposed is in tests/deploy/metric_names.txt, and
// tenants past the cardinality cap add up under tenant="_other"
// (docs/metrics.md).
//
// Each test starts its own fairqd with its exporter on 127.0.0.1:0. Time
// passes on the daemon's own clock (LetTimePass, a bounded long poll); the
// test measures it and asserts against what it measured.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <string>

#include "metrics/exposition_test_util.h"
#include "tests/integration/client_util.h"
#include "tests/integration/daemon_client_test.h"
#include "tests/integration/fairqd_process.h"
#include "tests/integration/http_get.h"

namespace fairq::testing {
namespace {

using metrics::Key;
using metrics::LabelList;
using metrics::Samples;
using metrics::Value;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Ages and waits are whole milliseconds on the daemon's side.
constexpr double kMsRounding = 0.002;

class MetricsTest : public DaemonClientTest {
 protected:
  void Start(const std::string& config_yaml = "") {
    daemon_ = std::make_unique<FairqdProcess>(config_yaml, "127.0.0.1:0",
                                              "127.0.0.1:0");
    ASSERT_TRUE(daemon_->Start()) << daemon_->error();
    ASSERT_NE(daemon_->metrics_port(), 0) << daemon_->Log();
    Connect(*daemon_);
  }

  Samples Scrape() {
    std::string body, error;
    EXPECT_TRUE(HttpGet(daemon_->metrics_port(), "/metrics", &body, &error))
        << error;
    text_ = body;
    return metrics::ParseExposition(body);
  }

  v1::LeasedJob MustLease(int64_t wait_ms = 5000) {
    v1::LeaseResponse response;
    grpc::Status status = Lease(*worker_, LeaseReq("w1", wait_ms), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.jobs_size(), 1);
    return response.jobs_size() > 0 ? response.jobs(0) : v1::LeasedJob();
  }

  static std::string TP(const std::string& name, const std::string& tenant,
                        LabelList more = {}) {
    more.emplace_back("tenant", tenant);
    more.emplace_back("pool", "default");
    return Key(name, more);
  }

  // Every fairq_ metric in `s` is in tests/deploy/metric_names.txt, the
  // list the dashboard and alert checks hold deploy/ to (histograms and
  // summaries by base name), so that a new metric cannot miss it.
  static void ExpectEveryNameListed(const Samples& s) {
    std::ifstream file(FAIRQ_METRIC_NAMES_PATH);
    ASSERT_TRUE(file) << FAIRQ_METRIC_NAMES_PATH;
    std::set<std::string> listed;
    for (std::string line; std::getline(file, line);) {
      if (!line.empty() && line[0] != '#') listed.insert(line);
    }
    std::set<std::string> missing;
    for (const auto& [key, value] : s) {
      std::string name = key.substr(0, key.find('{'));
      if (name.rfind("fairq_", 0) != 0 || listed.count(name)) continue;
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        if (name.ends_with(suffix)) name.resize(name.size() - strlen(suffix));
      }
      if (!listed.count(name)) missing.insert(name);
    }
    EXPECT_THAT(missing, ::testing::IsEmpty()) << "not in metric_names.txt";
  }

  std::unique_ptr<FairqdProcess> daemon_;
  std::string text_;  // the last scrape, for failure messages
};

TEST_F(MetricsTest, OldestAgeGrowsWhileAJobWaits) {
  Start();
  MustEnqueue(Spec("waiting"));
  Clock::time_point first_start = Clock::now();
  Samples first = Scrape();
  Clock::time_point first_end = Clock::now();
  ASSERT_TRUE(LetTimePass(*worker_, 300).ok());
  Clock::time_point second_start = Clock::now();
  Samples second = Scrape();
  Clock::time_point second_end = Clock::now();

  std::string age = TP("fairq_oldest_ready_age_seconds", "waiting");
  double grew = Value(second, age) - Value(first, age);
  // Each scrape took its clock reading somewhere inside its HTTP call.
  EXPECT_GE(grew, Seconds(second_start - first_end) - kMsRounding) << text_;
  EXPECT_LE(grew, Seconds(second_end - first_start) + kMsRounding) << text_;
  EXPECT_GE(grew, 0.3 - kMsRounding);
  EXPECT_EQ(Value(second, TP("fairq_jobs", "waiting", {{"state", "ready"}})),
            1);
  // No live workers, so no slots: nobody counts as starved.
  EXPECT_EQ(Value(second, TP("fairq_tenant_starved", "waiting")), 0);
}

TEST_F(MetricsTest, WaitPercentilesShowTheDelayBeforeTheLease) {
  Start();
  Clock::time_point enqueue_sent = Clock::now();
  MustEnqueue(Spec("delayed"));
  Clock::time_point enqueued = Clock::now();
  ASSERT_TRUE(LetTimePass(*worker_, 250).ok());
  Clock::time_point lease_sent = Clock::now();
  MustLease();
  Clock::time_point leased = Clock::now();
  // The job became ready before Enqueue returned and was leased after the
  // Lease call was sent.
  double least = Seconds(lease_sent - enqueued) - kMsRounding;
  double most = Seconds(leased - enqueue_sent) + kMsRounding;
  ASSERT_GE(least, 0.25 - kMsRounding);

  Samples s = Scrape();
  for (const char* q : {"0.5", "0.9", "0.99"}) {
    double wait = Value(
        s, TP("fairq_queue_wait_window_seconds", "delayed", {{"quantile", q}}));
    EXPECT_GE(wait, least) << "quantile " << q << "\n" << text_;
    EXPECT_LE(wait, most) << "quantile " << q;
  }
  EXPECT_EQ(Value(s, TP("fairq_queue_wait_seconds_count", "delayed")), 1);
  double sum = Value(s, TP("fairq_queue_wait_seconds_sum", "delayed"));
  EXPECT_GE(sum, least);
  EXPECT_LE(sum, most);
  EXPECT_EQ(Value(s, TP("fairq_queue_wait_seconds_bucket", "delayed",
                        {{"le", "0.1"}})),
            0);
  EXPECT_EQ(Value(s, TP("fairq_queue_wait_seconds_bucket", "delayed",
                        {{"le", "+Inf"}})),
            1);
}

TEST_F(MetricsTest, CountersEqualTheOperationsDone) {
  Start("tenants:\n  - {name: quota, quotas: {max_queued: 1}}\n");
  v1::AckResult result;
  // Completed: 1.5 worker-seconds.
  MustEnqueue(Spec("ops"));
  v1::LeasedJob a = MustLease();
  ASSERT_TRUE(
      Complete(*worker_, a.job().id(), a.lease_token(), &result, 1500).ok());
  // Failed twice: retried, then dead (10 ms each).
  MustEnqueue(WithFastRetry(Spec("ops")));
  v1::LeasedJob b = MustLease();
  ASSERT_TRUE(
      Fail(*worker_, b.job().id(), b.lease_token(), "x", true, &result).ok());
  b = MustLease();
  ASSERT_TRUE(
      Fail(*worker_, b.job().id(), b.lease_token(), "x", false, &result).ok());
  // Canceled while READY.
  uint64_t c = MustEnqueue(Spec("ops"));
  v1::Job canceled;
  ASSERT_TRUE(CancelJob(*producer_, c, &canceled).ok());
  // A 1 s lease (the shortest) that lapses, counting 1 worker-second, is
  // retried, and then completes (0.01).
  v1::JobSpec short_lease = WithFastRetry(Spec("ops"));
  *short_lease.mutable_lease_duration() = Millis(1000);
  MustEnqueue(short_lease);
  v1::LeasedJob d = MustLease();
  v1::LeasedJob again = MustLease(10'000);  // back after the lapse
  ASSERT_EQ(again.job().id(), d.job().id());
  ASSERT_TRUE(
      Complete(*worker_, again.job().id(), again.lease_token(), &result, 10)
          .ok());
  // The same Complete again, as by a worker that lost the answer.
  ASSERT_TRUE(
      Complete(*worker_, again.job().id(), again.lease_token(), &result, 10)
          .ok());
  EXPECT_EQ(result.code(), 0) << result.message();
  // Released unstarted (no attempt, no time charged), then completed (0.01).
  MustEnqueue(Spec("ops"));
  v1::LeasedJob e = MustLease();
  v1::ReleaseRequest release;
  release.add_leases()->set_job_id(e.job().id());
  release.mutable_leases(0)->set_lease_token(e.lease_token());
  v1::AckResponse released;
  ASSERT_TRUE(
      Call(*worker_, &v1::Worker::Stub::Release, release, &released).ok());
  ASSERT_EQ(released.results_size(), 1);
  EXPECT_EQ(released.results(0).code(), 0) << released.results(0).message();
  e = MustLease();
  EXPECT_EQ(e.job().attempts(), 1u);
  ASSERT_TRUE(
      Complete(*worker_, e.job().id(), e.lease_token(), &result, 10).ok());
  // Admission: the second job of "quota" is over its max_queued of 1.
  MustEnqueue(Spec("quota"));
  EXPECT_EQ(Enqueue(*producer_, Spec("quota")).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);

  Samples s = Scrape();
  auto counter = [&](const char* event) {
    return Value(s, TP(std::string("fairq_jobs_") + event + "_total", "ops"));
  };
  EXPECT_EQ(counter("enqueued"), 5) << text_;
  EXPECT_EQ(counter("dispatched"), 7);
  EXPECT_EQ(counter("completed"), 3);
  EXPECT_EQ(counter("failed"), 2);
  EXPECT_EQ(counter("retried"), 2);
  EXPECT_EQ(counter("lease_expired"), 1);
  EXPECT_EQ(counter("canceled"), 1);
  EXPECT_EQ(counter("dead"), 1);
  EXPECT_EQ(counter("released"), 1);
  EXPECT_NEAR(Value(s, TP("fairq_worker_seconds_total", "ops")),
              1.5 + 0.01 + 0.01 + 1 + 0.01 + 0.01, 1e-6);
  EXPECT_EQ(Value(s, TP("fairq_jobs", "ops", {{"state", "dead"}})), 1);
  EXPECT_EQ(Value(s, TP("fairq_jobs", "ops", {{"state", "ready"}})), 0);
  EXPECT_EQ(
      Value(s, Key("fairq_admission_rejections_total",
                   {{"tenant", "quota"}, {"reason", "tenant_queue_full"}})),
      1);
  EXPECT_EQ(Value(s, TP("fairq_jobs_enqueued_total", "quota")), 1);
  auto rpcs = [&](const char* method, const char* code) {
    return Value(
        s,
        Key("fairq_rpc_requests_total",
            {{"method", std::string("fairq.v1.") + method}, {"code", code}}),
        0);
  };
  EXPECT_EQ(rpcs("Producer/Enqueue", "OK"), 6);
  EXPECT_EQ(rpcs("Producer/Enqueue", "RESOURCE_EXHAUSTED"), 1);
  EXPECT_EQ(rpcs("Producer/CancelJob", "OK"), 1);
  EXPECT_EQ(rpcs("Worker/Lease", "OK"), 7);
  EXPECT_EQ(rpcs("Worker/Complete", "OK"), 4);
  EXPECT_EQ(rpcs("Worker/Release", "OK"), 1);
  EXPECT_EQ(Value(s, "fairq_repeated_reports_total"), 1);
  EXPECT_EQ(rpcs("Worker/Fail", "OK"), 2);
  EXPECT_EQ(Value(s, Key("fairq_workers", {{"pool", "default"}})), 1);
  EXPECT_EQ(Value(s, Key("fairq_worker_slots", {{"pool", "default"}})), 1);
  EXPECT_EQ(Value(s, "fairq_store_failed"), 0);
  EXPECT_GE(Value(s, "fairq_store_write_seconds_count"), 1);
  ExpectEveryNameListed(s);
}

TEST_F(MetricsTest, TenantsPastTheCapAddUpUnderOther) {
  Start("metrics: {max_tenant_series: 2}\n");
  for (const char* tenant : {"t1", "t2", "t3", "t4", "t5"}) {
    MustEnqueue(Spec(tenant));
  }
  MustEnqueue(Spec("t4"));
  Samples s = Scrape();
  std::string enqueued = "fairq_jobs_enqueued_total";
  EXPECT_EQ(Value(s, TP(enqueued, "t1")), 1) << text_;
  EXPECT_EQ(Value(s, TP(enqueued, "t2")), 1);
  EXPECT_EQ(Value(s, TP(enqueued, "_other")), 4);
  for (const char* tenant : {"t3", "t4", "t5"}) {
    EXPECT_EQ(Value(s, TP(enqueued, tenant)), -1) << tenant;
    EXPECT_EQ(Value(s, TP("fairq_jobs", tenant, {{"state", "ready"}})), -1);
  }
  EXPECT_EQ(Value(s, TP("fairq_jobs", "_other", {{"state", "ready"}})), 4);
  EXPECT_EQ(Value(s, "fairq_metrics_tenant_series"), 2);
}

TEST_F(MetricsTest, ATakenMetricsPortStopsTheStart) {
  Start();
  FairqdProcess second(
      "", "127.0.0.1:0",
      "127.0.0.1:" + std::to_string(daemon_->metrics_port()));
  EXPECT_FALSE(second.Start());
  EXPECT_NE(second.Log().find("metrics_listen: cannot serve metrics"),
            std::string::npos)
      << second.Log();
}

}  // namespace
}  // namespace fairq::testing
