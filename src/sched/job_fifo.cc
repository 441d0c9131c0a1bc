#include "sched/job_fifo.h"

#include <algorithm>

namespace fairq::sched {

void JobFifo::push_back(const QueuedJob& job) {
  if (!deque_ && ring_size_ == ring_capacity_) {
    if (ring_capacity_ < kRingJobs) {
      GrowRing();
    } else {
      MoveRingToDeque();
    }
  }
  if (deque_) {
    deque_->push_back(job);
    return;
  }
  ring_[(ring_head_ + ring_size_) & (ring_capacity_ - 1)] = job;
  ++ring_size_;
}

void JobFifo::pop_front() {
  if (deque_) {
    deque_->pop_front();
    // A backlog that drained gives its blocks back; a ring grows again.
    if (deque_->empty()) deque_.reset();
    return;
  }
  ring_head_ = (ring_head_ + 1) & (ring_capacity_ - 1);
  --ring_size_;
}

bool JobFifo::Erase(JobId id) {
  auto is_id = [id](const QueuedJob& job) { return job.id == id; };
  if (deque_) {
    auto it = std::find_if(deque_->begin(), deque_->end(), is_id);
    if (it == deque_->end()) return false;
    deque_->erase(it);
    if (deque_->empty()) deque_.reset();
    return true;
  }
  const uint32_t mask = ring_capacity_ - 1;
  for (uint32_t i = 0; i < ring_size_; ++i) {
    if (!is_id(ring_[(ring_head_ + i) & mask])) continue;
    for (uint32_t j = i + 1; j < ring_size_; ++j) {
      ring_[(ring_head_ + j - 1) & mask] = ring_[(ring_head_ + j) & mask];
    }
    --ring_size_;
    return true;
  }
  return false;
}

void JobFifo::GrowRing() {
  uint32_t capacity = ring_capacity_ == 0 ? 1 : 2 * ring_capacity_;
  auto ring = std::make_unique<QueuedJob[]>(capacity);
  for (uint32_t i = 0; i < ring_size_; ++i) {
    ring[i] = ring_[(ring_head_ + i) & (ring_capacity_ - 1)];
  }
  ring_ = std::move(ring);
  ring_capacity_ = capacity;
  ring_head_ = 0;
}

void JobFifo::MoveRingToDeque() {
  deque_ = std::make_unique<std::deque<QueuedJob>>();
  for (uint32_t i = 0; i < ring_size_; ++i) {
    deque_->push_back(ring_[(ring_head_ + i) & (ring_capacity_ - 1)]);
  }
  // A deep queue costs what a deque does; the ring grows again after it.
  ring_.reset();
  ring_capacity_ = 0;
  ring_head_ = 0;
  ring_size_ = 0;
}

}  // namespace fairq::sched
