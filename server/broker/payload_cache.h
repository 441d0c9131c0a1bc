// PayloadCache: the specs (payloads) of recently enqueued jobs, and of jobs
// read ahead of a deep backlog's leases (read_ahead.h), so that a lease is
// answered from memory instead of a store read on the writer's apply
// thread. Bounded by bytes; the entry put first goes first. Only an
// optimisation: a job not found here is read from the store as before, and
// specs never change, so an entry is never stale.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_PAYLOAD_CACHE_H_
#define FAIRQ_SERVER_BROKER_PAYLOAD_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "fairq/v1/fairq.pb.h"

namespace fairq::server {

class PayloadCache {
 public:
  // The enqueue puts the parsed spec it was given; it lives on the heap by
  // itself so that entries stay small in the map and it moves between a
  // request, the cache and a lease reply by pointer (release_spec /
  // set_allocated_spec), never by copy or swap (at the 2M backlog level the
  // dispatcher ran 12.4k instructions a held cycle instead of 13.4k,
  // docs/benchmarks.md, eighteenth round). The read-ahead puts the spec as
  // it was stored, a serialized JobSpec, which the lease reply carries as
  // it is: fairqd never parses it (nineteenth round). One of the two is set.
  struct Entry {
    std::unique_ptr<v1::JobSpec> spec;
    std::string encoded_spec;
    int64_t enqueued_ms = 0;
    // Put by the read-ahead, not by the enqueue.
    bool read_ahead() const { return spec == nullptr; }
  };

  explicit PayloadCache(size_t budget_bytes) : budget_(budget_bytes) {}

  // Replaces the job's entry, if any; the new one may then go out in the
  // old one's turn, which no caller meets (enqueues put new ids, and the
  // read-ahead skips ids cached). `spec` must not be null. Returns how many
  // entries put by the read-ahead it pushed out before a lease took them.
  size_t Put(uint64_t job_id, std::unique_ptr<v1::JobSpec> spec,
             int64_t enqueued_ms) {
    const size_t bytes = Cost(*spec);
    return Insert(job_id, Entry{std::move(spec), {}, enqueued_ms}, bytes);
  }
  // The same for a spec read ahead, still encoded.
  size_t PutEncoded(uint64_t job_id, std::string encoded_spec,
                    int64_t enqueued_ms) {
    const size_t bytes = EncodedCost(encoded_spec);
    return Insert(job_id, Entry{nullptr, std::move(encoded_spec), enqueued_ms},
                  bytes);
  }

  // Removes and returns the job's entry, if it is still here.
  std::optional<Entry> Take(uint64_t job_id) {
    auto it = entries_.find(job_id);
    if (it == entries_.end()) return std::nullopt;
    Entry entry = std::move(it->second.entry);
    bytes_ -= it->second.cost;
    entries_.erase(it);
    return entry;
  }

  void Erase(uint64_t job_id) { Take(job_id); }
  bool Contains(uint64_t job_id) const { return entries_.contains(job_id); }

  size_t bytes() const { return bytes_; }
  size_t order_size() const { return order_.size(); }  // for tests

 private:
  struct Slot {
    Entry entry;
    size_t cost;  // what Insert added to bytes_
  };

  size_t Insert(uint64_t job_id, Entry entry, size_t bytes) {
    Erase(job_id);
    if (bytes > budget_) return 0;
    size_t unused = 0;
    while (bytes_ + bytes > budget_) unused += EvictOldest();
    bytes_ += bytes;
    entries_.emplace(job_id, Slot{std::move(entry), bytes});
    order_.push_back(job_id);
    DropTakenIds();
    return unused;
  }

  // The spec's heap bytes plus the map's and the order's share, roughly:
  // its encoded size, plus a string's or map node's overhead for the
  // payload and for each label. Within 15% of the memory used for a tenant,
  // a pool, 10 B to 100 kB of payload and 0 or 3 labels (a test checks);
  // other fields count at their encoded size only, which the
  // soft budget can afford. Not SpaceUsedLong itself: its walk by
  // reflection cost 3.5k instructions a job on the dispatcher thread, a
  // fifth of its work in a full cycle (callgrind, docs/benchmarks.md,
  // eighth round).
  static size_t Cost(const v1::JobSpec& spec) {
    constexpr size_t kPerStringBytes = 96;
    return spec.ByteSizeLong() + kPerStringBytes * (1 + spec.labels_size()) +
           sizeof(v1::JobSpec) + sizeof(Slot) + 2 * sizeof(uint64_t);
  }
  // One string's bytes and overhead, and the map's and the order's share.
  static size_t EncodedCost(const std::string& encoded_spec) {
    return encoded_spec.capacity() + sizeof(Slot) + 2 * sizeof(uint64_t);
  }

  // 1 when the entry evicted was the read-ahead's.
  size_t EvictOldest() {
    uint64_t id = order_.front();
    order_.pop_front();
    std::optional<Entry> evicted = Take(id);
    return evicted && evicted->read_ahead() ? 1 : 0;
  }

  // Take leaves the id in `order_`. Most jobs are taken in about the order
  // they came, so their ids are dropped from the front; should one old entry
  // stay (a paused tenant), the queue is rebuilt once it holds more than
  // twice the live entries, which keeps it O(entries), amortised O(1).
  void DropTakenIds() {
    while (!order_.empty() && !entries_.contains(order_.front())) {
      order_.pop_front();
    }
    if (order_.size() <= 2 * entries_.size() + 64) return;
    std::deque<uint64_t> live;
    for (uint64_t id : order_) {
      if (entries_.contains(id)) live.push_back(id);
    }
    order_.swap(live);
  }

  const size_t budget_;
  size_t bytes_ = 0;
  // Job ids are handed out in order, and the cache is filled and taken in
  // about that order (the read-ahead reads id ranges). With the id itself
  // as the probe position (absl uses hash >> 7 for it, the low 7 bits to
  // tell keys in a group apart) neighbouring ids sit in neighbouring slots,
  // so takes walk memory in order instead of missing the CPU cache on each:
  // the dispatcher spent 0.2-0.4 us less a 16-worker backlog cycle at 2M,
  // 0.1-0.4 at 1k (3 same-run pairs, docs/benchmarks.md, twentieth round).
  // Ids that are equal modulo the table's size still share a probe start;
  // absl probes on, so that costs speed only.
  struct IdOrderHash {
    size_t operator()(uint64_t id) const { return (id << 7) | (id & 0x7f); }
  };
  absl::flat_hash_map<uint64_t, Slot, IdOrderHash> entries_;
  std::deque<uint64_t> order_;  // order of Put, first first
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_PAYLOAD_CACHE_H_
