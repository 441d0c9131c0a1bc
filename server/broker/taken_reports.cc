#include "server/broker/taken_reports.h"

namespace fairq::server {

TakenReports::TakenReports(size_t capacity) { ring_.reserve(capacity); }

void TakenReports::Add(uint64_t job_id, uint64_t token, Kind kind) {
  if (ring_.size() < ring_.capacity()) {
    ring_.push_back({job_id, token});
  } else {
    Report& oldest = ring_[next_];
    auto it = latest_.find(oldest.job_id);
    // The job's entry may be a later report of it, which stays.
    if (it != latest_.end() && it->second.token == oldest.token) {
      latest_.erase(it);
    }
    oldest = {job_id, token};
    next_ = (next_ + 1) % ring_.size();
  }
  latest_.insert_or_assign(job_id, Latest{token, kind});
}

bool TakenReports::Contains(uint64_t job_id, uint64_t token, Kind kind) const {
  auto it = latest_.find(job_id);
  return it != latest_.end() && it->second.token == token &&
         it->second.kind == kind;
}

}  // namespace fairq::server
