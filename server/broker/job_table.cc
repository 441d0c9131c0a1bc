#include "server/broker/job_table.h"

#include <cassert>

namespace fairq::server {
namespace {

// An insert does not open free entries past twice the window's live jobs
// plus this many: that job goes to the hash map. Compact also leaves
// windows this small alone, as a few thousand entries cost less than moving
// their jobs.
constexpr size_t kMinCompactEntries = 4096;
// A hash map's table is left alone below this many slots.
constexpr size_t kMinShrinkSlots = 4096;

// Gives back a map's table once what was in it has mostly left: absl's
// maps never shrink on erase. A quarter full or less. Rebuilding visits the
// old table and every entry left (for the node map a cache miss each; by
// estimate, not measured: tens of ms in one turn if a million stay, as long
// as the growth that made the table took), and the three quarters that left
// since pay for it. Afterwards the table is more than a third full, so it does
// not rebuild again until many more entries leave.
template <class Map>
void ShrinkWhenMostlyEmpty(Map& map) {
  if (map.capacity() > kMinShrinkSlots && 4 * map.size() <= map.capacity()) {
    map.rehash(0);
  }
}

}  // namespace

JobMeta& JobTable::Insert(uint64_t id, const JobMeta& meta) {
  assert(!IsFree(meta));
  if (!overflow_.empty()) {
    auto it = overflow_.find(id);
    if (it != overflow_.end()) return it->second = meta;
  }
  if (window_.empty()) {
    base_ = id;
    passed_window_ = 0;
  }
  if (id < base_) return overflow_.insert_or_assign(id, meta).first->second;
  // Only an insert past the window's end opens free entries.
  if (id - base_ > window_.size() &&
      id - base_ >= 2 * (live_in_window_ + 1) + kMinCompactEntries) {
    ++passed_window_;
    return overflow_.insert_or_assign(id, meta).first->second;
  }
  while (id - base_ >= window_.size()) window_.push_back(FreeEntry());
  JobMeta& entry = window_[id - base_];
  if (IsFree(entry)) ++live_in_window_;
  return entry = meta;
}

void JobTable::Erase(uint64_t id) {
  errors_.erase(id);
  if (id - base_ < window_.size() && !IsFree(window_[id - base_])) {
    window_[id - base_] = FreeEntry();
    --live_in_window_;
    TrimFront();
    return;
  }
  overflow_.erase(id);
}

void JobTable::Compact() {
  // More new jobs went past the window than it holds: it was started at an
  // odd id (a requeued dead job on an idle table), or the ids jumped past
  // it (a restart after the newest jobs had finished). Emptied, it restarts
  // at the next insert; each job moves to the map at most once.
  if (passed_window_ > live_in_window_) {
    MoveFrontToOverflow(window_.size());
  } else {
    while (window_.size() > kMinCompactEntries &&
           2 * live_in_window_ < window_.size()) {
      MoveFrontToOverflow(1);
    }
    TrimFront();
  }
  // Only the node map's table of pointers moves, never a job. The errors'
  // strings move, which is why LastError's reference lasts until Compact.
  ShrinkWhenMostlyEmpty(overflow_);
  ShrinkWhenMostlyEmpty(errors_);
}

void JobTable::MoveFrontToOverflow(size_t entries) {
  for (size_t i = 0; i < entries; ++i) {
    if (!IsFree(window_.front())) {
      overflow_.emplace(base_, window_.front());
      --live_in_window_;
    }
    window_.pop_front();
    ++base_;
  }
}

void JobTable::TrimFront() {
  while (!window_.empty() && IsFree(window_.front())) {
    window_.pop_front();
    ++base_;
  }
}

}  // namespace fairq::server
