// Crash safety under concurrent load: producers enqueue (batches and single
// jobs) and workers lease and complete, while fairqd is killed with SIGKILL
// at a point chosen by a count of acknowledged operations, then started
// again on the same data. Three crashes in a row, each landing at another
// count, on the same data directory (so later crashes also hit a daemon
// that has itself been restored).
//
// What must hold, whatever the crash interrupted:
//  - every acknowledged enqueue is still there (GetJob: READY, SCHEDULED or
//    LEASED) unless its completion was acknowledged;
//  - a job whose Complete was acknowledged is gone (GetJob NOT_FOUND) and is
//    never leased again, by the load's workers or by the final drain;
//  - a lease granted before the crash is still valid afterwards: its live
//    worker heartbeats and completes it with the token it holds (a lease
//    answered before its grant was written is adopted then), unless the
//    job's enqueue itself was never acknowledged and is gone;
//  - no acknowledged job's id is handed out twice, across restarts.
//
// Calls in flight at the crash have unknown outcomes and are treated as
// such: an unacknowledged enqueue may or may not exist; a Complete sent but
// unanswered may or may not have happened (it is retried after the restart
// and must then succeed or find the job gone).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "google/protobuf/util/time_util.h"
#include "tests/integration/fairqd_process.h"
#include "tests/integration/run_command.h"

namespace fairq::testing {
namespace {

using google::protobuf::util::TimeUtil;
using Clock = std::chrono::steady_clock;

// Load jobs: a 5 s lease, so leases held at the crash are still valid when
// their workers come back right after the restart, and leases whose reply
// was lost in the crash come back within seconds; a short backoff and many
// attempts, so those lapses never make a job DEAD.
// A lease lost before its write is adopted only within a lease duration of
// the restart (docs/api.md): CompleteSurvivingLeases runs right after it.
constexpr int kLeaseSeconds = 5;
constexpr uint32_t kMaxAttempts = 1000;
// Where the crash lands, in acknowledged operations (jobs enqueued plus jobs
// completed) since the cycle began: early, mid and late in a cycle.
constexpr uint64_t kCrashPoints[] = {300, 1500, 4000};
constexpr double kCycleLimitSeconds = 30;  // to reach a crash point
constexpr auto kJobWork = std::chrono::milliseconds(2);

struct HeldLease {
  uint64_t id;
  uint64_t token;
};

// What fairqd acknowledged, shared by the load threads and the test.
struct Ledger {
  std::mutex mu;
  std::condition_variable progressed;
  std::unordered_set<uint64_t> enqueued;   // acknowledged, across cycles
  std::unordered_set<uint64_t> completed;  // acknowledged (or proven) done
  std::vector<HeldLease> held;    // leased; Complete never sent
  std::vector<HeldLease> unsure;  // Complete sent, no answer
  uint64_t ops = 0;               // acknowledged operations this cycle
  std::vector<std::string> errors;

  void Error(std::string what) {
    std::lock_guard lock(mu);
    errors.push_back(std::move(what));
  }
};

v1::JobSpec LoadJob(const std::string& tenant) {
  v1::JobSpec spec;
  spec.set_tenant(tenant);
  spec.set_payload("crash-test");
  spec.set_max_attempts(kMaxAttempts);
  *spec.mutable_lease_duration() = TimeUtil::SecondsToDuration(kLeaseSeconds);
  *spec.mutable_retry()->mutable_initial_backoff() =
      TimeUtil::MillisecondsToDuration(50);
  *spec.mutable_retry()->mutable_max_backoff() =
      TimeUtil::MillisecondsToDuration(50);
  return spec;
}

// The load: producers and workers hammering one fairqd until it dies. Each
// thread stops at its first failed call; a failure before `crashing` is set
// is an error, after it the expected effect of the kill.
class Load {
 public:
  Load(FairqdProcess& fairqd, Ledger& ledger) : ledger_(ledger) {
    // One producer of batches, one of single jobs, three workers; each
    // thread has its own channel, as separate processes would.
    threads_.emplace_back([this, p = fairqd.Producer()] { Produce(*p, 20); });
    threads_.emplace_back([this, p = fairqd.Producer()] { Produce(*p, 1); });
    for (int i = 0; i < 3; ++i) {
      threads_.emplace_back([this, i, w = fairqd.Worker()] {
        Work(*w, "load-worker-" + std::to_string(i));
      });
    }
  }

  // Call just before killing fairqd; then Join.
  void Crashing() { crashing_ = true; }
  void Join() {
    for (std::thread& t : threads_) t.join();
  }

 private:
  void Fail(const std::string& call, const grpc::Status& status) {
    if (!crashing_) ledger_.Error(call + ": " + status.error_message());
  }

  void Produce(v1::Producer::Stub& producer, int batch) {
    const std::string tenant = "tenant-" + std::to_string(batch);
    while (true) {
      std::vector<uint64_t> ids;
      grpc::ClientContext ctx;
      ctx.set_deadline(Deadline(10));
      if (batch == 1) {
        v1::EnqueueRequest request;
        *request.mutable_job() = LoadJob(tenant);
        v1::EnqueueResponse response;
        grpc::Status status = producer.Enqueue(&ctx, request, &response);
        if (!status.ok()) return Fail("Enqueue", status);
        ids.push_back(response.job_id());
      } else {
        v1::EnqueueBatchRequest request;
        for (int i = 0; i < batch; ++i) *request.add_jobs() = LoadJob(tenant);
        v1::EnqueueBatchResponse response;
        grpc::Status status = producer.EnqueueBatch(&ctx, request, &response);
        if (!status.ok()) return Fail("EnqueueBatch", status);
        for (const v1::EnqueueResult& result : response.results()) {
          if (result.code() != 0) ledger_.Error("enqueue: " + result.message());
          ids.push_back(result.job_id());
        }
      }
      Acknowledge(ids, ledger_.enqueued, "enqueue returned reused id ");
    }
  }

  void Work(v1::Worker::Stub& worker, const std::string& worker_id) {
    while (true) {
      v1::LeaseRequest request;
      request.set_worker_id(worker_id);
      request.set_slots(4);
      request.set_max_jobs(4);
      *request.mutable_wait() = TimeUtil::MillisecondsToDuration(500);
      v1::LeaseResponse leased;
      grpc::ClientContext ctx;
      ctx.set_deadline(Deadline(10));
      grpc::Status status = worker.Lease(&ctx, request, &leased);
      if (!status.ok()) return Fail("Lease", status);
      std::vector<HeldLease> leases;
      for (const v1::LeasedJob& job : leased.jobs()) {
        leases.push_back({job.job().id(), job.lease_token()});
      }
      if (leases.empty()) continue;
      // The work itself (the jobs run side by side in the worker's slots).
      // It also widens the window in which a crash finds leases in a live
      // worker's hands.
      std::this_thread::sleep_for(kJobWork);
      if (!CheckLeasedOrHold(leases) || !Report(worker, leases)) return;
    }
  }

  // False when the crash is coming: the leases are then kept by a worker
  // that outlives the daemon, to be reported after the restart.
  bool CheckLeasedOrHold(const std::vector<HeldLease>& leases) {
    std::lock_guard lock(ledger_.mu);
    for (const HeldLease& lease : leases) {
      if (ledger_.completed.count(lease.id)) {
        ledger_.errors.push_back("completed job " + std::to_string(lease.id) +
                                 " was leased again");
      }
    }
    if (!crashing_) return true;
    ledger_.held.insert(ledger_.held.end(), leases.begin(), leases.end());
    return false;
  }

  // Completes the leases; false when the call failed (then their outcome
  // is unknown).
  bool Report(v1::Worker::Stub& worker, const std::vector<HeldLease>& leases) {
    v1::CompleteRequest request;
    for (const HeldLease& lease : leases) {
      v1::Completion* done = request.add_completions();
      done->set_job_id(lease.id);
      done->set_lease_token(lease.token);
      *done->mutable_runtime() = TimeUtil::MillisecondsToDuration(
          std::chrono::duration_cast<std::chrono::milliseconds>(kJobWork)
              .count());
    }
    v1::AckResponse acks;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(10));
    grpc::Status status = worker.Complete(&ctx, request, &acks);
    if (!status.ok()) {
      std::lock_guard lock(ledger_.mu);
      ledger_.unsure.insert(ledger_.unsure.end(), leases.begin(), leases.end());
      if (!crashing_) ledger_.errors.push_back("Complete: " +
                                               status.error_message());
      return false;
    }
    std::vector<uint64_t> done;
    for (int i = 0; i < acks.results_size(); ++i) {
      if (acks.results(i).code() == 0) {
        done.push_back(leases[i].id);
      } else {
        ledger_.Error("Complete of job " + std::to_string(leases[i].id) +
                      ": " + acks.results(i).message());
      }
    }
    Acknowledge(done, ledger_.completed, "completed twice: job ");
    return true;
  }

  void Acknowledge(const std::vector<uint64_t>& ids,
                   std::unordered_set<uint64_t>& into, const char* twice) {
    std::lock_guard lock(ledger_.mu);
    for (uint64_t id : ids) {
      if (!into.insert(id).second) {
        ledger_.errors.push_back(twice + std::to_string(id));
      }
    }
    ledger_.ops += ids.size();
    ledger_.progressed.notify_all();
  }

  Ledger& ledger_;
  std::atomic<bool> crashing_{false};
  std::vector<std::thread> threads_;
};

grpc::Status CompleteOne(v1::Worker::Stub& worker, HeldLease lease,
                         v1::AckResponse* acks) {
  v1::CompleteRequest request;
  v1::Completion* done = request.add_completions();
  done->set_job_id(lease.id);
  done->set_lease_token(lease.token);
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(10));
  return worker.Complete(&ctx, request, acks);
}

// The result code of completing one lease (-1 when the call itself failed).
int CompleteCode(v1::Worker::Stub& worker, HeldLease lease) {
  v1::AckResponse acks;
  grpc::Status status = CompleteOne(worker, lease, &acks);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return status.ok() && acks.results_size() == 1 ? acks.results(0).code() : -1;
}

// A job outside the load (its own pool and tenant) leased by a worker that
// will outlive the crash, with a lease long enough to outlive it too.
HeldLease LeaseKeptJob(FairqdProcess& fairqd) {
  v1::EnqueueRequest request;
  request.mutable_job()->set_tenant("keeper");
  request.mutable_job()->set_pool("keep");
  *request.mutable_job()->mutable_lease_duration() =
      TimeUtil::SecondsToDuration(600);
  v1::EnqueueResponse enqueued;
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(10));
  grpc::Status status = fairqd.Producer()->Enqueue(&ctx, request, &enqueued);
  EXPECT_TRUE(status.ok()) << status.error_message();

  v1::LeaseRequest lease;
  lease.set_worker_id("live-worker");
  lease.add_pools("keep");
  lease.set_slots(1);
  *lease.mutable_wait() = TimeUtil::SecondsToDuration(5);
  v1::LeaseResponse leased;
  grpc::ClientContext lease_ctx;
  lease_ctx.set_deadline(Deadline(15));
  status = fairqd.Worker()->Lease(&lease_ctx, lease, &leased);
  EXPECT_TRUE(status.ok()) << status.error_message();
  if (leased.jobs_size() != 1) {
    ADD_FAILURE() << "the kept job was not leased";
    return {0, 0};
  }
  EXPECT_EQ(leased.jobs(0).job().id(), enqueued.job_id());
  return {leased.jobs(0).job().id(), leased.jobs(0).lease_token()};
}

// After a restart: the live workers report what they held.
void CompleteSurvivingLeases(FairqdProcess& fairqd, Ledger& ledger,
                             HeldLease kept) {
  auto worker = fairqd.Worker();
  v1::HeartbeatRequest beat;
  beat.set_job_id(kept.id);
  beat.set_lease_token(kept.token);
  v1::HeartbeatResponse beat_response;
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(10));
  grpc::Status status = worker->Heartbeat(&ctx, beat, &beat_response);
  EXPECT_TRUE(status.ok()) << "kept lease: " << status.error_message();
  EXPECT_EQ(CompleteCode(*worker, kept), grpc::StatusCode::OK)
      << "the live worker's lease did not survive the crash";

  // Held: Complete was never sent, so the lease must be intact. A lease
  // goes out before its enqueue is synced, so a job whose enqueue was never
  // acknowledged may be gone with it.
  for (const HeldLease& lease : ledger.held) {
    int code = CompleteCode(*worker, lease);
    if (code == grpc::StatusCode::NOT_FOUND &&
        !ledger.enqueued.count(lease.id)) {
      continue;
    }
    EXPECT_EQ(code, grpc::StatusCode::OK)
        << "held lease of job " << lease.id << " lost in the crash";
    ledger.completed.insert(lease.id);
  }
  // Unsure: the first Complete may have committed before the kill.
  for (const HeldLease& lease : ledger.unsure) {
    int code = CompleteCode(*worker, lease);
    EXPECT_TRUE(code == grpc::StatusCode::OK ||
                code == grpc::StatusCode::NOT_FOUND)
        << "retried Complete of job " << lease.id << ": code " << code;
    ledger.completed.insert(lease.id);
  }
  std::printf(
      "[ crash    ] live workers completed %zu held + %zu unsure "
      "leases after the restart (%d adopted so far, the log says)\n",
      ledger.held.size(), ledger.unsure.size(),
      CountOf(fairqd.Log(), "lease adopted after a restart"));
  ledger.held.clear();
  ledger.unsure.clear();
}

// Every acknowledged enqueue is live, or gone because it was completed.
void CheckAcknowledgedJobs(FairqdProcess& fairqd, const Ledger& ledger) {
  auto producer = fairqd.Producer();
  size_t live = 0;
  for (uint64_t id : ledger.enqueued) {
    v1::GetJobRequest request;
    request.set_job_id(id);
    v1::Job job;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(10));
    grpc::Status status = producer->GetJob(&ctx, request, &job);
    if (ledger.completed.count(id)) {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND)
          << "completed job " << id << " is back: state " << job.state();
      continue;
    }
    ASSERT_TRUE(status.ok()) << "acknowledged job " << id
                             << " lost: " << status.error_message();
    EXPECT_TRUE(job.state() == v1::JOB_STATE_READY ||
                job.state() == v1::JOB_STATE_SCHEDULED ||
                job.state() == v1::JOB_STATE_LEASED)
        << "job " << id << " in state " << job.state();
    ++live;
  }
  std::printf("[ crash    ] %zu acknowledged jobs: %zu live, %zu completed\n",
              ledger.enqueued.size(), live, ledger.enqueued.size() - live);
}

// Jobs not finished yet (READY, SCHEDULED or LEASED); none may be DEAD.
uint64_t Unfinished(v1::Admin::Stub& admin) {
  v1::GetQueueStatsResponse response;
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(10));
  grpc::Status status =
      admin.GetQueueStats(&ctx, v1::GetQueueStatsRequest(), &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  uint64_t total = 0;
  for (const v1::TenantStats& s : response.tenants()) {
    EXPECT_EQ(s.dead(), 0u) << s.tenant();
    total += s.ready() + s.scheduled() + s.leased();
  }
  return total;
}

// Leases and completes until nothing is left, including jobs whose lease
// reply died with the daemon (they lapse and come back within a lease
// duration plus backoff). No completed job may turn up.
void DrainEverything(FairqdProcess& fairqd, Ledger& ledger) {
  auto worker = fairqd.Worker();
  auto admin = fairqd.Admin();
  Clock::time_point give_up =
      Clock::now() + std::chrono::seconds(3 * kLeaseSeconds + 10);
  size_t drained = 0;
  while (Unfinished(*admin) > 0) {
    ASSERT_LT(Clock::now(), give_up) << "drain did not finish";
    v1::LeaseRequest request;
    request.set_worker_id("drainer");
    request.set_slots(200);
    request.set_max_jobs(200);
    *request.mutable_wait() = TimeUtil::MillisecondsToDuration(500);
    v1::LeaseResponse leased;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(10));
    grpc::Status status = worker->Lease(&ctx, request, &leased);
    ASSERT_TRUE(status.ok()) << status.error_message();
    for (const v1::LeasedJob& job : leased.jobs()) {
      uint64_t id = job.job().id();
      ASSERT_TRUE(ledger.completed.insert(id).second)
          << "completed job " << id << " was leased again";
      EXPECT_EQ(CompleteCode(*worker, {id, job.lease_token()}),
                grpc::StatusCode::OK);
      ++drained;
    }
  }
  std::printf("[ crash    ] drained %zu jobs after the last restart\n",
              drained);
}

TEST(CrashTest, AcknowledgedWorkSurvivesKillsUnderLoad) {
  FairqdProcess fairqd;
  ASSERT_TRUE(fairqd.Start()) << fairqd.error();
  Ledger ledger;
  for (uint64_t crash_at : kCrashPoints) {
    SCOPED_TRACE("crash after " + std::to_string(crash_at) + " operations");
    HeldLease kept = LeaseKeptJob(fairqd);
    ASSERT_NE(kept.id, 0u);
    {
      std::lock_guard lock(ledger.mu);
      ledger.ops = 0;
    }
    Load load(fairqd, ledger);
    bool reached;
    {
      std::unique_lock lock(ledger.mu);
      reached = ledger.progressed.wait_until(
          lock,
          Clock::now() + std::chrono::milliseconds(
                             static_cast<int64_t>(kCycleLimitSeconds * 1000)),
          [&] { return ledger.ops >= crash_at || !ledger.errors.empty(); });
    }
    load.Crashing();
    fairqd.Kill();
    load.Join();
    ASSERT_TRUE(ledger.errors.empty())
        << ledger.errors.size() << " errors, first: " << ledger.errors[0];
    ASSERT_TRUE(reached) << "load did not reach " << crash_at << " operations";

    Clock::time_point restart_start = Clock::now();
    ASSERT_TRUE(fairqd.Start()) << fairqd.error();
    std::printf("[ crash    ] killed after %llu operations; restart %.0f ms\n",
                static_cast<unsigned long long>(ledger.ops),
                std::chrono::duration<double, std::milli>(Clock::now() -
                                                          restart_start)
                    .count());
    CompleteSurvivingLeases(fairqd, ledger, kept);
    CheckAcknowledgedJobs(fairqd, ledger);
    if (HasFatalFailure()) return;
  }
  DrainEverything(fairqd, ledger);
  for (uint64_t id : ledger.enqueued) {
    EXPECT_TRUE(ledger.completed.count(id)) << "job " << id << " never ran";
  }
}

}  // namespace
}  // namespace fairq::testing
