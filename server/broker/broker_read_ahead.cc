// Read-ahead of a deep backlog: the ranges the leases asked for
// (ReadAheadPlanner, at each lease), and caching the records read. The
// reading itself is ReadAhead's, on its own thread; the dispatcher carries
// ranges and records between.
#include "server/broker/broker.h"

namespace fairq::server {

std::vector<IdRange> Broker::TakeReadAheadRequests() {
  return std::exchange(read_ahead_requests_, {});
}

// Only jobs READY since their enqueue: a lease answered from the cache goes
// out before its batch is applied, and only such a job is adopted by its
// worker if a crash forgets that lease (broker_restore.cc); a retried,
// delayed or requeued job (with a ready entry) must be leased from the
// store, as before. Jobs leased, finished or canceled since their record was
// read are left out too, and so are specs still cached from the enqueue and
// records without a spec (a lease then reads the job by id, as it would
// have).
void Broker::CacheReadAhead(std::vector<v1::JobRecordWithEncodedSpec> records) {
  for (v1::JobRecordWithEncodedSpec& record : records) {
    const JobMeta* job = jobs_.Find(record.id());
    if (job == nullptr || job->state != v1::JOB_STATE_READY ||
        job->ready_entry || !record.has_spec() ||
        payloads_.Contains(record.id())) {
      continue;
    }
    ReportUnusedReadAhead(
        payloads_.PutEncoded(record.id(), std::move(*record.mutable_spec()),
                             record.enqueued_unix_ms()));
  }
}

void Broker::ReportUnusedReadAhead(size_t specs) {
  if (specs > 0) metrics_.ReadAheadUnused(specs);
}

}  // namespace fairq::server
