// TakenReports: the reports (Complete, or Fail) the broker took lately, by
// job and lease token, so that an exact repeat -- a worker that lost the
// answer and sent the call again -- is answered as the first was, not as a
// stale lease. Memory only, a fixed table indexed by job id: a report is
// remembered until one of a job whose id is a multiple of the table's size
// away takes its slot, which, as jobs finish in about the order they came,
// is about that many reports later. After a restart a repeat gets the stale
// answer again (docs/api.md, "Repeated reports").
//
// Not a hash map with an eviction queue: that cost two cache misses per
// report on the dispatcher thread (4% of the 16-worker cycle rate); here
// reports of jobs finishing in id order touch neighbouring slots.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_TAKEN_REPORTS_H_
#define FAIRQ_SERVER_BROKER_TAKEN_REPORTS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fairq::server {

class TakenReports {
 public:
  enum class Kind : uint8_t { kCompleted, kFailed };

  // REQUIRES: `slots` is a power of two.
  explicit TakenReports(size_t slots) : slots_(slots) {}

  // The report of `job_id`'s lease `token` was taken. It replaces the
  // job's earlier report (an earlier attempt's), if still remembered.
  void Add(uint64_t job_id, uint64_t token, Kind kind) {
    slots_[job_id & (slots_.size() - 1)] = {job_id, token, kind};
  }
  // Whether this exact report was taken, and is still remembered. Job id
  // 0, which empty slots hold, is never a job's.
  bool Contains(uint64_t job_id, uint64_t token, Kind kind) const {
    const Slot& slot = slots_[job_id & (slots_.size() - 1)];
    return slot.job_id == job_id && slot.token == token && slot.kind == kind;
  }

 private:
  struct Slot {
    uint64_t job_id = 0;
    uint64_t token = 0;
    Kind kind = Kind::kCompleted;
  };
  std::vector<Slot> slots_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_TAKEN_REPORTS_H_
