// JobPages: which jobs share a stored page (the records of one enqueue
// command, store/job_page.h) and how many of each page's jobs have not
// finished. A page's record space is freed by the batch that finishes its
// last job; until then, each finished job is marked done instead
// (docs/storage.md, "Job pages"). Pages of one job are not tracked: such a
// job's page goes with it.
//
// Thread-safety: none. Owned by the Broker, on the dispatcher thread.
#ifndef FAIRQ_SERVER_BROKER_JOB_PAGES_H_
#define FAIRQ_SERVER_BROKER_JOB_PAGES_H_

#include <cstddef>
#include <cstdint>

#include "absl/container/btree_map.h"

namespace fairq::server {

class JobPages {
 public:
  // A page holding `live` unfinished jobs with ids in [first_id, end_id).
  // Pages never overlap. A page of one is ignored.
  void Add(uint64_t first_id, uint64_t end_id, uint32_t live);

  // What finishing a job leaves to write.
  struct Finish {
    // true: delete the page under first_id. false: mark the job done; its
    // page lives on.
    bool delete_page = false;
    // With the page: delete the done marks of [first_id, end_id), which
    // the page's other jobs left.
    bool clear_marks = false;
    uint64_t first_id = 0;
    uint64_t end_id = 0;
  };
  // REQUIRES: job_id is a live (or dead) job, finished now, once.
  Finish Finished(uint64_t job_id);

  // Pages of more than one job with a job still unfinished.
  size_t size() const { return pages_.size(); }

 private:
  struct Page {
    uint64_t end_id;
    uint32_t live;
  };
  // By first id. A b-tree: with a deep backlog, thousands of pages, each a
  // few dozen bytes, where a node-based map would add two pointers and an
  // allocation to each.
  absl::btree_map<uint64_t, Page> pages_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_JOB_PAGES_H_
