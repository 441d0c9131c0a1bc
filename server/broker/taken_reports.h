// TakenReports: the reports (Complete, Fail or Release) the broker took lately,
// by job and lease token, so that an exact repeat -- a worker that lost the
// answer and sent the call again -- is answered as the first was, not as a
// stale lease. Memory only, a fixed table indexed by job id: a report is
// remembered until the job's next report, or one of a job whose id is a
// multiple of the table's size away, takes its slot; as jobs finish in
// about the order they came, that is about the table's size in reports
// later. After a restart a repeat gets the stale answer again (docs/api.md,
// "Repeated reports").
//
// Not a hash map with an eviction queue: that cost two cache misses per
// report on the dispatcher thread (4% of the 16-worker cycle rate); here
// reports of jobs finishing in id order touch neighbouring slots.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_TAKEN_REPORTS_H_
#define FAIRQ_SERVER_BROKER_TAKEN_REPORTS_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fairq::server {

class TakenReports {
 public:
  enum class Kind : uint8_t { kCompleted = 0, kFailed = 1, kReleased = 2 };

  // `slots` is rounded up to a power of two.
  explicit TakenReports(size_t slots) : slots_(std::bit_ceil(slots)) {}

  // The report of `job_id`'s lease `token` was taken. It replaces the
  // job's earlier report (an earlier attempt's), if still remembered.
  void Add(uint64_t job_id, uint64_t token, Kind kind) {
    slots_[job_id & (slots_.size() - 1)] = {Tag(job_id, kind), token};
  }
  // Whether this exact report was taken, and is still remembered. Empty
  // slots hold token 0, which no lease has (and a client may send).
  // An id at or past 2^62, which a report may name but no job has, is
  // never one: its tag would alias a real job's.
  bool Contains(uint64_t job_id, uint64_t token, Kind kind) const {
    if (job_id >= kFirstUntaggableId) return false;
    const Slot& slot = slots_[job_id & (slots_.size() - 1)];
    return token != 0 && slot.token == token && slot.tag == Tag(job_id, kind);
  }

 private:
  // Job ids stay far below 2^62, so the kind fits in the low two bits:
  // 16-byte slots.
  static constexpr uint64_t kFirstUntaggableId = uint64_t{1} << 62;
  static uint64_t Tag(uint64_t job_id, Kind kind) {
    return job_id << 2 | static_cast<uint64_t>(kind);
  }
  struct Slot {
    uint64_t tag = 0;
    uint64_t token = 0;
  };
  std::vector<Slot> slots_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_TAKEN_REPORTS_H_
