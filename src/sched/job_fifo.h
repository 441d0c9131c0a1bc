// JobFifo: the jobs of one priority level of a TenantQueue, first in first
// out. Up to kRingJobs jobs sit in a ring sized to fit (doubling from one
// job); a longer queue moves to a std::deque until it drains. Most tenants
// hold a few jobs, and libstdc++'s deque allocates a 512-byte block and its
// map with its first job (about 600 bytes, kept by a drained queue): with
// 20,000 tenants of one job that was 12% of fairqd's memory
// (docs/benchmarks.md, fourteenth round).
//
// Not thread-safe; owned by the Scheduler's thread.
#ifndef FAIRQ_SCHED_JOB_FIFO_H_
#define FAIRQ_SCHED_JOB_FIFO_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <utility>

#include "sched/types.h"

namespace fairq::sched {

class JobFifo {
 public:
  // 512 bytes: a deque's block.
  static constexpr uint32_t kRingJobs = 16;

  JobFifo() = default;
  // Moves leave `other` empty, with no storage (TenantQueue's levels move
  // within their vector).
  JobFifo(JobFifo&& other) noexcept { *this = std::move(other); }
  JobFifo& operator=(JobFifo&& other) noexcept {
    ring_ = std::move(other.ring_);
    ring_capacity_ = std::exchange(other.ring_capacity_, 0);
    ring_head_ = std::exchange(other.ring_head_, 0);
    ring_size_ = std::exchange(other.ring_size_, 0);
    deque_ = std::move(other.deque_);
    return *this;
  }

  bool empty() const { return size() == 0; }
  uint64_t size() const { return deque_ ? deque_->size() : ring_size_; }
  // REQUIRES: !empty().
  const QueuedJob& front() const {
    return deque_ ? deque_->front() : ring_[ring_head_];
  }
  void push_back(const QueuedJob& job);
  // REQUIRES: !empty().
  void pop_front();
  // Removes the job with this id; false if it is not here. O(size).
  bool Erase(JobId id);

 private:
  void GrowRing();
  void MoveRingToDeque();

  // Invariant: while deque_ exists it holds every job and there is no ring.
  // The ring's storage is kept when it drains: a tenant that drains and
  // refills (the common case at one job each) allocates nothing.
  std::unique_ptr<QueuedJob[]> ring_;
  uint32_t ring_capacity_ = 0;  // 0 (no ring yet) or a power of two
  uint32_t ring_head_ = 0;
  uint32_t ring_size_ = 0;
  std::unique_ptr<std::deque<QueuedJob>> deque_;
};

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_JOB_FIFO_H_
