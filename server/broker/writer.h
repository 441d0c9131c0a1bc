// Writer: the stage between the dispatcher and the disk. It takes each
// dispatcher turn's WriteBatch with the replies that depend on it, applies
// every batch that is waiting in one go, and syncs the log once for all of
// them (group commit). Replies whose loss in a crash costs only a
// redelivery (granted leases) run as soon as their batch is applied; all
// others run after the sync. (Leases that read nothing from the store are
// answered by the dispatcher before this: Turn::replies_before_apply.) fsync
// therefore never runs on the dispatcher, no client hears "done" before its
// write is durable, and a worker's lease does not wait for somebody else's
// fsync.
//
// Threads: Submit is called by the dispatcher thread only. The apply thread
// writes batches and runs the before-sync replies; the sync thread syncs and
// runs the rest, so applying the next turns overlaps the current fsync.
// Submit blocks while too many turns are in flight, which stalls the
// dispatcher and so fills its command queue: back-pressure reaches the
// clients as RESOURCE_EXHAUSTED.
//
// Syncs may be paced (`min_sync_interval`): writes that come while a sync
// is under way (or while others wait for one) have company, and wait for a sync
// that starts no sooner than the interval after the running one started (or
// when it ends, if later); every turn applied meanwhile shares it. A write that
// finds no sync under way is synced at once, and so is one that comes at least
// an interval after the last sync began, and everything while
// max_turns_in_flight wait (Submit would block).
#ifndef FAIRQ_SERVER_BROKER_WRITER_H_
#define FAIRQ_SERVER_BROKER_WRITER_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "base/status.h"
#include "metrics/metrics.h"
#include "store/store.h"

namespace fairq::server {

// Runs after the batch it came with was committed (status OK) or not.
using Reply = std::function<void(const Status& commit)>;

struct Turn {
  explicit Turn(store::WriteBatch b) : batch(std::move(b)) {}
  store::WriteBatch batch;
  // Run by the dispatcher as soon as it has handed the turn on, before the
  // batch is applied; never given to the writer. Only for leases whose reply
  // reads nothing from the store: a process crash before the apply forgets
  // such a lease as a power loss would, and the job is redelivered.
  std::vector<Reply> replies_before_apply;
  // Run once the batch is applied (readable, survives a process crash),
  // before it is synced. Only for replies a power loss may make the broker
  // forget without breaking a promise: a lease it forgets is redelivered.
  std::vector<Reply> replies_before_sync;
  // Run once the batch is durable.
  std::vector<Reply> replies;
};

class Writer {
 public:
  // `metrics` hears of each group commit; it must outlive the writer.
  Writer(store::Store* store, size_t max_turns_in_flight,
         std::chrono::microseconds min_sync_interval = {},
         metrics::Metrics& metrics = metrics::NoMetrics());
  ~Writer();  // stops and joins

  void Start();
  // REQUIRES: dispatcher thread.
  void Submit(Turn turn);
  // Commits what is pending, runs its replies, and joins both threads.
  void Stop();

 private:
  // Replies of applied turns, waiting for the next sync.
  struct Applied {
    Status status;         // of the apply
    bool wrote;            // a turn that wrote nothing needs no fsync of its own
    bool alone;            // taken for applying while no sync was under way
    double apply_seconds;  // of the apply this turn was written in
    std::vector<Reply> replies;
  };

  void ApplyLoop();
  void SyncLoop();
  // Waits out the sync interval if a pending turn that wrote came while a
  // sync was under way; returns early when the apply thread is done
  // (shutdown does not wait) or max_turns_in_flight are in flight (Submit
  // would block).
  void PaceSync(std::unique_lock<std::mutex>& lock);
  static bool AnyWrote(const std::vector<Applied>& applied);
  // Applies `turns` and runs their before-sync replies; returns the rest.
  std::vector<Applied> ApplyTurns(std::vector<Turn>& turns);
  static void LogFirstFailure(const Status& status, bool was_failed,
                              size_t turns);

  store::Store* const store_;
  const size_t max_in_flight_;
  const std::chrono::microseconds min_sync_interval_;
  std::chrono::steady_clock::time_point last_sync_;  // sync thread only
  metrics::Metrics& metrics_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<Turn> pending_;     // submitted, not yet applied
  std::vector<Applied> applied_;  // applied, not yet synced
  size_t in_flight_ = 0;          // turns submitted whose replies have not run
  bool sync_busy_ = false;        // the sync thread holds a group that
                                  // wrote: waiting out the interval, or
                                  // syncing
  bool stopping_ = false;         // no more Submit calls
  bool apply_done_ = false;       // the apply thread has exited
  std::thread apply_thread_;
  std::thread sync_thread_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_WRITER_H_
