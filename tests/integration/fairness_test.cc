// Fairness end to end: a real fairqd, real worker threads, compressed time.
//
// The pool is 8 worker slots: 8 threads, each a worker with slots = 1 that
// asks Lease for a job (at once, then by long poll if there was none),
// "runs" it by sleeping its length (the sleep is the workload, not a wait
// for the daemon) and reports Complete. Eight
// single-slot workers rather than one worker with slots = 8: that is how
// most deployments look, and each slot's lease and complete round trips
// then overlap the others' work as they would in production.
//
// Time is the domain's reference scenarios compressed 50x: jobs of 20 ms
// instead of 1 s, so the scheduler's quantum (worker-seconds of credit per
// turn, "near the typical job length" per config/fairqd.yaml) and credit
// ceiling are scaled by the same factor: quantum 0.02, max_deficit 0.08.
//
// Waits are measured client-side on one steady clock: enqueue call start to
// the worker's receipt of the lease.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "google/protobuf/util/time_util.h"
#include "tests/integration/fairqd_process.h"

namespace fairq::testing {
namespace {

using google::protobuf::util::TimeUtil;
using Clock = std::chrono::steady_clock;
using Millis = std::chrono::duration<double, std::milli>;

constexpr int kSlots = 8;
constexpr auto kJobLength = std::chrono::milliseconds(20);
constexpr double kJobSeconds = 0.020;

constexpr char kCompressedTime[] =
    "scheduling:\n"
    "  quantum: 0.02\n"
    "  max_deficit: 0.08\n";

v1::JobSpec Job(const std::string& tenant) {
  v1::JobSpec spec;
  spec.set_tenant(tenant);
  spec.set_estimated_cost_seconds(kJobSeconds);
  return spec;
}

struct JobRun {
  std::string tenant;
  Clock::time_point leased;
  Clock::time_point done;
};

// A Lease call without wait that was answered with no job.
struct EmptyLease {
  Clock::time_point called;
  Clock::time_point answered;
};

// The worker slots. Each thread loops Lease -> work -> Complete until
// stopped; a Lease waits at most 200 ms, so stopping is prompt.
class WorkerSlots {
 public:
  WorkerSlots(FairqdProcess& fairqd, int slots) {
    for (int i = 0; i < slots; ++i) {
      threads_.emplace_back([this, i, worker = fairqd.Worker()] {
        Work(*worker, "slot-" + std::to_string(i));
      });
    }
  }
  ~WorkerSlots() { Stop(); }

  void Stop() {
    stop_ = true;
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

  // Blocks until `count` jobs were completed in all, or `limit` passes.
  bool WaitCompleted(size_t count, std::chrono::seconds limit) {
    std::unique_lock lock(mu_);
    return progressed_.wait_for(lock, limit, [&] {
      return completed_ >= count || !errors_.empty();
    });
  }
  // Blocks until `count` jobs of `tenant` were leased, or `limit` passes.
  bool WaitLeased(const std::string& tenant, size_t count,
                  std::chrono::seconds limit) {
    std::unique_lock lock(mu_);
    return progressed_.wait_for(lock, limit, [&] {
      return leased_by_tenant_[tenant] >= count || !errors_.empty();
    });
  }
  // Jobs leased so far, by id.
  std::map<uint64_t, JobRun> runs() {
    std::lock_guard lock(mu_);
    return runs_;
  }
  std::vector<EmptyLease> empty_leases() {
    std::lock_guard lock(mu_);
    return empty_leases_;
  }
  std::vector<std::string> errors() {
    std::lock_guard lock(mu_);
    return errors_;
  }

 private:
  // One Lease call; false when it failed (the error is recorded).
  bool Lease(v1::Worker::Stub& worker, const std::string& id,
             std::chrono::milliseconds wait, v1::LeaseResponse* leased) {
    v1::LeaseRequest request;
    request.set_worker_id(id);
    request.set_slots(1);
    *request.mutable_wait() = TimeUtil::MillisecondsToDuration(wait.count());
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(10));
    Clock::time_point called = Clock::now();
    grpc::Status status = worker.Lease(&ctx, request, leased);
    if (!status.ok()) {
      Error("Lease: " + status.error_message());
      return false;
    }
    if (wait.count() == 0 && leased->jobs().empty()) {
      std::lock_guard lock(mu_);
      empty_leases_.push_back({called, Clock::now()});
    }
    return true;
  }

  // Each slot asks without waiting first and long-polls only when told
  // there is nothing for it: "no work" answers are then the broker's own
  // verdict at one instant, which the flood test checks against A's
  // backlog.
  void Work(v1::Worker::Stub& worker, const std::string& id) {
    while (!stop_) {
      v1::LeaseResponse leased;
      if (!Lease(worker, id, std::chrono::milliseconds(0), &leased)) return;
      if (leased.jobs().empty() &&
          !Lease(worker, id, std::chrono::milliseconds(200), &leased)) {
        return;
      }
      Clock::time_point at = Clock::now();
      if (leased.jobs().empty()) continue;
      const v1::LeasedJob& job = leased.jobs(0);
      {
        std::lock_guard lock(mu_);
        runs_[job.job().id()] = {job.job().spec().tenant(), at, {}};
        ++leased_by_tenant_[job.job().spec().tenant()];
        progressed_.notify_all();
      }
      std::this_thread::sleep_for(kJobLength);  // the job itself
      v1::CompleteRequest complete;
      v1::Completion* done = complete.add_completions();
      done->set_job_id(job.job().id());
      done->set_lease_token(job.lease_token());
      *done->mutable_runtime() = TimeUtil::MillisecondsToDuration(
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                                at)
              .count());
      v1::AckResponse acks;
      grpc::ClientContext complete_ctx;
      complete_ctx.set_deadline(Deadline(10));
      grpc::Status status = worker.Complete(&complete_ctx, complete, &acks);
      if (!status.ok()) return Error("Complete: " + status.error_message());
      if (acks.results(0).code() != 0) {
        return Error("Complete: " + acks.results(0).message());
      }
      std::lock_guard lock(mu_);
      runs_[job.job().id()].done = Clock::now();
      ++completed_;
      progressed_.notify_all();
    }
  }

  void Error(const std::string& what) {
    std::lock_guard lock(mu_);
    errors_.push_back(what);
    progressed_.notify_all();
  }

  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable progressed_;
  std::map<uint64_t, JobRun> runs_;
  std::map<std::string, size_t> leased_by_tenant_;
  std::vector<EmptyLease> empty_leases_;
  size_t completed_ = 0;
  std::vector<std::string> errors_;
  std::vector<std::thread> threads_;
};

// Enqueues `count` jobs of `tenant` in batches of 1,000; returns the ids.
std::vector<uint64_t> Flood(v1::Producer::Stub& producer,
                            const std::string& tenant, int count) {
  std::vector<uint64_t> ids;
  for (int first = 0; first < count; first += 1000) {
    v1::EnqueueBatchRequest request;
    for (int i = first; i < std::min(count, first + 1000); ++i) {
      *request.add_jobs() = Job(tenant);
    }
    v1::EnqueueBatchResponse response;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(30));
    grpc::Status status = producer.EnqueueBatch(&ctx, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    for (const v1::EnqueueResult& result : response.results()) {
      EXPECT_EQ(result.code(), 0) << result.message();
      ids.push_back(result.job_id());
    }
  }
  return ids;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(
      std::ceil(p * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

// The domain's "flood" scenario: tenant A drops 2,000 jobs at once while
// tenant B trickles one job every 40 ms (half a slot of work) until A's
// backlog is gone. Under FIFO each of B's jobs would queue behind A's whole
// remaining backlog: up to 2000 x 20 ms / 8 = 5 s, seconds on average. Under
// DRR with a one-job quantum, B's job is next in turn and waits only for
// the next free slot: a job length (20 ms) or less, plus round trips.
TEST(FairnessTest, TrickleTenantIsServedPromptlyWhileAFloodDrains) {
  constexpr int kFlood = 2000;
  constexpr auto kTrickleEvery = std::chrono::milliseconds(40);
  constexpr int kMaxTrickle = 400;  // 16 s of trickle: bounds the loop
  FairqdProcess fairqd(kCompressedTime);
  ASSERT_TRUE(fairqd.Start()) << fairqd.error();
  WorkerSlots slots(fairqd, kSlots);

  // B's producer, paced by a steady-clock schedule, runs until A's last
  // job has been leased.
  struct Sent {
    Clock::time_point at;     // the Enqueue call's start
    Clock::time_point acked;  // its answer: the job is in the broker
  };
  std::map<uint64_t, Sent> trickle_sent;
  std::atomic<bool> flood_leased{false};
  Clock::time_point start = Clock::now();
  std::thread trickle([&] {
    auto producer = fairqd.Producer();
    for (int k = 0; k < kMaxTrickle && !flood_leased; ++k) {
      std::this_thread::sleep_until(start + k * kTrickleEvery);
      v1::EnqueueRequest request;
      *request.mutable_job() = Job("B");
      v1::EnqueueResponse response;
      grpc::ClientContext ctx;
      ctx.set_deadline(Deadline(10));
      Clock::time_point sent = Clock::now();
      grpc::Status status = producer->Enqueue(&ctx, request, &response);
      EXPECT_TRUE(status.ok()) << status.error_message();
      if (status.ok()) trickle_sent[response.job_id()] = {sent, Clock::now()};
    }
  });
  auto producer = fairqd.Producer();
  std::vector<uint64_t> flood = Flood(*producer, "A", kFlood);
  Clock::time_point flood_queued = Clock::now();
  // A is fully leased within seconds; 30 s is a generous bound.
  bool drained = slots.WaitLeased("A", kFlood, std::chrono::seconds(30));
  flood_leased = true;
  trickle.join();
  ASSERT_TRUE(drained) << "A's flood was not leased within 30 s";
  ASSERT_EQ(flood.size(), static_cast<size_t>(kFlood));
  size_t total = flood.size() + trickle_sent.size();
  ASSERT_TRUE(slots.WaitCompleted(total, std::chrono::seconds(30)))
      << "not every job completed";
  slots.Stop();
  ASSERT_TRUE(slots.errors().empty()) << slots.errors()[0];

  std::map<uint64_t, JobRun> runs = slots.runs();
  std::vector<double> b_waits;
  std::vector<double> fifo_waits;  // what FIFO would have made B wait
  // A's jobs that reached a worker after B's job was in the broker and
  // before B's did: under FIFO all of A's backlog, under DRR a turn of A's.
  std::vector<double> overtaken_by;
  for (const auto& [id, sent] : trickle_sent) {
    Clock::time_point b_leased = runs.at(id).leased;
    b_waits.push_back(Millis(b_leased - sent.at).count());
    // A's jobs still queued when B's job arrived: FIFO puts B behind all.
    size_t ahead = 0, overtaking = 0;
    for (uint64_t a : flood) {
      Clock::time_point a_leased = runs.at(a).leased;
      ahead += a_leased > sent.at ? 1 : 0;
      overtaking += a_leased > sent.acked && a_leased < b_leased ? 1 : 0;
    }
    fifo_waits.push_back(static_cast<double>(ahead) * kJobSeconds * 1000 /
                         kSlots);
    overtaken_by.push_back(static_cast<double>(overtaking));
  }
  Clock::time_point a_done = start;
  for (uint64_t a : flood) a_done = std::max(a_done, runs.at(a).done);
  double a_ms = Millis(a_done - start).count();
  // Ideal: all the work (A's and B's) spread over every slot.
  double ideal_ms = static_cast<double>(total) * kJobSeconds * 1000 / kSlots;
  // Slots told "no work" while A still had jobs queued: a work-conserving
  // broker never says that. Grants reach workers in any order, so up to
  // kSlots - 1 of A's jobs "leased later" by the clock may already have
  // been granted when the empty answer was decided; with kSlots or more
  // still to come, at least one was queued then.
  std::vector<Clock::time_point> a_leases;
  for (uint64_t a : flood) a_leases.push_back(runs.at(a).leased);
  std::sort(a_leases.begin(), a_leases.end());
  size_t idle_with_backlog = 0;
  for (const EmptyLease& empty : slots.empty_leases()) {
    auto later = a_leases.end() - std::upper_bound(a_leases.begin(),
                                                   a_leases.end(),
                                                   empty.answered);
    idle_with_backlog += empty.called >= flood_queued && later >= kSlots;
  }
  std::printf(
      "[ fairness ] B: %zu jobs, wait p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, "
      "max %.1f ms (FIFO would be p50 %.0f ms, max %.0f ms); A's jobs "
      "leased ahead of one of B's once it was queued: p50 %.0f, p99 %.0f, "
      "max %.0f\n",
      b_waits.size(), Percentile(b_waits, 0.5), Percentile(b_waits, 0.9),
      Percentile(b_waits, 0.99), Percentile(b_waits, 1.0),
      Percentile(fifo_waits, 0.5), Percentile(fifo_waits, 1.0),
      Percentile(overtaken_by, 0.5), Percentile(overtaken_by, 0.99),
      Percentile(overtaken_by, 1.0));
  std::printf("[ fairness ] A: %d jobs done after %.0f ms (ideal %.0f ms, "
              "%.2fx); %zu empty leases while A had a backlog\n",
              kFlood, a_ms, ideal_ms, a_ms / ideal_ms, idle_with_backlog);

  // The scenario really made B compete with a deep backlog of A's.
  ASSERT_GE(b_waits.size(), 50u);
  EXPECT_GE(Percentile(fifo_waits, 0.5), 1000);
  // B is not queued behind A's backlog: once B's job is in the broker, A
  // leases at most one DRR turn ahead of it (its credit is capped at
  // max_deficit, 4 jobs), plus up to kSlots - 1 grants made earlier but
  // received later. Counted in leases, not milliseconds, so that a slow
  // machine cannot fail it (waits in time are fairq-bench's flood
  // scenario, docs/benchmarks.md); FIFO would put hundreds of A's ahead.
  EXPECT_LE(Percentile(overtaken_by, 0.99), 2 * kSlots);
  // Work conservation, exactly: no slot was told "no work" while A had
  // jobs queued. This holds however slow the machine is. (Checked against
  // a hard cap of 4 on A: ~2,000 such answers.)
  EXPECT_EQ(idle_with_backlog, 0u);
  // A's finish against the ideal is printed, not checked: it is a speed
  // (fairq-bench flood's target); that A gets every free slot is the exact
  // check above.
}

// The domain's "weights" scenario: two tenants of weights 3 and 1 both
// flooding receive worker time 3:1 while both have work. All jobs are the
// same length, so worker-seconds are proportional to jobs leased.
TEST(FairnessTest, WeightsThreeToOneSplitTheWorkersThreeToOne) {
  constexpr int kEach = 400;
  // Both have work for at least the first 500 dispatches (heavy runs out at
  // 400, when light has had ~133); 400 is inside that window.
  constexpr size_t kWindow = 400;
  FairqdProcess fairqd(std::string(kCompressedTime) +
                       "tenants:\n"
                       "  - {name: heavy, weight: 3}\n"
                       "  - {name: light, weight: 1}\n");
  ASSERT_TRUE(fairqd.Start()) << fairqd.error();
  auto producer = fairqd.Producer();
  // Both backlogs are in place before any worker asks.
  ASSERT_EQ(Flood(*producer, "light", kEach).size(), size_t{kEach});
  ASSERT_EQ(Flood(*producer, "heavy", kEach).size(), size_t{kEach});
  WorkerSlots slots(fairqd, kSlots);
  ASSERT_TRUE(slots.WaitCompleted(kWindow, std::chrono::seconds(30)));
  slots.Stop();
  ASSERT_TRUE(slots.errors().empty()) << slots.errors()[0];

  std::vector<JobRun> order;
  for (const auto& [id, run] : slots.runs()) order.push_back(run);
  std::sort(order.begin(), order.end(), [](const JobRun& a, const JobRun& b) {
    return a.leased < b.leased;
  });
  ASSERT_GE(order.size(), kWindow);
  size_t heavy = 0;
  for (size_t i = 0; i < kWindow; ++i) heavy += order[i].tenant == "heavy";
  double share = static_cast<double>(heavy) / kWindow;
  std::printf("[ fairness ] weights 3:1: heavy %zu of the first %zu leases "
              "(%.1f%%, ideal 75%%)\n",
              heavy, kWindow, share * 100);
  // DRR with a one-job quantum alternates 3 heavy, 1 light; the lease
  // times of 8 threads blur the order only at the window's edge.
  EXPECT_NEAR(share, 0.75, 0.05);
}

}  // namespace
}  // namespace fairq::testing
