#include "server/broker/writer.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>

#include "server/logging/logging.h"

namespace fairq::server {

namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

Writer::Writer(store::Store* store, size_t max_turns_in_flight,
               std::chrono::microseconds min_sync_interval,
               metrics::Metrics& metrics)
    : store_(store),
      max_in_flight_(max_turns_in_flight),
      min_sync_interval_(min_sync_interval),
      metrics_(metrics) {}

Writer::~Writer() { Stop(); }

void Writer::Start() {
  // Named for top and perf.
  apply_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "fairq-apply");
    store::DisablePerfCountersOnThisThread();
    ApplyLoop();
  });
  sync_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "fairq-sync");
    store::DisablePerfCountersOnThisThread();
    SyncLoop();
  });
}

void Writer::Submit(Turn turn) {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return in_flight_ < max_in_flight_; });
  ++in_flight_;
  pending_.push_back(std::move(turn));
  changed_.notify_all();
}

void Writer::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (apply_thread_.joinable()) apply_thread_.join();
  {
    std::lock_guard lock(mu_);
    apply_done_ = true;
  }
  changed_.notify_all();
  if (sync_thread_.joinable()) sync_thread_.join();
}

void Writer::ApplyLoop() {
  std::vector<Turn> turns;
  while (true) {
    bool alone;
    {
      std::unique_lock lock(mu_);
      changed_.wait(lock, [&] { return !pending_.empty() || stopping_; });
      if (pending_.empty()) return;  // stopping, and nothing left
      turns.swap(pending_);
      // Judged when taken: company is a sync under way, or groups that
      // wrote waiting for the sync thread to take them.
      alone = !sync_busy_ && !AnyWrote(applied_);
    }
    std::vector<Applied> applied = ApplyTurns(turns);
    turns.clear();
    {
      std::lock_guard lock(mu_);
      for (Applied& a : applied) {
        a.alone = alone;
        applied_.push_back(std::move(a));
      }
    }
    changed_.notify_all();
  }
}

std::vector<Writer::Applied> Writer::ApplyTurns(std::vector<Turn>& turns) {
  std::vector<store::WriteBatch> batches;
  batches.reserve(turns.size());
  std::vector<Applied> applied;
  applied.reserve(turns.size());
  for (Turn& turn : turns) {
    applied.push_back({Status::Ok(), !turn.batch.empty(), false, 0, {}});
    if (!turn.batch.empty()) batches.push_back(std::move(turn.batch));
  }
  bool was_failed = store_->failed();
  auto start = std::chrono::steady_clock::now();
  // Called with no batches too: a group that writes nothing still answers
  // for state that earlier turns built, which after a failed write may
  // never reach the disk (an idempotent duplicate of a lost enqueue).
  Status status = store_->Apply(batches);
  double apply_seconds = SecondsSince(start);
  LogFirstFailure(status, was_failed, turns.size());
  for (size_t i = 0; i < turns.size(); ++i) {
    for (Reply& reply : turns[i].replies_before_sync) reply(status);
    applied[i].status = status;
    applied[i].apply_seconds = apply_seconds;
    applied[i].replies = std::move(turns[i].replies);
  }
  return applied;
}

void Writer::SyncLoop() {
  std::vector<Applied> applied;
  while (true) {
    {
      std::unique_lock lock(mu_);
      changed_.wait(lock, [&] { return !applied_.empty() || apply_done_; });
      if (applied_.empty()) return;  // the apply thread is gone: nothing left
      sync_busy_ = AnyWrote(applied_);
      PaceSync(lock);
      applied.swap(applied_);
    }
    // Every earlier group was synced before this one was taken, so only a
    // group that wrote needs an fsync. A turn that wrote nothing (a read)
    // still waits for its group's: it must not report state an earlier
    // turn of the group has not made durable yet.
    size_t wrote = 0;
    double apply_seconds = 0;
    for (const Applied& a : applied) {
      wrote += a.wrote ? 1 : 0;
      apply_seconds = std::max(apply_seconds, a.apply_seconds);
    }
    bool was_failed = store_->failed();
    auto start = std::chrono::steady_clock::now();
    if (wrote > 0) last_sync_ = start;
    Status sync = wrote > 0 ? store_->SyncLog() : store_->CheckNotFailed();
    {
      // Before the replies: a producer that sends its next write on this
      // acknowledgement must find the sync thread idle (PaceSync).
      std::lock_guard lock(mu_);
      sync_busy_ = false;
    }
    LogFirstFailure(sync, was_failed, applied.size());
    // A group's write latency: its (longest) apply plus the fsync.
    if (wrote > 0) metrics_.GroupCommitted(apply_seconds + SecondsSince(start), wrote);
    for (Applied& a : applied) {
      const Status& status = a.status.ok() ? sync : a.status;
      for (Reply& reply : a.replies) reply(status);
    }
    {
      std::lock_guard lock(mu_);
      in_flight_ -= applied.size();
    }
    changed_.notify_all();
    applied.clear();
  }
}

bool Writer::AnyWrote(const std::vector<Applied>& applied) {
  return std::any_of(applied.begin(), applied.end(),
                     [](const Applied& a) { return a.wrote; });
}

void Writer::PaceSync(std::unique_lock<std::mutex>& lock) {
  if (min_sync_interval_.count() == 0) return;
  // Only writes that came while a sync was under way wait: they have
  // company to share the next one with. A write that finds the sync thread
  // idle (a lone producer waiting for each acknowledgement) has none, and
  // waiting would only slow its round trip (PostgreSQL's commit_siblings).
  const bool company =
      std::any_of(applied_.begin(), applied_.end(),
                  [](const Applied& a) { return a.wrote && !a.alone; });
  if (!company) return;
  // A full writer syncs at once: waiting on would stall the dispatcher.
  changed_.wait_until(lock, last_sync_ + min_sync_interval_, [&] {
    return apply_done_ || in_flight_ >= max_in_flight_;
  });
}

// Logged once, not per caller: from here on the store refuses every write,
// and each caller gets the error in its reply.
void Writer::LogFirstFailure(const Status& status, bool was_failed,
                             size_t turns) {
  if (status.ok() || was_failed) return;
  logging::Log(spdlog::level::err,
               "store write failed; store now refuses writes",
               {{"turns", turns}, {"error", status.ToString()}});
}

}  // namespace fairq::server
