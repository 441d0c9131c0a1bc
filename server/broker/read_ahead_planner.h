// ReadAheadPlanner: decides, lease by lease, which job ids to read ahead of
// a deep backlog's leases (read_ahead.h). It follows up to four frontiers
// ("windows": tenants whose backlogs lie in different id ranges), each the
// ranges requested from where a lease first missed the payload cache.
//
// Not thread-safe; owned by the Broker on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_READ_AHEAD_PLANNER_H_
#define FAIRQ_SERVER_BROKER_READ_AHEAD_PLANNER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "server/broker/id_range.h"

namespace fairq::server {

class ReadAheadPlanner {
 public:
  // Ids a range spans. With the jobs of 100 tenants interleaved, DRR leases
  // from a window of about 1,000 ids at a time (docs/benchmarks.md, tenth
  // round); a range twice that holds most of what one lease takes.
  static constexpr uint64_t kSpan = 2048;
  // Frontiers followed at once. A miss beyond them replaces the least
  // recently used window, if no lease has used it for kIdleLeases leases:
  // with more frontiers than windows, windows in use stay (the others'
  // leases read by id) rather than each replacing the next before its
  // records are leased.
  static constexpr size_t kWindows = 4;
  static constexpr uint64_t kIdleLeases = 2048;
  // A window covers its last ranges only. A lease behind them that misses
  // (a slower tenant's job, cached by an earlier range and since pushed out
  // of the cache) opens a window of its own rather than reading by id for
  // good.
  static constexpr uint64_t kWindowRanges = 3;
  // A window is extended by at least this many ids, so that leases near the
  // newest ids do not ask for a sliver each.
  static constexpr uint64_t kMinExtension = kSpan / 4;

  // For each granted lease: whether its spec was cached, and if so whether
  // by the read-ahead; ids from `next_job_id` on are not assigned yet.
  // Returns the range to read next, if any.
  std::optional<IdRange> OnLease(uint64_t job_id, bool cached, bool read_ahead,
                                 uint64_t next_job_id);
  // A range OnLease returned, or its end, was not read after all (the
  // reader was busy, the read failed or stopped at its byte budget): the
  // window covering it is cut back to where it starts, to be asked for
  // again at its next lease.
  void Dropped(IdRange range);

 private:
  struct Window {
    IdRange covered;         // ids requested, at most kWindowRanges ranges
    uint64_t last_used = 0;  // leases_ when a lease last used it
  };

  Window* WindowOf(uint64_t job_id);
  // Null when every window is in use.
  Window* NewWindow(uint64_t job_id);

  std::vector<Window> windows_;
  uint64_t leases_ = 0;  // OnLease calls
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_READ_AHEAD_PLANNER_H_
