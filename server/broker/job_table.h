// JobTable: what the broker keeps in memory of each live job (READY,
// SCHEDULED or LEASED): enough to run its lifecycle without reading the
// store. Payloads stay on disk; dead jobs are not kept.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_JOB_TABLE_H_
#define FAIRQ_SERVER_BROKER_JOB_TABLE_H_

#include <cmath>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "fairq/v1/fairq.pb.h"

namespace fairq::server {

// A JobState in one byte (the proto enum is an int with sentinel values).
class PackedJobState {
 public:
  PackedJobState(v1::JobState state) : value_(static_cast<uint8_t>(state)) {}
  operator v1::JobState() const { return static_cast<v1::JobState>(value_); }

  // A value no JobState has: JobTable marks its free entries with it.
  static PackedJobState None() {
    PackedJobState none(v1::JOB_STATE_UNSPECIFIED);
    none.value_ = kNone;
    return none;
  }
  bool is_none() const { return value_ == kNone; }

 private:
  static constexpr uint8_t kNone = 0xff;
  uint8_t value_;
};

// 56 bytes: with millions of jobs queued, every byte here is megabytes.
struct JobMeta {
  // READY: when it became ready. SCHEDULED: when it is due. LEASED: the
  // lease deadline.
  int64_t at_ms = 0;
  union {
    uint64_t seq = 0;   // READY: the ready-index sequence
    int64_t leased_ms;  // LEASED: when the lease was granted
  };
  uint64_t token = 0;  // LEASED: the lease token
  uint32_t tenant = 0;
  uint32_t pool = 0;
  uint32_t lease_ms = 0;
  uint32_t initial_backoff_ms = 0;
  uint32_t max_backoff_ms = 0;
  float cost = std::nanf("");  // declared estimate; NaN when none
  int16_t priority = 0;        // validated to +-1000 at enqueue
  uint16_t attempts = 0;
  uint16_t max_attempts = 0;
  PackedJobState state = v1::JOB_STATE_UNSPECIFIED;
  // READY: whether it has an entry in the ready index. A job on its first
  // attempt, ready since its enqueue, has none: its job record alone says
  // so (Restore treats a record with no index entry that way), which spares
  // two of the six index writes of a job that runs once.
  bool ready_entry : 1 = false;
  // READY since its enqueue, restored so, and not leased since: the lease
  // the previous run granted it may have gone out unwritten, so a worker's
  // report of it is adopted rather than refused (Broker::CheckOrAdoptLease).
  bool adoptable : 1 = false;

  std::optional<double> declared_cost() const {
    if (std::isnan(cost)) return std::nullopt;
    return cost;
  }
};

// Job ids come from one counter and jobs mostly leave in about the order
// they came, so the live ones sit in a window of consecutive ids: a deque
// indexed by id - base, with free entries where jobs have left. A lookup
// touches one entry, a lease's neighbouring ids share cache lines, and an
// entry is the 56-byte JobMeta alone. (A hash index of slots, before, cost
// three cache misses a lookup and 74 bytes a job: a lease and completion
// took 160 ns a job at 2M jobs against 33-47 ns now, job_table_bench.)
// Jobs that stay while later ones come and go (scheduled far ahead,
// a paused tenant's) would hold the window open behind them; Compact moves
// them to a hash map when fewer than half the window's entries are live,
// and an insert never opens free entries past twice the live jobs plus
// 4,096 (that job goes to the map).
class JobTable {
 public:
  JobTable() = default;
  JobTable(const JobTable&) = delete;
  JobTable& operator=(const JobTable&) = delete;

  JobMeta* Find(uint64_t id) {
    return const_cast<JobMeta*>(std::as_const(*this).Find(id));
  }
  const JobMeta* Find(uint64_t id) const {
    // For ids below the window, id - base_ wraps past its size.
    if (id - base_ < window_.size() && !IsFree(window_[id - base_])) {
      return &window_[id - base_];
    }
    if (overflow_.empty()) return nullptr;
    auto it = overflow_.find(id);
    return it == overflow_.end() ? nullptr : &it->second;
  }
  // The reference stays valid until the job is erased or Compact runs.
  JobMeta& Insert(uint64_t id, const JobMeta& meta);
  void Erase(uint64_t id);
  size_t size() const { return live_in_window_ + overflow_.size(); }

  // Moves jobs from the window's front to the hash map until at least half
  // of its entries are live; or all of them, if more new jobs went past the
  // window than it holds. Shrinks the map's and the errors' tables once
  // they are mostly empty.
  // Invalidates references; the broker calls it once a dispatcher turn,
  // before the turn's commands, and between restored records.
  void Compact();
  // Entries the window holds, live or free: its memory is 56 bytes each.
  size_t window_entries() const { return window_.size(); }
  // Slots the hash map's table holds, used or not: 9 bytes each. Compact
  // shrinks it; the map alone never does when its jobs leave.
  size_t overflow_capacity() const { return overflow_.capacity(); }
  // The same for the failure texts' table: 41 bytes a slot.
  size_t errors_capacity() const { return errors_.capacity(); }

  // The last failure text; kept apart because few jobs have one. The
  // reference lasts until the next SetLastError, Erase or Compact.
  const std::string& LastError(uint64_t id) const {
    static const std::string kNone;
    auto it = errors_.find(id);
    return it == errors_.end() ? kNone : it->second;
  }
  void SetLastError(uint64_t id, std::string error) {
    if (error.empty()) {
      errors_.erase(id);
    } else {
      errors_.insert_or_assign(id, std::move(error));
    }
  }

  template <class Fn>
  void ForEach(Fn fn) {
    for (size_t i = 0; i < window_.size(); ++i) {
      if (!IsFree(window_[i])) fn(base_ + i, window_[i]);
    }
    for (auto& [id, meta] : overflow_) fn(id, meta);
  }

 private:
  static bool IsFree(const JobMeta& entry) { return entry.state.is_none(); }
  static JobMeta FreeEntry() {
    JobMeta entry;
    entry.state = PackedJobState::None();
    return entry;
  }
  // Drops free entries from the window's front.
  void TrimFront();
  // Moves the window's first `entries` entries' jobs to the hash map.
  void MoveFrontToOverflow(size_t entries);

  uint64_t base_ = 0;           // the id of window_[0]
  std::deque<JobMeta> window_;  // deque: growing never moves an entry
  size_t live_in_window_ = 0;
  // Inserts since the window started that went past its end to the map.
  size_t passed_window_ = 0;
  // Node-based, so that a rehash does not move an entry.
  absl::node_hash_map<uint64_t, JobMeta> overflow_;
  absl::flat_hash_map<uint64_t, std::string> errors_;
};

static_assert(sizeof(JobMeta) <= 56, "JobMeta grew: see the note above it");

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_JOB_TABLE_H_
