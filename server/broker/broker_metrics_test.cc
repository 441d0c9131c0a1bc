// What the broker tells metrics::Metrics: the hooks at each state change,
// and the state a scrape's snapshot command sees. In process, with a real
// store in a temp directory and a clock the test moves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "google/protobuf/util/time_util.h"
#include "server/broker/broker.h"
#include "tests/util/scoped_temp_dir.h"

namespace fairq::server {
namespace {

using google::protobuf::util::TimeUtil;
using ::testing::ElementsAre;

// Writes each hook call as a line, e.g. "count 0/0 0" or "started 0/0 w=5".
class RecordingMetrics final : public metrics::Metrics {
 public:
  void NameTenant(uint32_t tenant, std::string_view name) override {
    Add("tenant " + std::to_string(tenant) + " " + std::string(name));
  }
  void NamePool(uint32_t pool, std::string_view name) override {
    Add("pool " + std::to_string(pool) + " " + std::string(name));
  }
  void Count(uint32_t tenant, uint32_t pool, metrics::JobEvent event) override {
    Add("count " + Pair(tenant, pool) + " " +
        std::to_string(static_cast<int>(event)));
  }
  void Rejected(uint32_t tenant, metrics::Rejection reason) override {
    Add("rejected " + std::to_string(static_cast<int64_t>(tenant)) + " " +
        std::to_string(static_cast<int>(reason)));
  }
  void LeaseStarted(uint32_t tenant, uint32_t pool, int64_t wait_ms,
                    int64_t) override {
    Add("started " + Pair(tenant, pool) + " w=" + std::to_string(wait_ms));
  }
  void LeaseAdopted(uint32_t tenant, uint32_t pool, int64_t) override {
    Add("adopted " + Pair(tenant, pool));
  }
  void LeaseEnded(uint32_t tenant, uint32_t pool, double runtime_s,
                  int64_t) override {
    Add("ended " + Pair(tenant, pool) +
        " r=" + std::to_string(std::lround(runtime_s * 1000)));
  }
  void TurnDone(double) override {}
  void LeasedSpec(metrics::SpecSource source) override {
    ++specs[static_cast<size_t>(source)];
  }
  void ReadAheadUnused(size_t) override {}
  void ReportRepeated() override { Add("repeated"); }
  void GroupCommitted(double, size_t) override {}
  void RpcFinished(std::string_view, int, double) override {}

  // LeasedSpec calls, by source; not in the call lines.
  std::array<int, metrics::kSpecSourceCount> specs{};

  // The calls since the last Take.
  std::vector<std::string> Take() { return std::move(calls_); }

 private:
  static std::string Pair(uint32_t tenant, uint32_t pool) {
    return std::to_string(tenant) + "/" + std::to_string(pool);
  }
  void Add(std::string call) { calls_.push_back(std::move(call)); }
  std::vector<std::string> calls_;
};

constexpr int kEnqueued = static_cast<int>(metrics::JobEvent::kEnqueued);
constexpr int kFailed = static_cast<int>(metrics::JobEvent::kFailed);
constexpr int kRetried = static_cast<int>(metrics::JobEvent::kRetried);
constexpr int kDead = static_cast<int>(metrics::JobEvent::kDead);
constexpr int kReleased = static_cast<int>(metrics::JobEvent::kReleased);

class BrokerMetricsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    broker_.reset();
    store_.reset();
  }

  void Open() {
    broker_.reset();
    store_.reset();
    store_ =
        std::move(store::Store::Open({dir_.path(), false, nullptr})).value();
    broker_ =
        std::move(Broker::Create(config_, store_.get(), metrics_)).value();
    Turn turn(store_->NewBatch());
    ASSERT_TRUE(broker_->Restore(now_, turn).ok());
    Commit(turn);
  }

  void Commit(Turn& turn) {
    std::vector<store::WriteBatch> batches;
    batches.push_back(std::move(turn.batch));
    Status status = store_->Commit(batches);
    for (Reply& reply : turn.replies) reply(status);
  }

  void Run(Command command) {
    Turn turn(store_->NewBatch());
    std::vector<Command> commands;
    commands.push_back(std::move(command));
    broker_->RunTurn(commands, now_, turn);
    Commit(turn);
  }

  Status Enqueue(const std::string& tenant, bool retry_fast = false) {
    v1::JobSpec spec;
    spec.set_tenant(tenant);
    if (retry_fast) {
      *spec.mutable_retry()->mutable_initial_backoff() =
          TimeUtil::MillisecondsToDuration(0);
    }
    v1::EnqueueBatchResponse response;
    Run(EnqueueCommand{{&spec}, &response, [](const Status&) {}});
    const v1::EnqueueResult& result = response.results(0);
    return Status(static_cast<StatusCode>(result.code()), result.message());
  }

  v1::LeasedJob Lease() {
    v1::LeaseRequest request;
    request.set_worker_id("w1");
    request.set_slots(8);
    request.set_max_jobs(1);
    v1::LeaseResponse response;
    Run(LeaseCommand{1, &request, &response, [](const Status&) {}});
    return response.jobs_size() ? response.jobs(0) : v1::LeasedJob();
  }

  void Fail(const v1::LeasedJob& job, bool retryable) {
    v1::FailRequest request;
    v1::Failure* failure = request.add_failures();
    failure->set_job_id(job.job().id());
    failure->set_lease_token(job.lease_token());
    failure->set_retryable(retryable);
    *failure->mutable_runtime() = TimeUtil::MillisecondsToDuration(20);
    v1::AckResponse response;
    Run(FailCommand{&request, &response, [](const Status&) {}});
  }

  void Release(const v1::LeasedJob& job) {
    v1::ReleaseRequest request;
    v1::ReleasedLease* lease = request.add_leases();
    lease->set_job_id(job.job().id());
    lease->set_lease_token(job.lease_token());
    v1::AckResponse response;
    Run(ReleaseCommand{&request, &response, [](const Status&) {}});
  }

  metrics::BrokerState Snapshot() {
    metrics::BrokerState seen;
    bool done = false;
    Run(MetricsSnapshotCommand{
        [&](const metrics::BrokerState& state, int64_t) { seen = state; },
        [&](const Status& status) { done = status.ok(); }});
    EXPECT_TRUE(done);
    return seen;
  }

  config::DaemonConfig config_;
  RecordingMetrics metrics_;
  testing::ScopedTempDir dir_{"broker_metrics"};
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Broker> broker_;
  int64_t now_ = 1'764'000'000'000;
};

// Each lease says where its job's spec came from: cached at its enqueue,
// or (after a restart, when nothing is cached) read by id; a record the
// read-ahead handed in serves the next lease.
TEST_F(BrokerMetricsTest, LeasesReportWhereTheirSpecCameFrom) {
  using metrics::SpecSource;
  auto count = [&](SpecSource source) {
    return metrics_.specs[static_cast<size_t>(source)];
  };
  Open();
  ASSERT_TRUE(Enqueue("a").ok());
  ASSERT_TRUE(Enqueue("a").ok());
  ASSERT_TRUE(Enqueue("a").ok());
  EXPECT_NE(Lease().job().id(), 0u);
  EXPECT_EQ(count(SpecSource::kEnqueueCache), 1);
  Open();
  EXPECT_NE(Lease().job().id(), 0u);
  EXPECT_EQ(count(SpecSource::kStore), 1);
  std::vector<IdRange> asked = broker_->TakeReadAheadRequests();
  ASSERT_EQ(asked.size(), 1u);
  auto records = store_->ReadJobs(asked[0].begin, asked[0].end, 1 << 20);
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  broker_->CacheReadAhead(std::move(records->jobs));
  EXPECT_NE(Lease().job().id(), 0u);
  EXPECT_EQ(count(SpecSource::kReadAhead), 1);
  EXPECT_EQ(count(SpecSource::kEnqueueCache), 1);
  EXPECT_EQ(count(SpecSource::kStore), 1);
}

TEST_F(BrokerMetricsTest, HooksFollowAJobThroughItsAttempts) {
  config_.tenant_defaults.max_attempts = 2;
  Open();
  EXPECT_THAT(metrics_.Take(), ElementsAre("pool 0 default"));
  ASSERT_TRUE(Enqueue("a", true).ok());
  EXPECT_THAT(
      metrics_.Take(),
      ElementsAre("tenant 0 a", "count 0/0 " + std::to_string(kEnqueued)));
  now_ += 5;
  v1::LeasedJob job = Lease();
  EXPECT_THAT(metrics_.Take(), ElementsAre("started 0/0 w=5"));
  Fail(job, true);
  EXPECT_THAT(
      metrics_.Take(),
      ElementsAre("count 0/0 " + std::to_string(kFailed), "ended 0/0 r=20",
                  "count 0/0 " + std::to_string(kRetried)));
  job = Lease();  // the retry, due at once
  metrics_.Take();
  Release(job);  // given back unstarted: no attempt used, no time charged
  EXPECT_THAT(
      metrics_.Take(),
      ElementsAre("count 0/0 " + std::to_string(kReleased), "ended 0/0 r=0"));
  job = Lease();
  metrics_.Take();
  Fail(job, true);  // attempts used up
  EXPECT_THAT(
      metrics_.Take(),
      ElementsAre("count 0/0 " + std::to_string(kFailed), "ended 0/0 r=20",
                  "count 0/0 " + std::to_string(kDead)));
  Fail(job, true);  // its answer was lost: the same report again
  EXPECT_THAT(metrics_.Take(), ElementsAre("repeated"));
}

TEST_F(BrokerMetricsTest, RejectionsNameTheirReason) {
  config_.auto_create_tenants = false;
  v1::Tenant quota = config::DefaultTenantSettings();
  quota.set_name("q");
  quota.mutable_quotas()->set_max_queued(1);
  config_.tenants = {quota};
  Open();
  metrics_.Take();
  ASSERT_TRUE(Enqueue("q").ok());
  EXPECT_FALSE(Enqueue("q").ok());
  EXPECT_FALSE(Enqueue("nobody").ok());
  std::vector<std::string> calls = metrics_.Take();
  auto reason = [](metrics::Rejection r) {
    return std::to_string(static_cast<int>(r));
  };
  EXPECT_THAT(
      calls,
      ElementsAre("count 0/0 " + std::to_string(kEnqueued),
                  "rejected 0 " + reason(metrics::Rejection::kTenantQueueFull),
                  "rejected " + std::to_string(int64_t{metrics::kNoTenant}) +
                      " " + reason(metrics::Rejection::kUnknownTenant)));
}

TEST_F(BrokerMetricsTest, ATenantPastMaxTenantsIsARejection) {
  config_.max_tenants = 1;
  Open();
  ASSERT_TRUE(Enqueue("a").ok());
  metrics_.Take();
  EXPECT_FALSE(Enqueue("b").ok());
  EXPECT_THAT(
      metrics_.Take(),
      ElementsAre(
          "rejected " + std::to_string(int64_t{metrics::kNoTenant}) + " " +
          std::to_string(static_cast<int>(metrics::Rejection::kTenantLimit))));
}

TEST_F(BrokerMetricsTest, ARestoredLeaseIsAdopted) {
  Open();
  ASSERT_TRUE(Enqueue("a").ok());
  ASSERT_NE(Lease().job().id(), 0u);
  Open();  // restart
  std::vector<std::string> calls = metrics_.Take();
  EXPECT_EQ(calls.back(), "adopted 0/0");
}

TEST_F(BrokerMetricsTest, SnapshotWeighsOrganisationsAndResolvesCaps) {
  config_.orgs = {{"acme", 3}};
  auto tenant = [](const char* name, const char* org, double weight) {
    v1::Tenant t = config::DefaultTenantSettings();
    t.set_name(name);
    t.set_org(org);
    t.set_weight(weight);
    return t;
  };
  config_.tenants = {tenant("a", "acme", 2), tenant("b", "acme", 1),
                     tenant("c", "", 5), tenant("d", "other", 1)};
  config_.tenants[0].mutable_cap()->set_share(0.5);
  config_.tenants[0].mutable_floor()->set_share(0.3);
  Open();
  ASSERT_TRUE(Enqueue("a").ok());
  ASSERT_TRUE(Enqueue("a").ok());
  ASSERT_TRUE(Enqueue("c").ok());
  ASSERT_NE(Lease().job().id(), 0u);  // worker w1 brings 8 slots
  metrics::BrokerState state = Snapshot();

  ASSERT_EQ(state.tenants.size(), 4u);
  // acme (3) is shared by a and b; c is its own (5); "other" weighs 1.
  EXPECT_EQ(state.tenants[0].org, state.tenants[1].org);
  EXPECT_EQ(state.org_weights[state.tenants[0].org], 3);
  EXPECT_EQ(state.org_weights[state.tenants[2].org], 5);
  EXPECT_EQ(state.org_weights[state.tenants[3].org], 1);
  EXPECT_EQ(state.tenants[0].weight, 2);
  ASSERT_EQ(state.pools.size(), 1u);
  EXPECT_EQ(state.pools[0].workers, 1u);
  EXPECT_EQ(state.pools[0].slots, 8u);
  EXPECT_EQ(state.pools[0].tenants, 2u);  // a and c used it, b and other not
  EXPECT_DOUBLE_EQ(state.pools[0].floor_slots, 0.3 * 8);  // a's floor
  ASSERT_EQ(state.rows.size(), 2u);  // a and c have jobs
  const metrics::TenantPoolState& a = state.rows[0];
  EXPECT_EQ(a.tenant, 0u);
  EXPECT_EQ(a.ready + a.leased, 2u);
  EXPECT_EQ(a.oldest_ready_ms.value_or(0) != 0, a.ready > 0);
  EXPECT_EQ(a.cap_slots, std::optional<uint32_t>(4));  // 50% of 8
  EXPECT_EQ(a.floor_slots, 2u);  // 30% of 8, rounded down: always kept
  const metrics::TenantPoolState& c = state.rows[1];
  EXPECT_EQ(c.tenant, 2u);
  EXPECT_EQ(c.cap_slots, std::nullopt);
}

// A SIGHUP's organisations reach the metrics as they reach the scheduler:
// reweighted, and added.
TEST_F(BrokerMetricsTest, SnapshotFollowsReloadedOrganisations) {
  config_.orgs = {{"acme", 3}};
  v1::Tenant a = config::DefaultTenantSettings();
  a.set_name("a");
  a.set_org("acme");
  v1::Tenant d = a;
  d.set_name("d");
  d.set_org("other");
  config_.tenants = {a, d};
  Open();
  Status reloaded = Internal("not answered");
  Run(ReloadCommand{
      std::make_unique<ReloadCommand::Parts>(ReloadCommand::Parts{
          .orgs = {{{"acme", 7}, {"other", 2}}, [](const Status&) {}},
          .pools = {{}, [](const Status&) {}},
          .tenants = {},
      }),
      [&](const Status& status) { reloaded = status; }});
  ASSERT_TRUE(reloaded.ok()) << reloaded.ToString();
  metrics::BrokerState state = Snapshot();
  ASSERT_EQ(state.tenants.size(), 2u);
  EXPECT_EQ(state.org_weights[state.tenants[0].org], 7);
  EXPECT_EQ(state.org_weights[state.tenants[1].org], 2);
}

}  // namespace
}  // namespace fairq::server
