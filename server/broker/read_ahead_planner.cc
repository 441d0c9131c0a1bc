#include "server/broker/read_ahead_planner.h"

#include <algorithm>

namespace fairq::server {

// A lease that found no cached spec opens a window at its job, unless a
// window covers that id already (its records are on their way, or the job
// was not READY when read). A lease served by the read-ahead keeps its
// window a range ahead. Leases served by specs cached at enqueue (a shallow
// backlog) do neither, so the read-ahead stops with the backlog.
std::optional<IdRange> ReadAheadPlanner::OnLease(uint64_t job_id, bool cached,
                                                 bool read_ahead,
                                                 uint64_t next_job_id) {
  ++leases_;
  if (cached && !read_ahead) return std::nullopt;
  Window* window = WindowOf(job_id);
  if (!cached) {
    if (window != nullptr) return std::nullopt;
    window = NewWindow(job_id);
    if (window == nullptr) return std::nullopt;
  } else if (window == nullptr) {
    return std::nullopt;
  }
  window->last_used = leases_;
  if (cached && job_id + kSpan < window->covered.end) return std::nullopt;
  // Ids not assigned yet are not covered: leases of jobs enqueued later
  // extend the window to them.
  IdRange range{window->covered.end,
                std::min(window->covered.end + kSpan, next_job_id)};
  uint64_t shortest = cached ? kMinExtension : 1;
  if (range.end < range.begin + shortest) return std::nullopt;
  window->covered.end = range.end;
  window->covered.begin =
      std::max(window->covered.begin,
               range.end - std::min(range.end, kWindowRanges * kSpan));
  return range;
}

void ReadAheadPlanner::Dropped(IdRange range) {
  Window* window = WindowOf(range.begin);
  if (window == nullptr) return;
  window->covered.end = range.begin;
  if (window->covered.end == window->covered.begin) {
    windows_.erase(windows_.begin() + (window - windows_.data()));
  }
}

ReadAheadPlanner::Window* ReadAheadPlanner::WindowOf(uint64_t job_id) {
  for (Window& window : windows_) {
    if (window.covered.Contains(job_id)) return &window;
  }
  return nullptr;
}

ReadAheadPlanner::Window* ReadAheadPlanner::NewWindow(uint64_t job_id) {
  Window fresh{IdRange{job_id, job_id}, leases_};
  if (windows_.size() < kWindows) return &windows_.emplace_back(fresh);
  auto least_recent = std::min_element(windows_.begin(), windows_.end(),
                                       [](const Window& a, const Window& b) {
                                         return a.last_used < b.last_used;
                                       });
  if (leases_ - least_recent->last_used < kIdleLeases) return nullptr;
  *least_recent = fresh;
  return &*least_recent;
}

}  // namespace fairq::server
