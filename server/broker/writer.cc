#include "server/broker/writer.h"

#include "server/logging/logging.h"

namespace fairq::server {

Writer::Writer(store::Store* store, size_t max_pending_turns)
    : store_(store), max_pending_(max_pending_turns) {}

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
    bool was_failed = store_->failed();
    Status commit = batches.empty() ? Status::Ok() : store_->Commit(batches);
    // Logged once, not per caller: from here on the store refuses every
    // write, and each caller gets the error in its reply.
    if (!commit.ok() && !was_failed) {
      logging::Log(spdlog::level::err,
                   "store commit failed; store now refuses writes",
                   {{"turns", turns.size()}, {"error", commit.ToString()}});
    }
    for (Turn& turn : turns) {
      for (Reply& reply : turn.replies) reply(commit);
    }
    turns.clear();
  }
}

}  // namespace fairq::server
