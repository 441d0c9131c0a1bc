// JobTable: what the broker keeps in memory of each live job (READY,
// SCHEDULED or LEASED): enough to run its lifecycle without reading the
// store. Payloads stay on disk; dead jobs are not kept.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_JOB_TABLE_H_
#define FAIRQ_SERVER_BROKER_JOB_TABLE_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "fairq/v1/fairq.pb.h"

namespace fairq::server {

struct JobMeta {
  int64_t enqueued_ms = 0;
  // READY: when it became ready. SCHEDULED: when it is due. LEASED: the
  // lease deadline.
  int64_t at_ms = 0;
  uint64_t seq = 0;    // READY: the ready-index sequence
  uint64_t token = 0;  // LEASED: the lease token
  uint32_t tenant = 0;
  uint32_t pool = 0;
  int32_t priority = 0;
  uint32_t lease_ms = 0;
  uint32_t initial_backoff_ms = 0;
  uint32_t max_backoff_ms = 0;
  float cost = std::nanf("");  // declared estimate; NaN when none
  uint16_t attempts = 0;
  uint16_t max_attempts = 0;
  v1::JobState state = v1::JOB_STATE_UNSPECIFIED;

  // A READY job on its first attempt, ready since its enqueue, has no entry
  // in the ready index: its job record alone says so (Restore treats a
  // record with no index entry that way). This spares two of the six index
  // writes of a job that runs once.
  bool ImpliedReady() const { return attempts == 0 && at_ms == enqueued_ms; }

  std::optional<double> declared_cost() const {
    if (std::isnan(cost)) return std::nullopt;
    return cost;
  }
};

class JobTable {
 public:
  JobMeta* Find(uint64_t id) {
    auto it = jobs_.find(id);
    return it == jobs_.end() ? nullptr : &it->second;
  }
  const JobMeta* Find(uint64_t id) const {
    auto it = jobs_.find(id);
    return it == jobs_.end() ? nullptr : &it->second;
  }
  JobMeta& Insert(uint64_t id, const JobMeta& meta) {
    return jobs_.insert_or_assign(id, meta).first->second;
  }
  void Erase(uint64_t id) {
    jobs_.erase(id);
    errors_.erase(id);
  }
  size_t size() const { return jobs_.size(); }

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
    for (auto& [id, meta] : jobs_) fn(id, meta);
  }

 private:
  absl::flat_hash_map<uint64_t, JobMeta> jobs_;
  absl::flat_hash_map<uint64_t, std::string> errors_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_JOB_TABLE_H_
