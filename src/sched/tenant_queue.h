// TenantQueue: one tenant's ready jobs in one pool, ordered by priority
// (higher first), then by arrival.
//
// Push and pop are O(priority levels), independent of the backlog; an entry
// takes 32 bytes. Not thread-safe; owned by the Scheduler's thread.
#ifndef FAIRQ_SCHED_TENANT_QUEUE_H_
#define FAIRQ_SCHED_TENANT_QUEUE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "sched/job_fifo.h"
#include "sched/types.h"

namespace fairq::sched {

class TenantQueue {
 public:
  bool empty() const { return size_ == 0; }
  uint64_t size() const { return size_; }

  void Push(int32_t priority, const QueuedJob& job);
  // REQUIRES: !empty().
  const QueuedJob& Front() const { return levels_.front().jobs.front(); }
  // REQUIRES: !empty(). Sets *priority to the popped job's priority.
  QueuedJob PopFront(int32_t* priority);
  // Removes the job with this id; false if it is not queued here. O(backlog).
  bool Remove(JobId id);
  // Ready time of the job that has waited longest, at any priority.
  std::optional<double> OldestReadyAt() const;

 private:
  // Invariant: levels_ is sorted by priority, highest first, and no level is
  // empty, except that a drained queue keeps its one last level: a tenant
  // that drains and refills (the common case at one job each) then reuses its
  // storage instead of allocating some per decision.
  struct Level {
    int32_t priority;
    JobFifo jobs;
  };
  void DropIfEmpty(std::vector<Level>::iterator level);

  std::vector<Level> levels_;
  uint64_t size_ = 0;
};

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_TENANT_QUEUE_H_
