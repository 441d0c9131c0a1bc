#include "server/broker/writer.h"

#include <chrono>

namespace fairq::server {

Writer::Writer(store::Store* store, size_t max_pending_turns,
               metrics::Metrics& metrics)
    : store_(store), max_pending_(max_pending_turns), metrics_(metrics) {}

Writer::~Writer() { Stop(); }

void Writer::Start() { thread_ = std::thread([this] { Loop(); }); }

void Writer::Submit(Turn turn) {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return pending_.size() < max_pending_; });
  pending_.push_back(std::move(turn));
  changed_.notify_all();
}

void Writer::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Writer::Loop() {
  std::vector<Turn> turns;
  while (true) {
    {
      std::unique_lock lock(mu_);
      changed_.wait(lock, [&] { return !pending_.empty() || stopping_; });
      if (pending_.empty()) return;  // stopping, and nothing left
      turns.swap(pending_);
    }
    changed_.notify_all();  // Submit may wait for room
    std::vector<store::WriteBatch> batches;
    batches.reserve(turns.size());
    for (Turn& turn : turns) {
      if (!turn.batch.empty()) batches.push_back(std::move(turn.batch));
    }
    auto start = std::chrono::steady_clock::now();
    Status commit = batches.empty() ? Status::Ok() : store_->Commit(batches);
    if (!batches.empty()) {
      std::chrono::duration<double> took =
          std::chrono::steady_clock::now() - start;
      metrics_.GroupCommitted(took.count(), batches.size());
    }
    for (Turn& turn : turns) {
      for (Reply& reply : turn.replies) reply(commit);
    }
    turns.clear();
  }
}

}  // namespace fairq::server
