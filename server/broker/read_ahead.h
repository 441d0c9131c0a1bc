// ReadAhead: reads job records ahead of a deep backlog's leases, on a thread
// of its own, for the dispatcher to answer those leases from the Broker's
// PayloadCache. With millions of jobs queued, a leased job was enqueued long
// ago and its spec is no longer cached; reading it at lease time costs a
// point read (MultiGet) per job on the writer's apply thread. Jobs leave a
// backlog in about id order, so reading a range of ids with one iterator
// costs a fraction of that per job (docs/benchmarks.md, eleventh round).
//
// Thread-safe: the dispatcher thread calls Request and Take; its owner
// calls Stop (Dispatcher::Stop, from main or the destructor). The reader
// thread only reads the store and hands the records back.
#ifndef FAIRQ_SERVER_BROKER_READ_AHEAD_H_
#define FAIRQ_SERVER_BROKER_READ_AHEAD_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "fairq/v1/records.pb.h"
#include "server/broker/id_range.h"
#include "store/store.h"

namespace fairq::server {

class ReadAhead {
 public:
  // Ranges waiting to be read, at most; Request refuses more.
  static constexpr size_t kMaxPendingRanges = 4;
  // Spec bytes one range reads, at most: an eighth of the PayloadCache,
  // so that a range's specs do not push each other out of it (the rest of
  // the range goes back as unread; the record that crosses the bound is
  // kept). Ranges are skipped, as unread, once a quarter of it waits
  // untaken, so at most about 3 MiB waits.
  static constexpr size_t kMaxRangeBytes = size_t{1} << 20;
  static constexpr size_t kMaxUntakenBytes = size_t{2} << 20;

  // `store` must stay open until Stop returns. `on_read`, if given, runs on
  // the reader thread, without the lock, after each range is read or
  // dropped (tests wait on it).
  explicit ReadAhead(const store::Store* store,
                     std::function<void()> on_read = {});
  ~ReadAhead();  // Stop()

  // False when the range was not queued (too many pending, or stopped).
  bool Request(IdRange range);

  struct Taken {
    // In the order requested; specs still encoded (Store::ReadJobs).
    std::vector<v1::JobRecordWithEncodedSpec> records;
    // Ranges, or their ends, left unread: skipped while records waited
    // untaken, failed, or past a read's byte budget.
    std::vector<IdRange> unread;
  };
  // What was read, and left unread, since the last call.
  Taken Take();
  // Drops the pending ranges and joins the reader. Idempotent.
  void Stop();

 private:
  void Loop();
  void Read(IdRange range, std::unique_lock<std::mutex>& lock);

  const store::Store* const store_;
  const std::function<void()> on_read_;
  std::mutex mu_;
  std::condition_variable requested_;
  std::deque<IdRange> ranges_;
  Taken taken_;
  size_t untaken_bytes_ = 0;
  bool stop_ = false;
  bool failing_ = false;  // reader thread only: the last read failed
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_READ_AHEAD_H_
