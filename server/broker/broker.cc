#include "server/broker/broker.h"

#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include <spdlog/spdlog.h>

namespace fairq::server {
namespace {

// Commands that write nothing still run while the store is in the failed
// state (a canceled Lease is cleaned up, /metrics answered); a reply that
// goes through the writer is answered UNAVAILABLE there all the same.
bool Mutates(const Command& command) {
  return !(std::holds_alternative<GetJobCommand>(command) ||
           std::holds_alternative<GetTenantCommand>(command) ||
           std::holds_alternative<ListTenantsCommand>(command) ||
           std::holds_alternative<QueueStatsCommand>(command) ||
           std::holds_alternative<LeaseCanceledCommand>(command) ||
           std::holds_alternative<SyncBarrierCommand>(command) ||
           std::holds_alternative<MetricsSnapshotCommand>(command));
}

}  // namespace

StatusOr<std::unique_ptr<Broker>> Broker::Create(
    const config::DaemonConfig& config, store::Store* store,
    metrics::Metrics& metrics, std::optional<uint64_t> seed) {
  StatusOr<std::unique_ptr<sched::Scheduler>> scheduler =
      sched::Scheduler::Create(config.scheduling);
  if (!scheduler.ok()) return scheduler.status();
  return std::unique_ptr<Broker>(
      new Broker(config, store, std::move(scheduler).value(), metrics,
                 seed ? *seed : std::random_device{}()));
}

Broker::Broker(const config::DaemonConfig& config, store::Store* store,
               std::unique_ptr<sched::Scheduler> scheduler,
               metrics::Metrics& metrics, uint64_t seed)
    : config_(config),
      store_(store),
      scheduler_(std::move(scheduler)),
      metrics_(metrics),
      workers_(static_cast<int64_t>(config.worker_liveness_seconds * 1000)),
      admission_(config.max_queued_total),
      random_(seed) {}

void Broker::ExpectOk(const Status& status, const char* what,
                      uint64_t job_id) const {
  if (status.ok()) return;
  std::string error = status.ToString();
  if (job_id != 0) {
    LogJob(spdlog::level::critical, "broker invariant broken", job_id,
           {{"what", what}, {"error", error}});
  } else {
    logging::Log(spdlog::level::critical, "broker invariant broken",
                 {{"what", what}, {"error", error}});
  }
  std::abort();
}

// Also called on the way to an abort, so it trusts no index.
void Broker::LogJob(logging::Level level, std::string_view event,
                    uint64_t job_id,
                    std::initializer_list<logging::Field> fields) const {
  if (!spdlog::should_log(level)) return;
  logging::Fields more(fields.begin(), fields.size());
  const JobMeta* job = jobs_.Find(job_id);
  if (job == nullptr || job->tenant >= tenants_.size() ||
      job->pool >= pools_.size()) {
    const logging::Field id[] = {{"job_id", job_id}};
    logging::Write(level, event, id, more);
    return;
  }
  const logging::Field context[] = {
      {"tenant", tenants_[job->tenant].config.name()},
      {"job_id", job_id},
      {"pool", pools_[job->pool].name},
      {"attempt", job->attempts}};
  logging::Write(level, event, context, more);
}

void Broker::Reply(Turn& turn, Done done, Status status) {
  turn.replies.push_back(
      [done = std::move(done), status = std::move(status)](const Status& commit) {
        done(commit.ok() ? status : commit);
      });
}

void Broker::Handle(Command& command, int64_t now_ms, Turn& turn) {
  if (store_->failed() && Mutates(command)) {
    FinishCommand(command,
                  Unavailable("store: failed state after a write error; "
                              "fairqd needs a restart"));
    return;
  }
  std::visit(
      [&](auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, EnqueueCommand>) {
          HandleEnqueue(c, now_ms, turn);
        } else if constexpr (std::is_same_v<T, LeaseCommand>) {
          HandleLease(c, now_ms, turn);
        } else if constexpr (std::is_same_v<T, LeaseCanceledCommand>) {
          HandleLeaseCanceled(c, turn);
        } else if constexpr (std::is_same_v<T, LeaseUndeliveredCommand>) {
          HandleLeaseUndelivered(c, now_ms, turn);
        } else if constexpr (std::is_same_v<T, HeartbeatCommand>) {
          HandleHeartbeat(c, now_ms, turn);
        } else if constexpr (std::is_same_v<T, CompleteCommand>) {
          HandleComplete(c, now_ms, turn);
        } else if constexpr (std::is_same_v<T, FailCommand>) {
          HandleFail(c, now_ms, turn);
        } else if constexpr (std::is_same_v<T, ReleaseCommand>) {
          HandleRelease(c, now_ms, turn);
        } else if constexpr (std::is_same_v<T, GetJobCommand>) {
          HandleGetJob(c, turn);
        } else if constexpr (std::is_same_v<T, CancelJobCommand>) {
          HandleCancelJob(c, turn);
        } else if constexpr (std::is_same_v<T, SetTenantCommand>) {
          HandleSetTenant(c, turn);
        } else if constexpr (std::is_same_v<T, ReloadCommand>) {
          HandleReload(c, turn);
        } else if constexpr (std::is_same_v<T, GetTenantCommand>) {
          HandleGetTenant(c, turn);
        } else if constexpr (std::is_same_v<T, ListTenantsCommand>) {
          HandleListTenants(c, turn);
        } else if constexpr (std::is_same_v<T, PauseTenantCommand>) {
          HandlePauseTenant(c, turn);
        } else if constexpr (std::is_same_v<T, QueueStatsCommand>) {
          HandleQueueStats(c, now_ms, turn);
        } else if constexpr (std::is_same_v<T, RequeueDeadCommand>) {
          HandleRequeueDead(c, now_ms, turn);
        } else if constexpr (std::is_same_v<T, SyncBarrierCommand>) {
          Reply(turn, std::move(c.done), c.status);
        } else if constexpr (std::is_same_v<T, MetricsSnapshotCommand>) {
          HandleMetricsSnapshot(c, now_ms);
        } else {
          static_assert(std::is_same_v<T, PurgeTenantCommand>);
          HandlePurge(c, turn);
        }
      },
      command);
}

void Broker::RunTurn(std::vector<Command>& commands, int64_t now_ms,
                     Turn& turn) {
  // Due jobs first: a Lease that does not wait is answered as it is
  // handled, and should see them. They touch no lease.
  PromoteScheduled(now_ms, turn);
  for (Command& command : commands) Handle(command, now_ms, turn);
  RunTimers(now_ms, turn);  // promotes again what the commands made due
  MatchWaiters(now_ms, turn);
}

void Broker::RunTimers(int64_t now_ms, Turn& turn) {
  ExpireLeases(now_ms, turn);
  PromoteScheduled(now_ms, turn);
  for (WaiterId id : waiters_.Expired(now_ms)) {
    if (auto waiter = waiters_.Take(id)) AnswerWaiter(std::move(*waiter), turn);
  }
  for (uint32_t pool : workers_.Expire(now_ms)) RefreshCapacity(pool);
  idempotency_.Expire(now_ms);
  jobs_.Compact();  // no JobMeta reference is held between commands
}

std::optional<int64_t> Broker::NextDeadline() const {
  std::optional<int64_t> next;
  auto consider = [&](std::optional<int64_t> at) {
    if (at && (!next || *at < *next)) next = at;
  };
  if (!lease_timers_.empty()) consider(lease_timers_.top().at_ms);
  if (!scheduled_timers_.empty()) consider(scheduled_timers_.top().at_ms);
  consider(waiters_.NextDeadline());
  consider(workers_.NextExpiry());
  return next;
}

void Broker::MatchWaiters(int64_t now_ms, Turn& turn) {
  for (uint32_t pool = 0; pool < pool_has_news_.size(); ++pool) {
    if (!pool_has_news_[pool]) continue;
    pool_has_news_[pool] = false;
    while (const LeaseWaiters::Waiter* waiter = waiters_.Front(pool)) {
      if (!TryFill(*waiter, now_ms, turn)) break;
      AnswerWaiter(std::move(*waiters_.Take(waiter->id)), turn);
    }
  }
}

void Broker::ReleaseWaiters(Turn& turn) {
  for (WaiterId id : waiters_.All()) {
    if (auto waiter = waiters_.Take(id)) AnswerWaiter(std::move(*waiter), turn);
  }
}

Broker::Depth& Broker::DepthOf(uint32_t tenant, uint32_t pool) {
  return depth_[PairKey(tenant, pool)];
}

std::vector<Broker::Pair> Broker::PairsInUse() const {
  std::vector<Pair> pairs;
  pairs.reserve(depth_.size());
  for (const auto& entry : depth_) {
    pairs.push_back({static_cast<uint32_t>(entry.first >> 32),
                     static_cast<uint32_t>(entry.first)});
  }
  for (uint32_t pool = 0; pool < pools_.size(); ++pool) {
    for (sched::TenantId tenant : scheduler_->TenantsIn(pool)) {
      pairs.push_back({tenant, pool});
    }
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

const Broker::Depth& Broker::PeekDepth(uint32_t tenant, uint32_t pool) const {
  static const Depth kNone;
  auto found = depth_.find(PairKey(tenant, pool));
  return found == depth_.end() ? kNone : found->second;
}

}  // namespace fairq::server
