// JobTable: what the broker keeps in memory of each live job (READY,
// SCHEDULED or LEASED): enough to run its lifecycle without reading the
// store. Payloads stay on disk; dead jobs are not kept.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_JOB_TABLE_H_
#define FAIRQ_SERVER_BROKER_JOB_TABLE_H_

#include <cassert>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "fairq/v1/fairq.pb.h"

namespace fairq::server {

// A JobState in one byte (the proto enum is an int with sentinel values).
class PackedJobState {
 public:
  PackedJobState(v1::JobState state) : value_(static_cast<uint8_t>(state)) {}
  operator v1::JobState() const { return static_cast<v1::JobState>(value_); }

 private:
  uint8_t value_;
};

// 56 bytes: with millions of jobs queued, every byte here is megabytes.
struct JobMeta {
  // READY: when it became ready. SCHEDULED: when it is due. LEASED: the
  // lease deadline.
  int64_t at_ms = 0;
  uint64_t seq = 0;    // READY: the ready-index sequence
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
  bool ready_entry = false;

  std::optional<double> declared_cost() const {
    if (std::isnan(cost)) return std::nullopt;
    return cost;
  }
};

// Metadata lives in a deque of slots, found through an index of slot
// numbers. absl's flat containers double their capacity and run between 44%
// and 88% full, so every byte of an index entry counts about twice: an
// id -> slot map entry is 16 bytes (a padded pair) and cost ~40 bytes a
// job; a set of 4-byte slot numbers, hashed and compared through the
// slot's id, costs ~10 plus the 8-byte id beside the slot (the index took
// 80 of 280 MB live at 2M jobs, jemalloc heap profile). Slots are reused
// and never given back, as the index never shrinks either.
class JobTable {
 public:
  JobTable() = default;
  // The index's hasher points into ids_.
  JobTable(const JobTable&) = delete;
  JobTable& operator=(const JobTable&) = delete;

  JobMeta* Find(uint64_t id) {
    auto it = index_.find(ById{id});
    return it == index_.end() ? nullptr : &slots_[*it];
  }
  const JobMeta* Find(uint64_t id) const {
    auto it = index_.find(ById{id});
    return it == index_.end() ? nullptr : &slots_[*it];
  }
  // The reference stays valid until the job is erased.
  JobMeta& Insert(uint64_t id, const JobMeta& meta) {
    auto it = index_.find(ById{id});
    if (it != index_.end()) return slots_[*it] = meta;
    uint32_t slot = NewSlot();
    ids_[slot] = id;  // before the insert, which hashes it
    slots_[slot] = meta;
    index_.insert(slot);
    return slots_[slot];
  }
  void Erase(uint64_t id) {
    auto it = index_.find(ById{id});
    if (it == index_.end()) return;
    free_.push_back(*it);
    index_.erase(it);
    errors_.erase(id);
  }
  size_t size() const { return index_.size(); }
  // Room for `jobs` without growing the index.
  void Reserve(size_t jobs) { index_.reserve(jobs); }

  // The last failure text; kept apart because few jobs have one.
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
    for (uint32_t slot : index_) fn(ids_[slot], slots_[slot]);
  }

 private:
  // A lookup key, so that an id is never taken for a slot number.
  struct ById {
    uint64_t id;
  };
  struct SlotHash {
    using is_transparent = void;
    size_t operator()(uint32_t slot) const {
      return (*this)(ById{(*ids)[slot]});
    }
    size_t operator()(ById key) const { return absl::Hash<uint64_t>{}(key.id); }
    const std::deque<uint64_t>* ids;
  };
  struct SlotEq {
    using is_transparent = void;
    bool operator()(uint32_t a, uint32_t b) const { return a == b; }
    bool operator()(uint32_t slot, ById key) const {
      return (*ids)[slot] == key.id;
    }
    bool operator()(ById key, uint32_t slot) const {
      return (*this)(slot, key);
    }
    const std::deque<uint64_t>* ids;
  };

  uint32_t NewSlot() {
    if (!free_.empty()) {
      uint32_t slot = free_.back();
      free_.pop_back();
      return slot;
    }
    assert(slots_.size() < std::numeric_limits<uint32_t>::max());
    slots_.emplace_back();
    ids_.emplace_back();
    return static_cast<uint32_t>(slots_.size() - 1);
  }

  std::deque<JobMeta> slots_;  // deque: growing never moves a JobMeta
  std::deque<uint64_t> ids_;   // the job id in each slot
  std::vector<uint32_t> free_;
  absl::flat_hash_set<uint32_t, SlotHash, SlotEq> index_{
      0, SlotHash{&ids_}, SlotEq{&ids_}};  // live slots
  absl::flat_hash_map<uint64_t, std::string> errors_;
};

static_assert(sizeof(JobMeta) <= 56, "JobMeta grew: see the note above it");

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_JOB_TABLE_H_
