// ReadAhead: reads job records ahead of a deep backlog's leases, on a thread
// of its own, for the dispatcher to answer those leases from the Broker's
// PayloadCache. With millions of jobs queued, a leased job was enqueued long
// ago and its spec is no longer cached; reading it at lease time costs a
// point read (MultiGet) per job on the writer's apply thread. Jobs leave a
// backlog in about id order, so reading a range of ids with one iterator
// costs a fraction of that per job (docs/benchmarks.md, eleventh round).
//
// Thread-safe: the dispatcher thread calls Request and TakeRecords; the
// reader thread only reads the store and hands the records back.
#ifndef FAIRQ_SERVER_BROKER_READ_AHEAD_H_
#define FAIRQ_SERVER_BROKER_READ_AHEAD_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "fairq/v1/records.pb.h"
#include "store/store.h"

namespace fairq::server {

// Job ids [begin, end).
struct IdRange {
  uint64_t begin = 0;
  uint64_t end = 0;
};

class ReadAhead {
 public:
  // Ranges waiting to be read, and records read and not yet taken, at most;
  // beyond, requests are dropped (the leases they were for read the store).
  static constexpr size_t kMaxPendingRanges = 4;
  static constexpr size_t kMaxUntakenRecords = 16384;

  // `store` must outlive this. `on_read`, if given, runs on the reader
  // thread after each range is read or dropped (tests wait on it).
  explicit ReadAhead(const store::Store* store,
                     std::function<void()> on_read = {});
  ~ReadAhead();  // stops and joins the reader

  void Request(IdRange range);
  // The records read since the last call, in the order requested.
  std::vector<v1::JobRecord> TakeRecords();

 private:
  void Loop();

  const store::Store* const store_;
  const std::function<void()> on_read_;
  std::mutex mu_;
  std::condition_variable requested_;
  std::deque<IdRange> ranges_;
  std::vector<v1::JobRecord> records_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_READ_AHEAD_H_
