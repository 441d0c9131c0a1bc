// Broker: all of fairqd's scheduling and job state, and the rules of the job
// lifecycle (READY -> LEASED -> SUCCEEDED; failures to SCHEDULED or DEAD;
// cancels). It owns the scheduling core, the live-job table, leases, waiting
// Lease calls, timers, tenants, admission and idempotency.
//
// Threading: the dispatcher thread only; nothing here locks. It never does
// I/O: each call appends its writes to the Turn's batch and its replies to
// the Turn, and the Writer makes them durable before anyone is answered
// (except granted leases, answered before the sync: see writer.h).
// Time is passed in (unix milliseconds).
#ifndef FAIRQ_SERVER_BROKER_BROKER_H_
#define FAIRQ_SERVER_BROKER_BROKER_H_

#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "base/status.h"
#include "metrics/metrics.h"
#include "sched/scheduler.h"
#include "server/broker/admission.h"
#include "server/broker/commands.h"
#include "server/broker/id_range.h"
#include "server/broker/idempotency_index.h"
#include "server/broker/job_pages.h"
#include "server/broker/job_table.h"
#include "server/broker/lease_waiters.h"
#include "server/broker/payload_cache.h"
#include "server/broker/read_ahead_planner.h"
#include "server/broker/taken_reports.h"
#include "server/broker/timer_queue.h"
#include "server/broker/wait_window.h"
#include "server/broker/worker_registry.h"
#include "server/broker/writer.h"
#include "server/config/daemon_config.h"
#include "server/logging/logging.h"
#include "store/store.h"

namespace fairq::server {

class Broker {
 public:
  // `store` is used only to create batches and, in Restore, to read.
  // `metrics` hears of every job event; it must outlive the broker.
  // `seed` seeds lease tokens and backoff jitter; fairqd leaves it to
  // std::random_device, tests fix it to replay a run.
  static StatusOr<std::unique_ptr<Broker>> Create(
      const config::DaemonConfig& config, store::Store* store,
      metrics::Metrics& metrics = metrics::NoMetrics(),
      std::optional<uint64_t> seed = std::nullopt);

  // Rebuilds state from the store (startup, before any command). Writes the
  // configured tenants and pools that are new. REQUIRES: no commands yet.
  Status Restore(int64_t now_ms, Turn& turn);

  // One dispatcher turn at `now_ms`: due scheduled jobs, the commands in
  // order, then the other timers, then matching. The commands came in
  // before now_ms was read, so a heartbeat or report that waited in the
  // queue through a stall counts before its lease is lapsed.
  void RunTurn(std::vector<Command>& commands, int64_t now_ms, Turn& turn);
  // Handles one command. Always either queues its reply on `turn` or runs
  // `done` (never both, never neither).
  void Handle(Command& command, int64_t now_ms, Turn& turn);
  // The next time RunTimers has work, if any.
  std::optional<int64_t> NextDeadline() const;
  // Answers every waiting Lease call with no jobs (shutdown).
  void ReleaseWaiters(Turn& turn);

  // Read-ahead of a deep backlog (read_ahead.h, read_ahead_planner.h): the
  // id ranges the leases of the turns since the last call want read, and
  // the records read, whose READY jobs are cached for the leases to come.
  std::vector<IdRange> TakeReadAheadRequests();
  // A range taken above that the reader could not take on.
  void ReadAheadDropped(IdRange range) { read_ahead_plan_.Dropped(range); }
  void CacheReadAhead(std::vector<v1::JobRecordWithEncodedSpec> records);

  size_t live_jobs() const { return jobs_.size(); }

 private:
  struct PoolInfo {
    std::string name;
  };
  struct TenantInfo {
    v1::Tenant config;
    uint64_t queued = 0;  // READY + SCHEDULED, all pools
  };
  // Per tenant and pool: what the scheduler does not count.
  struct Depth {
    uint64_t scheduled = 0;
    uint64_t leased = 0;
    uint64_t dead = 0;
    std::unique_ptr<WaitWindow> waits;  // created at the first lease
  };
  // A tenant's use of a pool, as stats walk them.
  struct Pair {
    uint32_t tenant;
    uint32_t pool;
    auto operator<=>(const Pair&) const = default;
  };
  // depth_'s key for a pair.
  static uint64_t PairKey(uint32_t tenant, uint32_t pool) {
    return uint64_t{tenant} << 32 | pool;
  }
  using Timer = TimerQueue::Timer;

  Broker(const config::DaemonConfig& config, store::Store* store,
         std::unique_ptr<sched::Scheduler> scheduler, metrics::Metrics& metrics,
         uint64_t seed);

  // broker_restore.cc
  Status RestoreTenantsAndPools(Turn& turn);
  Status RestoreJobs(int64_t now_ms);
  bool RestoreReady(const store::ReadyKey& key, const v1::ReadyEntry& entry,
                    Turn& scratch);
  void AdoptRunning(uint64_t job_id, const JobMeta& job, int64_t now_ms);
  void RestoreLease(uint64_t job_id, JobMeta& job, const v1::LeaseRecord& lease,
                    int64_t now_ms);
  Status RestoreIdempotency(int64_t now_ms);

  // broker_tenants.cc
  StatusOr<sched::TenantId> FindOrCreateTenant(const std::string& name,
                                               Turn& turn);
  // `field` names the pool in an error: "pool", or "pools[2]" in a Lease.
  StatusOr<sched::PoolId> FindOrCreatePool(const std::string& pool, Turn& turn,
                                           std::string_view field = "pool");
  // The pool's id if it exists ("" is the default pool).
  std::optional<sched::PoolId> FindPool(const std::string& pool) const;
  // What FindOrCreatePool would refuse `pool` with, without making it: an
  // enqueue checks its pool before it makes a tenant it would then not use.
  Status CanUsePool(const std::string& pool,
                    std::string_view field = "pool") const;
  // Registers a pool with the next id (startup and auto-creation).
  uint32_t AddPool(const std::string& name);
  // RESOURCE_EXHAUSTED naming max_tenants when a new tenant would pass it.
  Status RoomForTenant(const std::string& name) const;
  // Adds (id == tenant count) or updates a tenant in memory.
  Status ApplyTenant(sched::TenantId id, const v1::Tenant& config);
  void PersistTenant(sched::TenantId id, Turn& turn);
  void HandleSetTenant(SetTenantCommand& c, Turn& turn);
  // Adds or reweights organisations, in the scheduler and in orgs_.
  Status ApplyOrgs(const std::vector<sched::OrgConfig>& orgs);
  void HandleSetOrgs(SetOrgsCommand& c);
  void HandleAddPools(AddPoolsCommand& c, Turn& turn);
  void HandleReload(ReloadCommand& c, Turn& turn);
  // Creates and stores each of `names` not known yet.
  void AddListedPools(const std::vector<std::string>& names, Turn& turn);
  void HandleGetTenant(GetTenantCommand& c, Turn& turn);
  void HandleListTenants(ListTenantsCommand& c, Turn& turn);
  void HandlePauseTenant(PauseTenantCommand& c, Turn& turn);
  Depth& DepthOf(uint32_t tenant, uint32_t pool);
  // The (tenant, pool) pairs with anything to report, by tenant then pool:
  // those with scheduling state in the pool or a depth_ entry. Stats walk
  // these rather than every tenant x pool.
  std::vector<Pair> PairsInUse() const;
  // The same for reading: a pair never counted is all zeros, and is not
  // added (a stats call must not grow the table by tenants x pools).
  const Depth& PeekDepth(uint32_t tenant, uint32_t pool) const;

  // broker_enqueue.cc
  void HandleEnqueue(EnqueueCommand& c, int64_t now_ms, Turn& turn);
  Status EnqueueOne(const v1::JobSpec& spec, int64_t now_ms, Turn& turn,
                    v1::EnqueueResult* result);
  // Writes page_, the records enqueued since the last call, as one page.
  void StorePage(Turn& turn);
  JobMeta MetaFor(const v1::JobSpec& spec, uint32_t tenant,
                  uint32_t pool) const;

  // broker_jobs.cc: every state change of a live job goes through these,
  // which keep the store's indexes, the counters and the scheduler in step.
  uint64_t NextJobId(Turn& turn);
  // Into READY (and the scheduler's queue) / SCHEDULED. REQUIRES: the job
  // is in no state (new, or Leave was called). `since_enqueue`: a first
  // attempt, ready since its enqueue, which needs no ready-index entry.
  void MakeReady(uint64_t job_id, JobMeta& job, int64_t now_ms, Turn& turn,
                 bool since_enqueue = false);
  void MakeScheduled(uint64_t job_id, JobMeta& job, int64_t due_ms,
                     Turn& turn);
  // Out of the current state's index and counters. The scheduler is left
  // to the caller (a READY job may already have been popped by a lease).
  void Leave(uint64_t job_id, JobMeta& job, Turn& turn);
  // Removes a finished or canceled job entirely.
  void Forget(uint64_t job_id, JobMeta& job, Turn& turn);
  // The job's record goes with its page if no other job of the page is
  // left; else the job is marked done.
  void DropRecord(uint64_t job_id, Turn& turn);
  int64_t Backoff(const JobMeta& job);

  // broker_lease.cc
  void HandleLease(LeaseCommand& c, int64_t now_ms, Turn& turn);
  bool TryFill(const LeaseWaiters::Waiter& waiter, int64_t now_ms, Turn& turn);
  void GrantLease(uint64_t job_id, const std::string& worker_id,
                  int64_t now_ms, Turn& turn, v1::LeaseResponse* response);
  // READY -> LEASED under `token`, written to the batch; returns the
  // attempt's last error.
  const std::string& StartLease(uint64_t job_id, JobMeta& job, uint64_t token,
                                const std::string& worker_id, int64_t now_ms,
                                Turn& turn);
  void AnswerWaiter(LeaseWaiters::Waiter waiter, Turn& turn);
  void HandleLeaseCanceled(LeaseCanceledCommand& c, Turn& turn);
  void HandleLeaseUndelivered(LeaseUndeliveredCommand& c, int64_t now_ms,
                              Turn& turn);
  void RefreshCapacity(uint32_t pool);

  // broker_read_ahead.cc: specs read ahead that a Put pushed out unleased.
  void ReportUnusedReadAhead(size_t specs);

  // broker_ack.cc
  void HandleHeartbeat(HeartbeatCommand& c, int64_t now_ms, Turn& turn);
  void HandleComplete(CompleteCommand& c, int64_t now_ms, Turn& turn);
  void HandleFail(FailCommand& c, int64_t now_ms, Turn& turn);
  void HandleRelease(ReleaseCommand& c, int64_t now_ms, Turn& turn);
  Status CheckLease(uint64_t job_id, uint64_t token) const;
  // CheckLease for a worker's report, which first adopts the lease of a
  // job READY since the restart (JobMeta::adoptable).
  Status CheckOrAdoptLease(uint64_t job_id, uint64_t token, int64_t now_ms,
                           Turn& turn);
  // The lease check of a worker's report of `kind`. True when the report
  // is taken now (the caller acts on it; it is remembered); else false with
  // *answer the refusal, or OK for an exact repeat of one taken before.
  bool TakeReport(uint64_t job_id, uint64_t token, TakenReports::Kind kind,
                  int64_t now_ms, Turn& turn, Status* answer);
  // Complete, Fail, Release: TakeReport for each item of `items`, `act` on
  // those taken, a result for each in `response`, then `done`.
  template <class Items, class Act>
  void AnswerReports(const Items& items, TakenReports::Kind kind,
                     int64_t now_ms, Turn& turn, v1::AckResponse* response,
                     Done done, Act act);
  // A lease ended (completed, failed, lapsed, undelivered or released): the
  // metrics and its worker's count hear of it. The caller then moves the job
  // on.
  void LeaseEnded(uint64_t job_id, const JobMeta& job, double runtime_s,
                  int64_t now_ms);
  // A leased job that no handler started (undelivered, or released): back
  // to READY at once, its attempt not counted, the tenant charged only
  // min_charge.
  void ReturnUnstarted(uint64_t job_id, int64_t now_ms, Turn& turn);
  // A leased attempt failed or lapsed: retry after backoff, or DEAD.
  void EndAttempt(uint64_t job_id, double runtime_s, const std::string& error,
                  bool retryable, int64_t now_ms, Turn& turn);
  void MakeDead(uint64_t job_id, JobMeta& job, int64_t now_ms, Turn& turn);

  // broker_admin.cc
  void HandleGetJob(GetJobCommand& c, Turn& turn);
  void HandleCancelJob(CancelJobCommand& c, Turn& turn);
  void HandleQueueStats(QueueStatsCommand& c, int64_t now_ms, Turn& turn);
  void HandleRequeueDead(RequeueDeadCommand& c, int64_t now_ms, Turn& turn);
  void HandlePurge(PurgeTenantCommand& c, Turn& turn);
  void RemoveQueued(uint64_t job_id, JobMeta& job, Turn& turn);

  // broker_metrics.cc
  void HandleMetricsSnapshot(MetricsSnapshotCommand& c, int64_t now_ms);
  metrics::BrokerState MetricsState() const;

  // broker.cc: lapsed leases, due scheduled jobs, expired waits, idle
  // workers; and compacts the job table (no JobMeta reference may be held).
  void RunTimers(int64_t now_ms, Turn& turn);
  // Hands ready jobs to waiting Lease calls.
  void MatchWaiters(int64_t now_ms, Turn& turn);
  // broker_ack.cc
  void ExpireLeases(int64_t now_ms, Turn& turn);
  void PromoteScheduled(int64_t now_ms, Turn& turn);
  // The job a timer entry still stands for, by its lease or its schedule;
  // null for a stale entry (the job moved on), skipped when it comes due.
  JobMeta* JobOfLeaseTimer(const Timer& timer);
  JobMeta* JobOfScheduledTimer(const Timer& timer);

  static void Reply(Turn& turn, Done done, Status status);
  // For scheduler calls the broker's bookkeeping guarantees: a refusal means
  // the two have diverged. Logs it (with the live job `job_id`'s tenant and
  // pool, if given) and aborts; a restart rebuilds both from the store,
  // which is the truth.
  void ExpectOk(const Status& status, const char* what,
                uint64_t job_id = 0) const;
  // A line about live job `job_id`: its tenant, id, pool and attempt
  // count, then `fields`. Looks nothing up when the level is off.
  void LogJob(logging::Level level, std::string_view event, uint64_t job_id,
              std::initializer_list<logging::Field> fields = {}) const;

  const config::DaemonConfig config_;
  store::Store* const store_;
  std::unique_ptr<sched::Scheduler> scheduler_;
  metrics::Metrics& metrics_;
  // Tenant and pool ids are dense, assigned in creation order and stored;
  // they are also the scheduler's ids.
  std::vector<PoolInfo> pools_;          // by pool id
  std::vector<TenantInfo> tenants_;      // by tenant id
  // The configured organisations as last applied (start, SIGHUP).
  std::vector<sched::OrgConfig> orgs_;
  absl::flat_hash_map<std::string, uint32_t> pool_ids_;
  absl::flat_hash_map<std::string, uint32_t> tenant_ids_;
  absl::flat_hash_map<uint64_t, Depth> depth_;  // by PairKey
  JobTable jobs_;
  // Pages of the stored records, and the one being built by an enqueue.
  JobPages pages_;
  store::JobPageEncoder page_;
  // Ids of the dead letters (8-16 bytes each), so that a requeue read from
  // the store before a concurrent requeue revived the job does nothing.
  absl::flat_hash_set<uint64_t> dead_ids_;
  // 8 MiB: at 100-byte payloads, the specs of ~30k jobs: those enqueued
  // last into shallow queues, enough that a lease granted within seconds of
  // its enqueue (the common case with workers waiting) needs no store read,
  // and those read ahead of a deep backlog's leases.
  PayloadCache payloads_{8 << 20};
  ReadAheadPlanner read_ahead_plan_;
  std::vector<IdRange> read_ahead_requests_;
  LeaseWaiters waiters_;
  WorkerRegistry workers_;
  Admission admission_;
  IdempotencyIndex idempotency_;
  TakenReports taken_{config_.repeat_window_reports};
  TimerQueue lease_timers_{
      [this](const Timer& timer) { return JobOfLeaseTimer(timer) != nullptr; }};
  TimerQueue scheduled_timers_{[this](const Timer& timer) {
    return JobOfScheduledTimer(timer) != nullptr;
  }};
  std::vector<bool> pool_has_news_;  // a job became ready since last match
  uint64_t total_queued_ = 0;        // READY + SCHEDULED, everyone
  uint64_t total_ready_ = 0;         // READY, everyone
  uint64_t next_job_id_ = 1;
  uint64_t reserved_job_id_ = 1;     // ids below this are reserved on disk
  int64_t restored_ms_ = 0;          // when Restore ran (CheckOrAdoptLease)
  uint64_t next_seq_ = 1;            // ready-key sequence
  std::mt19937_64 random_;           // lease tokens and backoff jitter
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_BROKER_H_
