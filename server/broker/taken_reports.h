// TakenReports: the last reports (Complete, or Fail) the broker took, by
// job and lease token, so that an exact repeat -- a worker that lost the
// answer and sent the call again -- is answered as the first was, not as a
// stale lease. Memory only and bounded by count: after a restart, or once
// `capacity` later reports pushed it out, a repeat gets the stale answer
// again (docs/api.md, "Repeated reports").
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_TAKEN_REPORTS_H_
#define FAIRQ_SERVER_BROKER_TAKEN_REPORTS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace fairq::server {

class TakenReports {
 public:
  enum class Kind : uint8_t { kCompleted, kFailed };

  // REQUIRES: capacity > 0.
  explicit TakenReports(size_t capacity);

  // The report of `job_id`'s lease `token` was taken. A job's later report
  // (a new attempt's) replaces its earlier one.
  void Add(uint64_t job_id, uint64_t token, Kind kind);
  // Whether this exact report was taken, and is still remembered.
  bool Contains(uint64_t job_id, uint64_t token, Kind kind) const;
  size_t size() const { return latest_.size(); }

 private:
  struct Report {
    uint64_t job_id;
    uint64_t token;
  };
  struct Latest {
    uint64_t token;
    Kind kind;
  };
  // Reports in the order taken, overwritten oldest first once full; a job
  // may appear more than once (one report per attempt).
  std::vector<Report> ring_;
  size_t next_ = 0;                               // the slot Add writes next
  absl::flat_hash_map<uint64_t, Latest> latest_;  // by job id
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_TAKEN_REPORTS_H_
