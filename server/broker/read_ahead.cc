#include "server/broker/read_ahead.h"

#include <pthread.h>

#include <iterator>
#include <utility>

#include "server/logging/logging.h"

namespace fairq::server {

ReadAhead::ReadAhead(const store::Store* store, std::function<void()> on_read)
    : store_(store), on_read_(std::move(on_read)), thread_([this] {
        pthread_setname_np(pthread_self(), "fairq-readahead");
        store::DisablePerfCountersOnThisThread();
        Loop();
      }) {}

ReadAhead::~ReadAhead() { Stop(); }

void ReadAhead::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    ranges_.clear();
  }
  requested_.notify_one();
  if (thread_.joinable()) thread_.join();
}

bool ReadAhead::Request(IdRange range) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ || ranges_.size() >= kMaxPendingRanges) return false;
    ranges_.push_back(range);
  }
  requested_.notify_one();
  return true;
}

ReadAhead::Taken ReadAhead::Take() {
  Taken taken;
  std::lock_guard<std::mutex> lock(mu_);
  std::swap(taken, taken_);
  untaken_bytes_ = 0;
  return taken;
}

void ReadAhead::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    requested_.wait(lock, [this] { return stop_ || !ranges_.empty(); });
    if (stop_) return;
    IdRange range = ranges_.front();
    ranges_.pop_front();
    if (untaken_bytes_ < kMaxUntakenBytes) {
      Read(range, lock);
    } else {
      taken_.unread.push_back(range);
    }
    if (on_read_) {
      lock.unlock();
      on_read_();
      lock.lock();
    }
  }
}

// A failed read hands its range back unread: the leases it was for read
// their jobs by id, which reports the error to the worker. Only the first
// failure after a success is logged, as the same range is asked for again.
void ReadAhead::Read(IdRange range, std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  auto read = store_->ReadJobs(range.begin, range.end, kMaxRangeBytes);
  if (!read.ok() && !failing_) {
    logging::Log(
        spdlog::level::warn, "reading jobs ahead failed",
        {{"from_job_id", range.begin}, {"error", read.status().ToString()}});
  }
  failing_ = !read.ok();
  lock.lock();
  if (!read.ok()) {
    taken_.unread.push_back(range);
    return;
  }
  for (const v1::JobRecordWithEncodedSpec& record : read->jobs) {
    untaken_bytes_ += record.spec().size();
  }
  // Usually nothing waits untaken: hand the vector over whole rather than
  // moving each record into it.
  if (taken_.records.empty()) {
    taken_.records = std::move(read->jobs);
  } else {
    taken_.records.insert(taken_.records.end(),
                          std::make_move_iterator(read->jobs.begin()),
                          std::make_move_iterator(read->jobs.end()));
  }
  // Past its byte budget the read stopped early: the rest is unread.
  if (read->next_id < range.end) {
    taken_.unread.push_back({read->next_id, range.end});
  }
}

}  // namespace fairq::server
