// Worker against a real fairqd: outcomes map to Complete / Fail, heartbeats
// keep a long job's lease (and a prefetched one's), the yield flag reaches
// the handler, and Stop() lets handlers finish, leaves unleased work alone
// and gives back what overruns stop_timeout or was prefetched.
//
// Each test starts its own fairqd. Handlers tell the test what they saw
// through promises; every wait is bounded.
#include "fairq/client/worker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "client/sdk/stand_in_broker.h"
#include "client/sdk/tcp_relay.h"
#include "fairq/client/producer.h"
#include "fairq/v1/fairq.grpc.pb.h"
#include "tests/integration/fairqd_process.h"

namespace fairq::client {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr auto kBound = seconds(10);

template <typename T>
bool Arrives(std::future<T>& future, std::chrono::seconds within = kBound) {
  return future.wait_for(within) == std::future_status::ready;
}

// A job for the stand-in broker to hand out: token = id, a 30 s lease.
v1::LeasedJob StandInJob(uint64_t id) {
  v1::LeasedJob job;
  job.mutable_job()->set_id(id);
  job.set_lease_token(id);
  job.mutable_lease_duration()->set_seconds(30);
  return job;
}

// Starts `worker` with a handler that holds each job until `release` is
// set (at most kBound), then succeeds.
::testing::AssertionResult StartHolding(Worker& worker,
                                        std::shared_future<void> release) {
  Status started = worker.Start([release](JobContext&) {
    release.wait_for(kBound);
    return Outcome::Success();
  });
  if (started.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << started.ToString();
}

// Runs a worker with `options` on the stand-in broker's job, holds the job
// until `n` heartbeats came (at most kBound), then stops the worker: when
// the broker saw each beat.
std::vector<testing::StandInBroker::Clock::time_point> BeatsOfAHeldJob(
    testing::StandInBroker& broker, WorkerOptions options, size_t n) {
  auto worker = Worker::Create(broker.address(), std::move(options));
  EXPECT_TRUE(worker.ok()) << worker.status().ToString();
  if (!worker.ok()) return {};
  std::promise<void> release;
  EXPECT_TRUE(StartHolding(**worker, release.get_future().share()));
  std::vector<testing::StandInBroker::Clock::time_point> beats =
      broker.WaitForHeartbeats(n, kBound);
  release.set_value();
  (*worker)->Stop();
  return beats;
}

class WorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.Start()) << daemon_.error();
    auto producer = Producer::Create(daemon_.Channel());
    ASSERT_TRUE(producer.ok());
    producer_ = std::move(*producer);
  }

  uint64_t MustEnqueue(JobSpec spec) {
    StatusOr<EnqueueResult> result = producer_->Enqueue(spec);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? result->job_id : 0;
  }

  // A job whose retries wait a minute, so a failed attempt stays SCHEDULED
  // while the test looks.
  static JobSpec Job(const std::string& tenant, const std::string& payload) {
    JobSpec spec;
    spec.tenant = tenant;
    spec.payload = payload;
    spec.retry_initial_backoff = seconds(60);
    spec.retry_max_backoff = seconds(60);
    return spec;
  }

  std::unique_ptr<Worker> MakeWorker(WorkerOptions options) {
    options.on_error = [this](const Status& error) {
      std::lock_guard<std::mutex> lock(mu_);
      errors_ += error.ToString() + "\n";
    };
    auto worker = Worker::Create(daemon_.Channel(), std::move(options));
    EXPECT_TRUE(worker.ok()) << worker.status().ToString();
    return worker.ok() ? std::move(*worker) : nullptr;
  }

  // NOT_FOUND (the job succeeded and was removed) reads as SUCCEEDED.
  // The tenant's worker-seconds as fairqd charged them.
  double WorkerSeconds(const std::string& tenant) {
    v1::GetQueueStatsRequest request;
    request.set_tenant(tenant);
    v1::GetQueueStatsResponse response;
    grpc::ClientContext context;
    context.set_deadline(testing::Deadline());
    EXPECT_TRUE(
        daemon_.Admin()->GetQueueStats(&context, request, &response).ok());
    double total = 0;
    for (const v1::TenantStats& stats : response.tenants()) {
      total += stats.worker_seconds();
    }
    return total;
  }

  v1::Job Lookup(uint64_t id) {
    v1::GetJobRequest request;
    request.set_job_id(id);
    v1::Job job;
    grpc::ClientContext context;
    context.set_deadline(testing::Deadline());
    grpc::Status status = daemon_.Producer()->GetJob(&context, request, &job);
    if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
      job.set_state(v1::JOB_STATE_SUCCEEDED);
    }
    return job;
  }

  std::string errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }

  // Runs `handler` on a 2-slot worker until it has taken `count` jobs, then
  // stops it, which returns once their reports are acknowledged. Null (and
  // a test failure) if the jobs did not all come within the bound.
  std::unique_ptr<Worker> HandleThenStop(int count, Handler handler) {
    std::atomic<int> handled{0};
    std::promise<void> all_handled;
    WorkerOptions options;
    options.slots = 2;
    auto worker = MakeWorker(options);
    if (worker == nullptr) return nullptr;
    EXPECT_TRUE(worker
                    ->Start([&](JobContext& job) {
                      if (++handled == count) all_handled.set_value();
                      return handler(job);
                    })
                    .ok());
    std::future<void> done = all_handled.get_future();
    bool arrived = Arrives(done);
    EXPECT_TRUE(arrived) << handled.load() << " of " << count << " handled";
    worker->Stop();
    return arrived ? std::move(worker) : nullptr;
  }

  testing::FairqdProcess daemon_;
  std::unique_ptr<Producer> producer_;
  std::mutex mu_;
  std::string errors_;  // from on_error
};

TEST_F(WorkerTest, OutcomesMapToCompleteAndFail) {
  uint64_t ok = MustEnqueue(Job("t", "ok"));
  uint64_t retry = MustEnqueue(Job("t", "retry"));
  uint64_t fail = MustEnqueue(Job("t", "fail"));
  uint64_t thrown = MustEnqueue(Job("t", "throw"));
  auto worker = HandleThenStop(4, [](JobContext& job) {
    if (job.payload() == "retry") return Outcome::Retry("busy");
    if (job.payload() == "fail") return Outcome::Fail("bad input");
    if (job.payload() == "throw") throw std::runtime_error("oops");
    return Outcome::Success();
  });
  ASSERT_NE(worker, nullptr);

  EXPECT_EQ(Lookup(ok).state(), v1::JOB_STATE_SUCCEEDED);
  v1::Job retried = Lookup(retry);
  EXPECT_EQ(retried.state(), v1::JOB_STATE_SCHEDULED);
  EXPECT_EQ(retried.last_error(), "busy");
  EXPECT_EQ(retried.attempts(), 1u);
  v1::Job dead = Lookup(fail);
  EXPECT_EQ(dead.state(), v1::JOB_STATE_DEAD);
  EXPECT_EQ(dead.last_error(), "bad input");
  v1::Job threw = Lookup(thrown);
  EXPECT_EQ(threw.state(), v1::JOB_STATE_SCHEDULED);
  EXPECT_EQ(threw.last_error(), "handler threw: oops");
  WorkerStats stats = worker->stats();
  EXPECT_EQ(stats.succeeded, 1u);
  EXPECT_EQ(stats.retried, 2u);
  EXPECT_EQ(stats.failed, 1u);
  EXPECT_EQ(stats.report_errors, 0u);
  EXPECT_EQ(errors(), "");
}

// Two slots over two pools: both handlers run at once (each waits for the
// other), and each report carries the handler's measured runtime, which
// fairqd charges the tenant: at least the 0.2 s each ran after meeting.
TEST_F(WorkerTest, SlotsOverPoolsRunTogetherAndReportTheirRuntime) {
  JobSpec in_a = Job("t", "ok");
  in_a.pool = "a";
  JobSpec in_b = Job("t", "fail");
  in_b.pool = "b";
  uint64_t done = MustEnqueue(in_a);
  uint64_t failed = MustEnqueue(in_b);
  WorkerOptions options;
  options.slots = 2;
  options.pools = {"a", "b"};
  auto worker = MakeWorker(options);
  ASSERT_NE(worker, nullptr);
  std::mutex mu;
  std::condition_variable met;
  int running = 0;
  std::promise<void> both_met;
  Clock::time_point started = Clock::now();
  ASSERT_TRUE(worker
                  ->Start([&](JobContext& job) {
                    {
                      std::unique_lock<std::mutex> lock(mu);
                      if (++running == 2) {
                        met.notify_all();
                        both_met.set_value();
                      } else {
                        met.wait_for(lock, kBound,
                                     [&] { return running == 2; });
                      }
                    }
                    std::this_thread::sleep_for(milliseconds(200));
                    return job.payload() == "ok" ? Outcome::Success()
                                                 : Outcome::Fail("no");
                  })
                  .ok());
  std::future<void> met_both = both_met.get_future();
  ASSERT_TRUE(Arrives(met_both)) << "the handlers never ran together";
  worker->Stop();  // lets both finish, and sends their reports
  double elapsed =
      std::chrono::duration<double>(Clock::now() - started).count();

  EXPECT_EQ(Lookup(done).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(Lookup(failed).state(), v1::JOB_STATE_DEAD);
  double charged = WorkerSeconds("t");
  EXPECT_GE(charged, 0.4);
  EXPECT_LE(charged, 2 * elapsed);
  EXPECT_EQ(errors(), "");
}

// The broker refuses a whole Fail call for one error over 4 KiB, or one that
// is not UTF-8; the worker sends such errors made fit instead.
TEST_F(WorkerTest, ErrorsTooLongOrNotUtf8StillReachTheBroker) {
  uint64_t longer = MustEnqueue(Job("t", "long"));
  uint64_t binary = MustEnqueue(Job("t", "binary"));
  auto worker = HandleThenStop(2, [](JobContext& job) {
    return job.payload() == "long" ? Outcome::Retry(std::string(5000, 'e'))
                                   : Outcome::Retry("bad \xFF byte");
  });
  ASSERT_NE(worker, nullptr);

  EXPECT_EQ(Lookup(longer).last_error(), std::string(4093, 'e') + "...");
  EXPECT_EQ(Lookup(binary).last_error(), "bad \xEF\xBF\xBD byte");
  WorkerStats stats = worker->stats();
  EXPECT_EQ(stats.retried, 2u);
  EXPECT_EQ(stats.report_errors, 0u);
  EXPECT_EQ(errors(), "");
}

// Lease 1 s, handler 2.5 s: without heartbeats the lease would lapse and the
// job run twice.
TEST_F(WorkerTest, HeartbeatsKeepALongJobsLease) {
  JobSpec spec = Job("t", "long");
  spec.lease_duration = seconds(1);
  uint64_t id = MustEnqueue(spec);
  std::atomic<int> runs{0};
  std::promise<std::pair<uint32_t, bool>> finished;  // attempts, interrupted
  auto worker = MakeWorker(WorkerOptions{});
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(worker->Start([&](JobContext& job) {
                     bool interrupted = job.WaitFor(milliseconds(2500));
                     if (++runs == 1) finished.set_value({job.attempts(), interrupted});
                     return Outcome::Success();
                   })
                  .ok());
  auto result = finished.get_future();
  ASSERT_TRUE(Arrives(result));
  auto [attempts, interrupted] = result.get();
  worker->Stop();

  EXPECT_EQ(attempts, 1u);
  EXPECT_FALSE(interrupted);  // no yield, no lost lease
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(Lookup(id).state(), v1::JOB_STATE_SUCCEEDED);
  WorkerStats stats = worker->stats();
  EXPECT_EQ(stats.succeeded, 1u);
  EXPECT_EQ(stats.lost_leases, 0u);
  // A 1 s lease spans 2.5 s only with two extensions or more (~7 are sent,
  // one every ~333 ms; fewer on a loaded machine).
  EXPECT_GE(stats.heartbeats, 2u);
  EXPECT_EQ(errors(), "");
}

// One slot, two tenants: whichever runs holds the whole pool while the
// other waits, so it is above its half share and heartbeats say yield.
TEST_F(WorkerTest, YieldFlagReachesTheHandler) {
  for (const char* tenant : {"a", "b"}) {
    JobSpec spec = Job(tenant, "x");
    spec.lease_duration = seconds(1);
    MustEnqueue(spec);
  }
  std::promise<bool> first;  // the first handler's view of ShouldYield()
  std::atomic<bool> reported{false};
  auto worker = MakeWorker(WorkerOptions{});
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(worker->Start([&](JobContext& job) {
                     if (reported.exchange(true)) return Outcome::Success();
                     job.WaitFor(kBound);
                     first.set_value(job.ShouldYield());
                     return Outcome::Retry("yielded");
                   })
                  .ok());
  auto yielded = first.get_future();
  ASSERT_TRUE(Arrives(yielded, kBound + seconds(5)));
  EXPECT_TRUE(yielded.get());
  worker->Stop();
}

TEST_F(WorkerTest, StopLetsTheRunningHandlerFinishAndLeasesNoMore) {
  uint64_t ids[3];
  for (uint64_t& id : ids) id = MustEnqueue(Job("t", "x"));
  std::promise<void> started;
  std::promise<bool> saw_stopping;
  WorkerOptions options;
  options.slots = 1;
  auto worker = MakeWorker(options);
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(worker->Start([&](JobContext& job) {
                     started.set_value();
                     saw_stopping.set_value(job.WaitFor(seconds(20)) &&
                                            job.Stopping());
                     return Outcome::Success();
                   })
                  .ok());
  std::future<void> running = started.get_future();
  ASSERT_TRUE(Arrives(running));
  Clock::time_point stop = Clock::now();
  worker->Stop();
  EXPECT_LT(Clock::now() - stop, seconds(10));
  std::future<bool> stopping = saw_stopping.get_future();
  ASSERT_TRUE(Arrives(stopping));
  EXPECT_TRUE(stopping.get());

  int succeeded = 0, untouched = 0;
  for (uint64_t id : ids) {
    v1::Job job = Lookup(id);
    if (job.state() == v1::JOB_STATE_SUCCEEDED) ++succeeded;
    if (job.state() == v1::JOB_STATE_READY && job.attempts() == 0) ++untouched;
  }
  EXPECT_EQ(succeeded, 1);
  EXPECT_EQ(untouched, 2);
  EXPECT_EQ(worker->stats().leased, 1u);
  EXPECT_EQ(worker->stats().given_back, 0u);
}

TEST_F(WorkerTest, StopGivesBackAHandlerThatOverrunsStopTimeout) {
  uint64_t id = MustEnqueue(Job("t", "stubborn"));
  std::promise<void> started;
  std::promise<bool> saw_cancel;
  WorkerOptions options;
  options.stop_timeout = milliseconds(200);
  auto worker = MakeWorker(options);
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(worker->Start([&](JobContext& job) {
                     started.set_value();
                     saw_cancel.set_value(job.WaitForCancel(seconds(20)));
                     return Outcome::Success();  // too late: discarded
                   })
                  .ok());
  std::future<void> running = started.get_future();
  ASSERT_TRUE(Arrives(running));
  worker->Stop();
  std::future<bool> cancelled = saw_cancel.get_future();
  ASSERT_TRUE(Arrives(cancelled));
  EXPECT_TRUE(cancelled.get());

  v1::Job job = Lookup(id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SCHEDULED);  // retryable, attempt used
  EXPECT_EQ(job.attempts(), 1u);
  EXPECT_NE(job.last_error().find("stop"), std::string::npos)
      << job.last_error();
  EXPECT_EQ(worker->stats().given_back, 1u);
  EXPECT_EQ(worker->stats().succeeded, 0u);
}

// slots 1, prefetch 1: while the first job runs the worker holds one more
// (and no third), heartbeats keep that waiting job's lease past its 1 s
// duration, and it then runs on its first attempt. One tenant, so jobs are
// leased in enqueue order and ids[0] is the one that runs first.
TEST_F(WorkerTest, APrefetchedJobWaitsUnderHeartbeats) {
  JobSpec spec = Job("t", "x");
  spec.lease_duration = seconds(1);
  uint64_t ids[3];
  for (uint64_t& id : ids) id = MustEnqueue(spec);
  WorkerOptions options;
  options.slots = 1;
  options.prefetch = 1;
  auto worker = MakeWorker(options);
  ASSERT_NE(worker, nullptr);
  std::mutex mu;
  std::map<uint64_t, uint32_t> attempts;  // job id -> attempt it ran on
  uint64_t held_while_first_ran = 0;
  std::promise<void> all_ran;
  ASSERT_TRUE(worker->Start([&](JobContext& job) {
                     if (job.id() == ids[0]) {
                       job.WaitFor(milliseconds(2500));
                       held_while_first_ran = worker->stats().leased;
                     }
                     std::lock_guard<std::mutex> lock(mu);
                     attempts[job.id()] = job.attempts();
                     if (attempts.size() == 3) all_ran.set_value();
                     return Outcome::Success();
                   })
                  .ok());
  std::future<void> ran = all_ran.get_future();
  ASSERT_TRUE(Arrives(ran));
  worker->Stop();

  EXPECT_EQ(held_while_first_ran, 2u);
  for (uint64_t id : ids) {
    EXPECT_EQ(attempts[id], 1u) << "job " << id;
    EXPECT_EQ(Lookup(id).state(), v1::JOB_STATE_SUCCEEDED) << "job " << id;
  }
  WorkerStats stats = worker->stats();
  EXPECT_EQ(stats.succeeded, 3u);
  EXPECT_EQ(stats.lost_leases, 0u);
  EXPECT_EQ(stats.report_errors, 0u);
  EXPECT_EQ(errors(), "");
}

// A worker that holds one job running and one prefetched, and a test that
// knows when both are held (leased == 2).
class PrefetchStopTest : public WorkerTest {
 protected:
  // Starts a slots-1, prefetch-1 worker over two fresh jobs; `handler`
  // runs every job. Returns once both are leased: the first is given to
  // the slot (its handler may not have started yet) and the second waits.
  void StartHolding(milliseconds stop_timeout, Handler handler) {
    first_ = MustEnqueue(Job("t", "x"));
    second_ = MustEnqueue(Job("t", "x"));
    WorkerOptions options;
    options.slots = 1;
    options.prefetch = 1;
    options.stop_timeout = stop_timeout;
    worker_ = MakeWorker(options);
    ASSERT_NE(worker_, nullptr);
    ASSERT_TRUE(worker_->Start(std::move(handler)).ok());
    Clock::time_point give_up = Clock::now() + kBound;
    while (worker_->stats().leased < 2 && Clock::now() < give_up) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    ASSERT_EQ(worker_->stats().leased, 2u);
  }

  uint64_t first_ = 0, second_ = 0;  // leased in this order (one tenant: FIFO)
  std::unique_ptr<Worker> worker_;
};

// A graceful stop finishes the jobs the worker holds: the prefetched one
// still starts, and sees Stopping() from the start.
TEST_F(PrefetchStopTest, StopStillRunsThePrefetchedJob) {
  std::mutex mu;
  std::vector<std::pair<uint64_t, bool>> runs;  // job id, Stopping() at start
  std::promise<void> first_seen;
  ASSERT_NO_FATAL_FAILURE(StartHolding(seconds(20), [&](JobContext& job) {
    {
      std::lock_guard<std::mutex> lock(mu);
      runs.emplace_back(job.id(), job.Stopping());
      if (runs.size() == 1) first_seen.set_value();
    }
    job.WaitFor(seconds(20));  // returns once the worker is stopping
    return Outcome::Success();
  }));
  // Leased is not yet started: stop only once the first handler looked.
  std::future<void> seen = first_seen.get_future();
  ASSERT_TRUE(Arrives(seen));
  worker_->Stop();

  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], std::make_pair(first_, false));
  EXPECT_EQ(runs[1], std::make_pair(second_, true));
  EXPECT_EQ(Lookup(first_).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(Lookup(second_).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(worker_->stats().given_back, 0u);
}

// At stop_timeout, a prefetched job that never got a slot is released,
// READY again with its attempt not counted (it was failed, using one up, so
// a worker that stopped could send a job DEAD), while the handler that
// overran is failed and charged the time it ran (it held the slot).
TEST_F(PrefetchStopTest, StopGivesBackAPrefetchedJobLeftAtTheDeadline) {
  std::atomic<int> runs{0};
  ASSERT_NO_FATAL_FAILURE(
      StartHolding(milliseconds(200), [&](JobContext& job) {
        ++runs;
        job.WaitForCancel(seconds(20));  // ignores Stopping(): overruns
        return Outcome::Success();
      }));
  worker_->Stop();

  EXPECT_EQ(runs.load(), 1);
  v1::Job unstarted = Lookup(second_);
  EXPECT_EQ(unstarted.state(), v1::JOB_STATE_READY);
  EXPECT_EQ(unstarted.attempts(), 0u);
  EXPECT_EQ(unstarted.last_error(), "");
  v1::Job overran = Lookup(first_);
  EXPECT_EQ(overran.state(), v1::JOB_STATE_SCHEDULED);
  EXPECT_EQ(overran.attempts(), 1u);
  EXPECT_NE(overran.last_error().find("handler still running"),
            std::string::npos)
      << overran.last_error();
  EXPECT_EQ(worker_->stats().given_back, 2u);
  EXPECT_GE(WorkerSeconds("t"), 0.2);
}

// A prefetched job whose lease lapses while it waits is never started: its
// heartbeat (every 2 s) finds the 1 s lease gone while the first job runs.
TEST_F(WorkerTest, APrefetchedJobWhoseLeaseLapsedIsNotStarted) {
  JobSpec long_lease = Job("t", "runs");
  long_lease.lease_duration = seconds(30);
  uint64_t first = MustEnqueue(long_lease);
  JobSpec short_lease = Job("t", "lapses");
  short_lease.lease_duration = seconds(1);
  uint64_t second = MustEnqueue(short_lease);
  WorkerOptions options;
  options.slots = 1;
  options.prefetch = 1;
  options.heartbeat_interval = seconds(2);
  auto worker = MakeWorker(options);
  ASSERT_NE(worker, nullptr);
  std::atomic<int> runs{0};
  std::promise<void> first_done;
  ASSERT_TRUE(worker->Start([&](JobContext& job) {
                     ++runs;
                     if (job.id() == first) {
                       job.WaitFor(milliseconds(3500));
                       first_done.set_value();
                     }
                     return Outcome::Success();
                   })
                  .ok());
  std::future<void> done = first_done.get_future();
  ASSERT_TRUE(Arrives(done));
  worker->Stop();

  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(Lookup(first).state(), v1::JOB_STATE_SUCCEEDED);
  v1::Job lapsed = Lookup(second);
  EXPECT_EQ(lapsed.state(), v1::JOB_STATE_SCHEDULED);  // retry backoff: 60 s
  EXPECT_EQ(lapsed.attempts(), 1u);
  EXPECT_EQ(worker->stats().lost_leases, 1u);
}

// The idle worker's long poll is cancelled: Stop() does not wait it out.
TEST_F(WorkerTest, StopCancelsTheLongPoll) {
  WorkerOptions options;
  options.lease_wait = seconds(25);
  auto worker = MakeWorker(options);
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(worker->Start([](JobContext&) { return Outcome::Success(); }).ok());
  Clock::time_point stop = Clock::now();
  worker->Stop();
  EXPECT_LT(Clock::now() - stop, seconds(5));
  EXPECT_EQ(worker->stats().leased, 0u);
  EXPECT_EQ(errors(), "");  // the cancelled poll is not an error
}

TEST_F(WorkerTest, RunReturnsAfterStop) {
  auto worker = MakeWorker(WorkerOptions{});
  ASSERT_NE(worker, nullptr);
  std::promise<void> handled;
  MustEnqueue(Job("t", "x"));
  auto run = std::async(std::launch::async, [&] {
    return worker->Run([&](JobContext&) {
      handled.set_value();
      return Outcome::Success();
    });
  });
  std::future<void> done = handled.get_future();
  ASSERT_TRUE(Arrives(done));
  EXPECT_EQ(worker->Start([](JobContext&) { return Outcome::Success(); })
                .code(),
            Code::kFailedPrecondition);
  worker->Stop();
  ASSERT_EQ(run.wait_for(kBound), std::future_status::ready);
  EXPECT_TRUE(run.get().ok());
}

// on_error runs on the worker's own threads (here the lease thread, as the
// broker refuses every Lease: its pool does not exist, and this fairqd
// creates none): Stop() from there begins the stop and Run() finishes it.
// It used to join its own thread, and the process aborted.
TEST(WorkerStopTest, OnErrorCanStopTheWorker) {
  testing::FairqdProcess daemon("auto_create_pools: false\n");
  ASSERT_TRUE(daemon.Start()) << daemon.error();
  WorkerOptions options;
  options.pools = {"nowhere"};
  Worker* self = nullptr;
  std::atomic<int> refusals{0};
  options.on_error = [&](const Status& error) {
    if (error.code() == Code::kInvalidArgument) ++refusals;
    self->Stop();
  };
  auto worker = Worker::Create(daemon.Channel(), options);
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  self = worker->get();
  auto run = std::async(std::launch::async, [&] {
    return (*worker)->Run([](JobContext&) { return Outcome::Success(); });
  });
  ASSERT_EQ(run.wait_for(kBound), std::future_status::ready);
  EXPECT_TRUE(run.get().ok());
  EXPECT_EQ(refusals.load(), 1);
}

// A handler may stop its worker too: it finishes, is reported, and nothing
// more is leased.
TEST_F(WorkerTest, AHandlerCanStopTheWorker) {
  uint64_t first = MustEnqueue(Job("t", "stop"));
  uint64_t second = MustEnqueue(Job("t", "later"));
  auto worker = MakeWorker(WorkerOptions{});
  ASSERT_NE(worker, nullptr);
  std::atomic<int> runs{0};
  auto run = std::async(std::launch::async, [&] {
    return worker->Run([&](JobContext& job) {
      ++runs;
      EXPECT_FALSE(job.Stopping());
      worker->Stop();
      EXPECT_TRUE(job.Stopping());
      return Outcome::Success();
    });
  });
  ASSERT_EQ(run.wait_for(kBound), std::future_status::ready);
  EXPECT_TRUE(run.get().ok());
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(Lookup(first).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(Lookup(second).state(), v1::JOB_STATE_READY);
  EXPECT_EQ(errors(), "");
}

// Destroying the worker is a Stop(): Run() returns, and it returns before
// the worker's members are gone.
TEST_F(WorkerTest, DestroyingTheWorkerEndsRun) {
  auto worker = MakeWorker(WorkerOptions{});
  ASSERT_NE(worker, nullptr);
  MustEnqueue(Job("t", "x"));
  std::promise<void> handled;
  auto run = std::async(std::launch::async, [&, w = worker.get()] {
    return w->Run([&](JobContext&) {
      handled.set_value();
      return Outcome::Success();
    });
  });
  std::future<void> done = handled.get_future();
  ASSERT_TRUE(Arrives(done));
  worker.reset();
  ASSERT_EQ(run.wait_for(kBound), std::future_status::ready);
  EXPECT_TRUE(run.get().ok());
}

// An empty Lease answer that comes at once is followed by a pause (the
// retry backoff, at least 100 ms), not by the next call: with lease_wait 0,
// and with a broker that does not wait the 10 s asked (the stand-in).
TEST(WorkerPauseTest, AnIdleWorkerAnsweredAtOncePausesBetweenLeases) {
  for (milliseconds wait : {milliseconds(0), milliseconds(10'000)}) {
    SCOPED_TRACE("lease_wait " + std::to_string(wait.count()) + " ms");
    testing::StandInBroker broker(/*refusals=*/0);
    ASSERT_FALSE(broker.address().empty());
    WorkerOptions options;
    options.lease_wait = wait;
    options.retry.initial_backoff = milliseconds(0);  // the floor applies
    options.retry.max_backoff = milliseconds(0);
    auto worker = Worker::Create(broker.address(), options);
    ASSERT_TRUE(worker.ok()) << worker.status().ToString();
    ASSERT_TRUE(
        (*worker)->Start([](JobContext&) { return Outcome::Success(); }).ok());
    std::vector<testing::StandInBroker::Clock::time_point> leases =
        broker.WaitForLeases(3, kBound);
    (*worker)->Stop();
    ASSERT_GE(leases.size(), 3u);
    EXPECT_GE(leases[2] - leases[0], milliseconds(200));
  }
}

// A broker whose clock is an hour behind this machine's: the lease's
// deadline looks long past. Heartbeats follow the lease_duration the lease
// carries (3 s: one a second), not the deadline (which gave the 50 ms
// floor: twenty a second).
TEST(WorkerClockTest, HeartbeatsFollowTheLeaseDurationNotTheClocks) {
  testing::StandInBroker broker(/*refusals=*/0);
  ASSERT_FALSE(broker.address().empty());
  v1::LeasedJob job;
  job.mutable_job()->set_id(7);
  job.set_lease_token(1);
  job.mutable_deadline()->set_seconds(
      std::chrono::duration_cast<seconds>(
          (std::chrono::system_clock::now() - std::chrono::hours(1))
              .time_since_epoch())
          .count());
  job.mutable_lease_duration()->set_seconds(3);
  broker.Offer(job);
  auto worker = Worker::Create(broker.address(), WorkerOptions{});
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  std::promise<void> release;
  ASSERT_TRUE(StartHolding(**worker, release.get_future().share()));
  std::vector<testing::StandInBroker::Clock::time_point> leases =
      broker.WaitForLeases(1, kBound);
  std::vector<testing::StandInBroker::Clock::time_point> beats =
      broker.WaitForHeartbeats(2, kBound);
  release.set_value();
  (*worker)->Stop();
  ASSERT_FALSE(leases.empty());
  ASSERT_EQ(beats.size(), 2u);
  EXPECT_GE(beats[0] - leases[0], milliseconds(900));
  EXPECT_GE(beats[1] - beats[0], milliseconds(900));
}

// The lease length a heartbeat's answer carries paces the next beats: a
// lease granted for 600 ms (a beat every 200 ms) that the broker's answers
// say now lasts 6 s is beaten every 2 s from the first answer on. (The
// other way round, a restart that shortens it, is WorkerRestartTest.)
TEST(WorkerClockTest, HeartbeatsFollowTheLeaseLengthOfTheLastAnswer) {
  testing::StandInBroker broker(/*refusals=*/0);
  ASSERT_FALSE(broker.address().empty());
  v1::LeasedJob job = StandInJob(7);
  job.mutable_lease_duration()->set_seconds(0);
  job.mutable_lease_duration()->set_nanos(600'000'000);
  broker.Offer(job);
  broker.LeaseLengthOnHeartbeat(6);
  std::vector<testing::StandInBroker::Clock::time_point> beats =
      BeatsOfAHeldJob(broker, WorkerOptions{}, 2);
  ASSERT_EQ(beats.size(), 2u);
  EXPECT_GE(beats[1] - beats[0], milliseconds(1500));
}

// A configured pace too slow for the leases the broker grants is said once,
// through on_error, when the first such lease comes (the second, in a later
// Lease call, says nothing more); a pace well under them is not reported.
TEST(WorkerClockTest, AHeartbeatIntervalOverHalfALeaseIsReportedOnce) {
  auto job = [](uint64_t id) {
    v1::LeasedJob leased = StandInJob(id);
    leased.mutable_lease_duration()->set_seconds(0);
    leased.mutable_lease_duration()->set_nanos(600'000'000);
    return leased;
  };
  for (milliseconds every : {milliseconds(400), milliseconds(200)}) {
    testing::StandInBroker broker(/*refusals=*/0);
    ASSERT_FALSE(broker.address().empty());
    broker.Offer(job(1));
    std::mutex mu;
    std::vector<std::string> errors;
    WorkerOptions options;
    options.slots = 2;  // both jobs at once: one warning still
    options.heartbeat_interval = every;
    options.on_error = [&](const Status& error) {
      std::lock_guard<std::mutex> lock(mu);
      errors.push_back(error.ToString());
    };
    auto worker = Worker::Create(broker.address(), options);
    ASSERT_TRUE(worker.ok()) << worker.status().ToString();
    std::promise<void> release;
    ASSERT_TRUE(StartHolding(**worker, release.get_future().share()));
    broker.WaitForLeases(1, kBound);
    broker.Offer(job(2));
    Clock::time_point give_up = Clock::now() + kBound;
    while ((*worker)->stats().leased < 2 && Clock::now() < give_up) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    EXPECT_EQ((*worker)->stats().leased, 2u);
    release.set_value();
    (*worker)->Stop();
    std::lock_guard<std::mutex> lock(mu);
    auto warned = std::count_if(errors.begin(), errors.end(), [](auto& e) {
      return e.find("WorkerOptions.heartbeat_interval") != std::string::npos;
    });
    EXPECT_EQ(warned, every == milliseconds(400) ? 1 : 0) << every.count();
  }
}

// A restart that lowers default_lease_seconds shortens the leases of jobs
// that leave their length to the broker: each heartbeat after it extends
// the lease by 1 s instead of 9. The worker, beating every 3 s as the
// grant asked, keeps the lease only by following the length each answer
// gives. (Until its first beat after the restart the lease lasts the
// granted 9 s.) The worker reaches fairqd through a relay whose port stays
// put.
TEST(WorkerRestartTest, HeartbeatsFollowALeaseARestartShortened) {
  testing::FairqdProcess daemon("default_lease_seconds: 9");
  ASSERT_TRUE(daemon.Start()) << daemon.error();
  testing::TcpRelay relay;
  ASSERT_TRUE(relay.ok());
  relay.set_target(daemon.port());
  auto producer = Producer::Create(daemon.Channel());
  ASSERT_TRUE(producer.ok());
  JobSpec spec;
  spec.tenant = "t";
  StatusOr<EnqueueResult> enqueued = (*producer)->Enqueue(spec);
  ASSERT_TRUE(enqueued.ok()) << enqueued.status().ToString();
  producer->reset();

  std::mutex mu;
  std::string errors;
  WorkerOptions options;
  options.slots = 1;
  options.on_error = [&](const Status& error) {
    std::lock_guard<std::mutex> lock(mu);
    errors += error.ToString() + "\n";
  };
  auto worker = Worker::Create(relay.address(), options);
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  std::promise<void> started, release;
  std::shared_future<void> released = release.get_future().share();
  ASSERT_TRUE((*worker)
                  ->Start([&started, released](JobContext&) {
                    started.set_value();
                    released.wait_for(3 * kBound);
                    return Outcome::Success();
                  })
                  .ok());
  std::future<void> running = started.get_future();
  ASSERT_TRUE(Arrives(running));

  relay.set_target(0);
  relay.DropConnections();  // fairqd's SIGTERM waits for open connections
  ASSERT_EQ(daemon.Terminate(), 0) << daemon.Log();
  daemon.SetConfig("default_lease_seconds: 1");
  ASSERT_TRUE(daemon.Start()) << daemon.error();
  relay.set_target(daemon.port());
  // Four answered beats span at least a second of 1 s leases after the
  // restart; the old pace loses the lease at the second.
  const uint64_t beats = (*worker)->stats().heartbeats;
  Clock::time_point give_up = Clock::now() + 2 * kBound;
  while ((*worker)->stats().heartbeats < beats + 4 &&
         (*worker)->stats().lost_leases == 0 && Clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  release.set_value();
  (*worker)->Stop();
  WorkerStats stats = (*worker)->stats();
  EXPECT_EQ(stats.lost_leases, 0u);
  EXPECT_GE(stats.heartbeats, beats + 4);
  EXPECT_EQ(stats.succeeded, 1u);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(errors.find("lease lost"), std::string::npos) << errors;
}

// Heartbeats of different jobs are in flight at once. The stand-in broker
// answers none until it holds one for each of the worker's four jobs:
// heartbeats sent one at a time never get there, each running out its
// deadline (the 300 ms interval) first, and their leases would lapse.
TEST(WorkerHeartbeatTest, HeartbeatsOfDifferentJobsAreInFlightAtOnce) {
  constexpr int kJobs = 4;
  testing::StandInBroker broker(/*refusals=*/0);
  ASSERT_FALSE(broker.address().empty());
  broker.HoldHeartbeats(kJobs);
  for (uint64_t id = 1; id <= kJobs; ++id) broker.Offer(StandInJob(id));
  WorkerOptions options;
  options.slots = kJobs;
  options.heartbeat_interval = milliseconds(300);
  std::mutex mu;
  std::vector<Status> errors;
  options.on_error = [&](const Status& status) {
    std::lock_guard<std::mutex> lock(mu);
    errors.push_back(status);
  };
  auto worker = Worker::Create(broker.address(), options);
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  std::promise<void> release;
  ASSERT_TRUE(StartHolding(**worker, release.get_future().share()));
  // Two rounds: a job's second heartbeat is sent only after its first
  // answer was handled.
  int answered = broker.WaitForAnsweredHeartbeats(2 * kJobs, kBound);
  release.set_value();
  (*worker)->Stop();
  EXPECT_GE(answered, 2 * kJobs);
  WorkerStats stats = (*worker)->stats();
  EXPECT_GE(stats.heartbeats, static_cast<uint64_t>(kJobs));
  EXPECT_EQ(stats.lost_leases, 0u);
  EXPECT_EQ(stats.succeeded, static_cast<uint64_t>(kJobs));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_TRUE(errors.empty()) << errors.front().ToString();
}

// A heartbeat that runs out its deadline (one interval) is followed at
// once by the next: each is due one interval after the previous was sent,
// so that two come inside the lease the last answered one extended. The
// stand-in broker answers none. Due an interval after the previous
// answer, as before, they came two intervals apart, and the second of a
// broker's slow spell came after the lease lapsed.
TEST(WorkerHeartbeatTest, AHeartbeatThatTimesOutIsFollowedAtOnce) {
  constexpr milliseconds kInterval(500);
  testing::StandInBroker broker(/*refusals=*/0);
  ASSERT_FALSE(broker.address().empty());
  broker.HoldHeartbeats(2);  // never: the worker holds one job
  broker.Offer(StandInJob(1));
  WorkerOptions options;
  options.heartbeat_interval = kInterval;
  options.on_error = [](const Status&) {};  // each beat: DEADLINE_EXCEEDED
  std::vector<testing::StandInBroker::Clock::time_point> beats =
      BeatsOfAHeldJob(broker, options, 5);
  ASSERT_EQ(beats.size(), 5u);
  auto shortest = beats[1] - beats[0];
  for (size_t i = 1; i < beats.size(); ++i) {
    EXPECT_GE(beats[i] - beats[i - 1], kInterval * 9 / 10) << "beat " << i;
    shortest = std::min(shortest, beats[i] - beats[i - 1]);
  }
  // Before, no gap was under two intervals (each beat's deadline, then the
  // interval after its answer): timers never fire early. Each gap is now
  // one interval; a slow machine only lengthens gaps, and would have to
  // stall every one of the four by half an interval to fail this.
  EXPECT_LT(shortest, kInterval * 3 / 2);
}

// A job's lease is beaten until its report is acknowledged, not only while
// its handler runs: the stand-in broker refuses the Complete four times
// (a full command queue), and the reporter's backoff between the tries
// (at least 0.8 x (100 + 200 + 400 + 800) ms) outlasts several 300 ms
// intervals. Before, the beats stopped as the handler returned, and a
// report held up that long let the lease lapse and the job run again.
TEST(WorkerHeartbeatTest, BeatsGoOnUntilTheReportIsAcknowledged) {
  testing::StandInBroker broker(/*refusals=*/4);
  ASSERT_FALSE(broker.address().empty());
  broker.Offer(StandInJob(1));
  WorkerOptions options;
  options.heartbeat_interval = milliseconds(300);
  auto worker = Worker::Create(broker.address(), options);
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  std::promise<testing::StandInBroker::Clock::time_point> returned;
  ASSERT_TRUE((*worker)
                  ->Start([&](JobContext&) {
                    returned.set_value(testing::StandInBroker::Clock::now());
                    return Outcome::Success();
                  })
                  .ok());
  std::vector<testing::StandInBroker::Clock::time_point> beats =
      broker.WaitForHeartbeats(1, kBound);
  (*worker)->Stop();
  ASSERT_EQ(beats.size(), 1u);
  // Sent after the handler returned, while the report waited.
  EXPECT_GT(beats[0], returned.get_future().get());
  EXPECT_EQ(broker.completed(), std::vector<uint64_t>{1});
  EXPECT_EQ((*worker)->stats().succeeded, 1u);
}

// The same for a job given back at Stop()'s deadline: its handler returns
// as it sees Cancelled(), and the give-back, refused four times, waits out
// the reporter's backoff while the job's lease is beaten. Before, the beats
// stopped as the handler returned, before the give-back was taken.
TEST(WorkerHeartbeatTest, BeatsGoOnUntilAGiveBackIsAcknowledged) {
  testing::StandInBroker broker(/*refusals=*/4);
  ASSERT_FALSE(broker.address().empty());
  broker.Offer(StandInJob(1));
  WorkerOptions options;
  options.heartbeat_interval = milliseconds(300);
  options.stop_timeout = milliseconds(0);
  auto worker = Worker::Create(broker.address(), options);
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  std::promise<void> started;
  std::promise<testing::StandInBroker::Clock::time_point> returned;
  ASSERT_TRUE((*worker)
                  ->Start([&](JobContext& job) {
                    started.set_value();
                    job.WaitForCancel(kBound);
                    returned.set_value(testing::StandInBroker::Clock::now());
                    return Outcome::Success();
                  })
                  .ok());
  std::future<void> running = started.get_future();
  ASSERT_TRUE(Arrives(running));
  (*worker)->Stop();
  const auto returned_at = returned.get_future().get();
  std::vector<testing::StandInBroker::Clock::time_point> beats =
      broker.WaitForHeartbeats(1, milliseconds(0));
  EXPECT_GE(std::count_if(beats.begin(), beats.end(),
                          [&](auto beat) { return beat > returned_at; }),
            1);
  EXPECT_EQ(broker.errors(),
            std::vector<std::string>{"worker stopped: handler still running "
                                     "after 0 ms"});
  EXPECT_EQ((*worker)->stats().given_back, 1u);
}

// A worker of one slot (else `options`) that the broker sends jobs 1 and 2
// in one Lease reply, ignoring its max_jobs; its handler holds job 1 until
// `release`, so job 2 has no slot.
StatusOr<std::unique_ptr<Worker>> HoldingOneOfTwoJobs(
    testing::StandInBroker& broker, WorkerOptions options,
    std::promise<void>& release) {
  broker.IgnoreMaxJobs();
  broker.Offer(StandInJob(1));
  broker.Offer(StandInJob(2));
  options.slots = 1;
  auto worker = Worker::Create(broker.address(), options);
  if (!worker.ok()) return worker;
  ::testing::AssertionResult started =
      StartHolding(**worker, release.get_future().share());
  if (!started) return Status(Code::kInternal, started.message());
  return worker;
}

// A job the worker has no slot for is released, and beaten until the
// release is acknowledged: here a broker sends two jobs to a worker of
// one slot and refuses the first four reports (at least 1.2 s of backoff
// against 300 ms beats). A Lease reply that arrives after Stop() began
// takes the same path (WorkerImpl::Hand).
TEST(WorkerHeartbeatTest, AJobWithoutASlotIsBeatenUntilItsGiveBackIsTaken) {
  testing::StandInBroker broker(/*refusals=*/4);
  ASSERT_FALSE(broker.address().empty());
  WorkerOptions options;
  options.heartbeat_interval = milliseconds(300);
  std::promise<void> release;
  auto worker = HoldingOneOfTwoJobs(broker, options, release);
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  auto give_up = Clock::now() + kBound;
  while (broker.released().empty() && Clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  std::vector<uint64_t> beaten = broker.beaten_jobs();
  release.set_value();
  (*worker)->Stop();
  EXPECT_EQ(broker.released(), std::vector<uint64_t>{2});
  EXPECT_EQ(broker.errors(), std::vector<std::string>{});
  EXPECT_GE(std::count(beaten.begin(), beaten.end(), 2u), 1)
      << "the job given back was not beaten while its report was refused";
  EXPECT_EQ((*worker)->stats().given_back, 1u);
}

// Against a broker from before Release (UNIMPLEMENTED), a job the worker
// cannot start is failed, retryable, instead: not left to lapse, and not
// counted as a report error.
TEST(WorkerHeartbeatTest, ABrokerWithoutReleaseGetsAFailureInstead) {
  testing::StandInBroker broker(/*refusals=*/0);
  ASSERT_FALSE(broker.address().empty());
  broker.WithoutRelease();
  std::promise<void> release;
  auto worker = HoldingOneOfTwoJobs(broker, WorkerOptions(), release);
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  auto give_up = Clock::now() + kBound;
  while (broker.errors().empty() && Clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  release.set_value();
  (*worker)->Stop();
  EXPECT_EQ(broker.errors(),
            std::vector<std::string>{"worker: job given back unstarted"});
  EXPECT_EQ(broker.released(), std::vector<uint64_t>{});
  EXPECT_EQ((*worker)->stats().report_errors, 0u);
  EXPECT_EQ((*worker)->stats().given_back, 1u);
}

// The worker's end cancels a heartbeat in flight (one the broker holds)
// rather than waiting out its deadline (the 3 s interval), and waits for
// gRPC's answer to the cancel.
TEST(WorkerHeartbeatTest, StopCancelsAHeartbeatTheBrokerHolds) {
  testing::StandInBroker broker(/*refusals=*/0);
  ASSERT_FALSE(broker.address().empty());
  broker.HoldHeartbeats(2);  // never: the worker holds one job
  broker.Offer(StandInJob(1));
  WorkerOptions options;
  options.heartbeat_interval = seconds(3);
  auto worker = Worker::Create(broker.address(), options);
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  std::promise<void> beat_sent;
  ASSERT_TRUE(StartHolding(**worker, beat_sent.get_future().share()));
  EXPECT_FALSE(broker.WaitForHeartbeats(1, kBound).empty());
  beat_sent.set_value();
  (*worker)->Stop();
  worker->reset();
  EXPECT_EQ(broker.WaitForEarlyCancels(1, kBound), 1);
  EXPECT_EQ(broker.completed(), std::vector<uint64_t>{1});
}

TEST(WorkerOptionsTest, OutOfRangeOptionsAreRefused) {
  WorkerOptions options;
  options.slots = 0;
  auto worker = Worker::Create("127.0.0.1:1", options);
  ASSERT_FALSE(worker.ok());
  EXPECT_EQ(worker.status().code(), Code::kInvalidArgument);
  options.slots = 1;
  options.lease_wait = seconds(31);
  EXPECT_FALSE(Worker::Create("127.0.0.1:1", options).ok());
  options.lease_wait = seconds(1);
  options.prefetch = 2;  // more than slots
  EXPECT_FALSE(Worker::Create("127.0.0.1:1", options).ok());
  options.prefetch = 1;  // as many as slots
  EXPECT_TRUE(Worker::Create("127.0.0.1:1", options).ok());
  options.max_report_batch = 0;
  EXPECT_EQ(Worker::Create("127.0.0.1:1", options).status().message(),
            "WorkerOptions.max_report_batch: must be between 1 and 1000");
  options.max_report_batch = 1001;  // more than the API takes
  EXPECT_FALSE(Worker::Create("127.0.0.1:1", options).ok());
  options.max_report_batch = 1000;
  // "Forever" would overflow the clock once added to now: at most a day.
  options.stop_timeout = milliseconds::max();
  auto forever = Worker::Create("127.0.0.1:1", options);
  ASSERT_FALSE(forever.ok());
  EXPECT_EQ(forever.status().message(),
            "WorkerOptions.stop_timeout: must be between 0 and 24 h");
  options.stop_timeout = std::chrono::hours(24);
  options.rpc_timeout = std::chrono::hours(25);
  EXPECT_FALSE(Worker::Create("127.0.0.1:1", options).ok());
  options.rpc_timeout = seconds(10);
  options.heartbeat_interval = std::chrono::hours(25);
  EXPECT_FALSE(Worker::Create("127.0.0.1:1", options).ok());
  options.heartbeat_interval = milliseconds(0);
  options.pools = {"gpu", "cpu", "gpu"};  // the broker would refuse each Lease
  auto twice = Worker::Create("127.0.0.1:1", options);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(),
            "WorkerOptions.pools[2]: the same as pools[0]");
  options.pools.assign(65, "");
  for (size_t i = 0; i < options.pools.size(); ++i) {
    options.pools[i] = "p" + std::to_string(i);
  }
  EXPECT_FALSE(Worker::Create("127.0.0.1:1", options).ok());
}

// A pool name or worker id the broker refuses on every Lease fails Create:
// the worker used to start and call on_error at the backoff's pace for good.
TEST(WorkerOptionsTest, NamesTheBrokerWouldRefuseAreRefused) {
  WorkerOptions options;
  options.pools = {"gpu", "gpu pool"};
  auto spaced = Worker::Create("127.0.0.1:1", options);
  ASSERT_FALSE(spaced.ok());
  EXPECT_EQ(spaced.status().message(),
            "WorkerOptions.pools[1]: character ' ' at position 4 is not "
            "allowed (use A-Z, a-z, 0-9, '.', '_', '-')");
  options.pools = {""};
  EXPECT_EQ(Worker::Create("127.0.0.1:1", options).status().message(),
            "WorkerOptions.pools[0]: must not be empty");
  options.pools = {std::string(129, 'p')};
  EXPECT_FALSE(Worker::Create("127.0.0.1:1", options).ok());
  options.pools = {"gpu"};
  options.worker_id = "w\xff";
  EXPECT_EQ(Worker::Create("127.0.0.1:1", options).status().message(),
            "WorkerOptions.worker_id: not valid UTF-8");
}

}  // namespace
}  // namespace fairq::client
