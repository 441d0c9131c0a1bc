#include "server/broker/read_ahead.h"

#include <pthread.h>

#include <utility>

#include "server/logging/logging.h"

namespace fairq::server {

ReadAhead::ReadAhead(const store::Store* store, std::function<void()> on_read)
    : store_(store), on_read_(std::move(on_read)), thread_([this] {
        pthread_setname_np(pthread_self(), "fairq-readahead");
        Loop();
      }) {}

ReadAhead::~ReadAhead() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  requested_.notify_one();
  thread_.join();
}

void ReadAhead::Request(IdRange range) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ranges_.size() >= kMaxPendingRanges) return;
    ranges_.push_back(range);
  }
  requested_.notify_one();
}

std::vector<v1::JobRecord> ReadAhead::TakeRecords() {
  std::vector<v1::JobRecord> taken;
  std::lock_guard<std::mutex> lock(mu_);
  taken.swap(records_);
  return taken;
}

// A failed read is logged and its range dropped: the leases it was for read
// their jobs at lease time, which reports the error to the worker.
void ReadAhead::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    requested_.wait(lock, [this] { return stop_ || !ranges_.empty(); });
    if (stop_) return;
    IdRange range = ranges_.front();
    ranges_.pop_front();
    if (records_.size() < kMaxUntakenRecords) {
      lock.unlock();
      auto read = store_->ReadJobs(range.begin, range.end);
      if (!read.ok()) {
        logging::Log(spdlog::level::warn, "reading jobs ahead failed",
                     {{"from_job_id", range.begin},
                      {"error", read.status().ToString()}});
      }
      lock.lock();
      if (read.ok()) {
        for (v1::JobRecord& record : *read) {
          records_.push_back(std::move(record));
        }
      }
    }
    if (on_read_) on_read_();
  }
}

}  // namespace fairq::server
