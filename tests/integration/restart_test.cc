// Restart: what a stopped or killed fairqd finds again on its data dir.
//
//  - a 100k-job backlog survives a graceful stop (SIGTERM, exit code 0) and
//    comes back whole: every job once, none twice, in the right tenant;
//  - a 10k-job backlog survives SIGKILL the same way (every enqueue was
//    acknowledged, so every one was durable);
//  - leases survive a restart: their workers complete them with the tokens
//    they hold, and stale tokens stay stale;
//  - a lease that lapses across a restart is redelivered to a long-polling
//    worker, as a new attempt with a new token.
//
// Restart times are printed (not asserted): they are benchmark figures.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "google/protobuf/util/time_util.h"
#include "metrics/exposition_test_util.h"
#include "tests/integration/fairqd_process.h"
#include "tests/integration/http_get.h"

namespace fairq::testing {
namespace {

using google::protobuf::util::TimeUtil;
using Clock = std::chrono::steady_clock;

constexpr int kBatch = 1000;  // the API's (and the default config's) maximum
// The most jobs a Lease reply holds with the default 1 MiB payload limit
// (docs/api.md, "Names and limits").
constexpr int kLeaseBatch = 237;

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

v1::JobSpec SmallJob(const std::string& tenant) {
  v1::JobSpec spec;
  spec.set_tenant(tenant);
  spec.set_payload("0123456789abcdef");  // small: 16 bytes
  return spec;
}

// Enqueues `specs` (at most kBatch) in one call; every job must be accepted.
std::vector<uint64_t> EnqueueAll(v1::Producer::Stub& producer,
                                 const std::vector<v1::JobSpec>& specs) {
  v1::EnqueueBatchRequest request;
  for (const v1::JobSpec& spec : specs) *request.add_jobs() = spec;
  v1::EnqueueBatchResponse response;
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(30));
  grpc::Status status = producer.EnqueueBatch(&ctx, request, &response);
  std::vector<uint64_t> ids;
  EXPECT_TRUE(status.ok()) << status.error_message();
  if (!status.ok()) return ids;
  for (const v1::EnqueueResult& result : response.results()) {
    EXPECT_EQ(result.code(), 0) << result.message();
    if (result.code() == 0) ids.push_back(result.job_id());
  }
  return ids;
}

v1::LeaseResponse Lease(v1::Worker::Stub& worker, const std::string& worker_id,
                        uint32_t max_jobs, double wait_s) {
  v1::LeaseRequest request;
  request.set_worker_id(worker_id);
  request.set_slots(max_jobs);
  request.set_max_jobs(max_jobs);
  *request.mutable_wait() =
      TimeUtil::MillisecondsToDuration(static_cast<int64_t>(wait_s * 1000));
  v1::LeaseResponse response;
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(wait_s + 20));
  grpc::Status status = worker.Lease(&ctx, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response;
}

// Completes each (job id, token) and returns the per-item result codes.
std::vector<int> Complete(
    v1::Worker::Stub& worker,
    const std::vector<std::pair<uint64_t, uint64_t>>& leases) {
  v1::CompleteRequest request;
  for (const auto& [id, token] : leases) {
    v1::Completion* done = request.add_completions();
    done->set_job_id(id);
    done->set_lease_token(token);
    *done->mutable_runtime() = TimeUtil::MillisecondsToDuration(1);
  }
  v1::AckResponse response;
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(30));
  grpc::Status status = worker.Complete(&ctx, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  std::vector<int> codes;
  for (const v1::AckResult& result : response.results()) {
    codes.push_back(result.code());
  }
  return codes;
}

std::vector<v1::TenantStats> QueueStats(v1::Admin::Stub& admin) {
  v1::GetQueueStatsResponse response;
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(10));
  grpc::Status status =
      admin.GetQueueStats(&ctx, v1::GetQueueStatsRequest(), &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return {response.tenants().begin(), response.tenants().end()};
}

grpc::StatusCode GetJob(v1::Producer::Stub& producer, uint64_t id,
                        v1::Job* job) {
  v1::GetJobRequest request;
  request.set_job_id(id);
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(10));
  return producer.GetJob(&ctx, request, job).error_code();
}

void StartOrDie(FairqdProcess& fairqd) {
  ASSERT_TRUE(fairqd.Start()) << fairqd.error();
}

// What a test queued: every acknowledged id with its job's payload, and how
// many per tenant.
struct Backlog {
  std::unordered_map<uint64_t, std::string> ids;
  std::map<std::string, uint64_t> per_tenant;
};

// Queues `total` small jobs over four tenants in full batches, each with a
// payload of its own.
Backlog Fill(v1::Producer::Stub& producer, int total) {
  constexpr int kTenants = 4;
  Backlog backlog;
  for (int first = 0; first < total; first += kBatch) {
    std::vector<v1::JobSpec> specs;
    for (int i = first; i < std::min(total, first + kBatch); ++i) {
      std::string tenant = "tenant" + std::to_string(i % kTenants);
      specs.push_back(SmallJob(tenant));
      specs.back().set_payload("job " + std::to_string(i));
      ++backlog.per_tenant[tenant];
    }
    std::vector<uint64_t> ids = EnqueueAll(producer, specs);
    for (size_t k = 0; k < ids.size(); ++k) {
      EXPECT_TRUE(backlog.ids.emplace(ids[k], specs[k].payload()).second)
          << "id " << ids[k] << " reused";
    }
  }
  return backlog;
}

// After the restart, before anything ran: the stats show every job READY,
// in its tenant, and ages that count from the original enqueue.
void CheckStats(v1::Admin::Stub& admin, const Backlog& backlog,
                double since_fill_ms) {
  uint64_t ready = 0;
  for (const v1::TenantStats& stats : QueueStats(admin)) {
    EXPECT_EQ(stats.ready(), backlog.per_tenant.at(stats.tenant()))
        << stats.tenant();
    EXPECT_EQ(stats.scheduled() + stats.leased() + stats.dead(), 0u)
        << stats.tenant();
    int64_t age_ms = TimeUtil::DurationToMilliseconds(stats.oldest_ready_age());
    EXPECT_GT(age_ms, 0) << stats.tenant();
    EXPECT_LE(static_cast<double>(age_ms), since_fill_ms + 1000)
        << stats.tenant();
    ready += stats.ready();
  }
  EXPECT_EQ(ready, backlog.ids.size());
}

// Leases and completes everything; each queued job must come exactly once,
// as its first attempt, with its own payload, and nothing else may come.
void DrainExactly(v1::Worker::Stub& worker, const Backlog& backlog) {
  std::unordered_set<uint64_t> drained;
  Clock::time_point drain_start = Clock::now();
  // Each round leases up to a full batch; a round with nothing means the
  // queue is empty (or jobs went missing). Bounded by the job count.
  for (size_t round = 0; round <= backlog.ids.size() / kLeaseBatch + 1;
       ++round) {
    v1::LeaseResponse leased = Lease(worker, "drainer", kBatch, 1);
    if (leased.jobs().empty()) break;
    std::vector<std::pair<uint64_t, uint64_t>> done;
    for (const v1::LeasedJob& job : leased.jobs()) {
      uint64_t id = job.job().id();
      auto queued = backlog.ids.find(id);
      ASSERT_NE(queued, backlog.ids.end()) << "unknown job " << id;
      // After the restart every spec is read from the store, most of them
      // read ahead of their lease (server/broker/read_ahead.h).
      EXPECT_EQ(job.job().spec().payload(), queued->second) << "job " << id;
      EXPECT_TRUE(drained.insert(id).second) << "job " << id << " twice";
      EXPECT_EQ(job.job().attempts(), 1u);
      done.emplace_back(id, job.lease_token());
    }
    for (int code : Complete(worker, done)) ASSERT_EQ(code, 0);
  }
  std::printf("[ restart  ] drained %zu jobs in %.0f ms\n", drained.size(),
              MillisSince(drain_start));
  EXPECT_EQ(drained.size(), backlog.ids.size());
  EXPECT_TRUE(Lease(worker, "drainer", 1, 0).jobs().empty());
}

// How many leases since the start took their job's spec from `source`
// (fairq_leased_specs_total).
double LeasedSpecs(const FairqdProcess& fairqd, const std::string& source) {
  std::string body, error;
  EXPECT_TRUE(HttpGet(fairqd.metrics_port(), "/metrics", &body, &error))
      << error;
  metrics::Samples samples = metrics::ParseExposition(body);
  auto found = samples.find(
      metrics::Key("fairq_leased_specs_total", {{"source", source}}));
  return found == samples.end() ? -1 : found->second;
}

// Queues `total` jobs, stops fairqd (gracefully or by SIGKILL), starts it
// again and checks that exactly the acknowledged jobs come back, most of
// their specs read ahead of their leases (none is cached after a restart).
void FillRestartAndDrain(int total, bool graceful) {
  FairqdProcess fairqd("", "127.0.0.1:0", "127.0.0.1:0");
  StartOrDie(fairqd);
  auto producer = fairqd.Producer();
  Clock::time_point fill_start = Clock::now();
  Backlog backlog = Fill(*producer, total);
  ASSERT_EQ(backlog.ids.size(), static_cast<size_t>(total));
  double fill_ms = MillisSince(fill_start);

  // Close our channel first: gRPC's server shutdown waits (up to fairqd's
  // 5 s grace) for connected clients that nobody polls to answer its
  // GOAWAY, which would measure the test client rather than the drain.
  producer.reset();
  Clock::time_point stop_start = Clock::now();
  if (graceful) {
    ASSERT_EQ(fairqd.Terminate(), 0) << fairqd.Log();
  } else {
    fairqd.Kill();
  }
  double stop_ms = MillisSince(stop_start);
  Clock::time_point restart_start = Clock::now();
  StartOrDie(fairqd);
  double restart_ms = MillisSince(restart_start);
  std::printf(
      "[ restart  ] %d jobs: enqueue %.0f ms, %s %.0f ms, restart (restore "
      "+ serve) %.0f ms\n",
      total, fill_ms, graceful ? "SIGTERM drain" : "SIGKILL", stop_ms,
      restart_ms);
  ::testing::Test::RecordProperty("restart_ms", static_cast<int>(restart_ms));

  CheckStats(*fairqd.Admin(), backlog, MillisSince(fill_start));
  DrainExactly(*fairqd.Worker(), backlog);
  double read_ahead = LeasedSpecs(fairqd, "read_ahead");
  double by_id = LeasedSpecs(fairqd, "store");
  std::printf("[ restart  ] specs read ahead %.0f, by id %.0f\n", read_ahead,
              by_id);
  EXPECT_EQ(LeasedSpecs(fairqd, "enqueue_cache"), 0);
  EXPECT_EQ(read_ahead + by_id, total);
  // The read-ahead took part. How much of the drain it served (here 99%:
  // all but the first Lease's 1,000) depends on the machine's speed, so it
  // is printed above, not checked; fairq-bench backlog measures its effect.
  EXPECT_GT(read_ahead, 0);
}

TEST(RestartTest, GracefulStopKeepsHundredThousandQueuedJobs) {
  FillRestartAndDrain(100'000, /*graceful=*/true);
}

TEST(RestartTest, KillKeepsTenThousandAcknowledgedJobs) {
  FillRestartAndDrain(10'000, /*graceful=*/false);
}

// Leases 5 of 10 jobs, restarts, and has their worker finish them with the
// tokens it held; the other 5 are still queued.
void LeasesSurvive(bool graceful) {
  FairqdProcess fairqd;
  StartOrDie(fairqd);
  std::vector<v1::JobSpec> specs;
  for (int i = 0; i < 10; ++i) {
    specs.push_back(SmallJob("leases"));
    *specs.back().mutable_lease_duration() = TimeUtil::SecondsToDuration(600);
  }
  std::vector<uint64_t> ids = EnqueueAll(*fairqd.Producer(), specs);
  ASSERT_EQ(ids.size(), 10u);
  std::vector<std::pair<uint64_t, uint64_t>> held;
  v1::LeaseResponse first = Lease(*fairqd.Worker(), "w1", 5, 5);
  for (const v1::LeasedJob& job : first.jobs()) {
    held.emplace_back(job.job().id(), job.lease_token());
  }
  ASSERT_EQ(held.size(), 5u);

  if (graceful) {
    ASSERT_EQ(fairqd.Terminate(), 0) << fairqd.Log();
  } else {
    fairqd.Kill();
  }
  StartOrDie(fairqd);
  auto producer = fairqd.Producer();
  auto worker = fairqd.Worker();
  for (const auto& [id, token] : held) {
    v1::Job job;
    ASSERT_EQ(GetJob(*producer, id, &job), grpc::StatusCode::OK);
    EXPECT_EQ(job.state(), v1::JOB_STATE_LEASED);
    EXPECT_EQ(job.attempts(), 1u);
    v1::HeartbeatRequest beat;
    beat.set_job_id(id);
    beat.set_lease_token(token);
    v1::HeartbeatResponse beat_response;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(10));
    grpc::Status status = worker->Heartbeat(&ctx, beat, &beat_response);
    EXPECT_TRUE(status.ok()) << status.error_message();
  }
  // A token the daemon never granted stays stale across the restart.
  EXPECT_EQ(Complete(*worker, {{held[0].first, held[0].second + 1}}),
            std::vector<int>{grpc::StatusCode::FAILED_PRECONDITION});
  EXPECT_EQ(Complete(*worker, held), std::vector<int>(5, grpc::StatusCode::OK));

  // The other five are queued, untouched; the completed ones are gone.
  std::unordered_set<uint64_t> rest;
  v1::LeaseResponse second = Lease(*worker, "w2", 10, 5);
  for (const v1::LeasedJob& job : second.jobs()) {
    rest.insert(job.job().id());
    EXPECT_EQ(job.job().attempts(), 1u);
  }
  EXPECT_EQ(rest.size(), 5u);
  for (const auto& [id, token] : held) {
    EXPECT_FALSE(rest.count(id)) << "completed job " << id << " leased again";
    v1::Job job;
    EXPECT_EQ(GetJob(*producer, id, &job), grpc::StatusCode::NOT_FOUND);
  }
}

TEST(RestartTest, LeasesSurviveGracefulStop) { LeasesSurvive(true); }

TEST(RestartTest, LeasesSurviveKill) { LeasesSurvive(false); }

// A 1 s lease whose worker vanished with the daemon: after the restart the
// lease lapses (it got a fresh lease duration at restore, for workers that
// are still alive) and a long-polling worker receives the job as attempt 2.
TEST(RestartTest, LapsedLeaseIsRedeliveredAfterRestart) {
  FairqdProcess fairqd;
  StartOrDie(fairqd);
  v1::JobSpec spec = SmallJob("lapse");
  *spec.mutable_lease_duration() = TimeUtil::SecondsToDuration(1);
  *spec.mutable_retry()->mutable_initial_backoff() =
      TimeUtil::MillisecondsToDuration(100);
  *spec.mutable_retry()->mutable_max_backoff() =
      TimeUtil::MillisecondsToDuration(100);
  std::vector<uint64_t> ids = EnqueueAll(*fairqd.Producer(), {spec});
  ASSERT_EQ(ids.size(), 1u);
  v1::LeaseResponse first = Lease(*fairqd.Worker(), "gone", 1, 5);
  ASSERT_EQ(first.jobs_size(), 1);
  uint64_t old_token = first.jobs(0).lease_token();

  fairqd.Kill();
  StartOrDie(fairqd);
  auto worker = fairqd.Worker();
  Clock::time_point poll_start = Clock::now();
  // Lapse (<= 1 s after restore) plus backoff (~0.1 s): well inside 20 s.
  v1::LeaseResponse again = Lease(*worker, "alive", 1, 20);
  ASSERT_EQ(again.jobs_size(), 1) << "not redelivered within 20 s";
  std::printf("[ restart  ] lapsed lease redelivered %.0f ms after restart\n",
              MillisSince(poll_start));
  EXPECT_EQ(again.jobs(0).job().id(), ids[0]);
  EXPECT_EQ(again.jobs(0).job().attempts(), 2u);
  EXPECT_EQ(again.jobs(0).job().last_error(), "lease expired");
  EXPECT_NE(again.jobs(0).lease_token(), old_token);
  EXPECT_EQ(Complete(*worker, {{ids[0], old_token}}),
            std::vector<int>{grpc::StatusCode::FAILED_PRECONDITION});
  EXPECT_EQ(Complete(*worker, {{ids[0], again.jobs(0).lease_token()}}),
            std::vector<int>{grpc::StatusCode::OK});
}

}  // namespace
}  // namespace fairq::testing
