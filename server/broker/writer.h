// Writer: the stage between the dispatcher and the disk. It takes each
// dispatcher turn's WriteBatch with the replies that depend on it, commits
// every batch that is waiting in one go (one fsync for all of them: group
// commit), then runs the replies. fsync therefore never runs on the
// dispatcher, and no client hears "done" before its write is durable.
//
// Threads: Submit is called by the dispatcher thread only; the writer's own
// thread commits and runs replies. Submit blocks while too many turns wait,
// which stalls the dispatcher and so fills its command queue: back-pressure
// reaches the clients as RESOURCE_EXHAUSTED.
#ifndef FAIRQ_SERVER_BROKER_WRITER_H_
#define FAIRQ_SERVER_BROKER_WRITER_H_

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "base/status.h"
#include "metrics/metrics.h"
#include "store/store.h"

namespace fairq::server {

// Runs after the batch it came with was committed (status OK) or not.
using Reply = std::function<void(const Status& commit)>;

struct Turn {
  explicit Turn(store::WriteBatch b) : batch(std::move(b)) {}
  store::WriteBatch batch;
  std::vector<Reply> replies;
};

class Writer {
 public:
  // `metrics` hears of each group commit; it must outlive the writer.
  Writer(store::Store* store, size_t max_pending_turns,
         metrics::Metrics& metrics = metrics::NoMetrics());
  ~Writer();  // stops and joins

  void Start();
  // REQUIRES: dispatcher thread.
  void Submit(Turn turn);
  // Commits what is pending, runs its replies, and joins the thread.
  void Stop();

 private:
  void Loop();

  store::Store* const store_;
  const size_t max_pending_;
  metrics::Metrics& metrics_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<Turn> pending_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_WRITER_H_
