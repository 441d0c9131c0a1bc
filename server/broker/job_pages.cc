#include "server/broker/job_pages.h"

#include <cassert>

namespace fairq::server {

void JobPages::Add(uint64_t first_id, uint64_t end_id, uint32_t live) {
  if (end_id - first_id <= 1 || live == 0) return;
  pages_.insert_or_assign(first_id, Page{end_id, live});
}

JobPages::Finish JobPages::Finished(uint64_t job_id) {
  auto it = pages_.upper_bound(job_id);
  if (it == pages_.begin() || (--it)->second.end_id <= job_id) {
    return {true, false, job_id, job_id + 1};  // a page of one
  }
  assert(it->second.live > 0);
  if (--it->second.live > 0) {
    return {false, false, it->first, it->second.end_id};
  }
  Finish finish{true, true, it->first, it->second.end_id};
  pages_.erase(it);
  return finish;
}

}  // namespace fairq::server
