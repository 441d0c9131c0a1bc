#include "server/broker/dispatcher.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace fairq::server {
namespace {

// The loop sleeps at most this long, even when its next timer is further
// out (a job scheduled months ahead, or restored with a far not_before):
// waking early costs one empty turn, while adding a distance of centuries to
// steady_clock's nanoseconds would overflow.
constexpr int64_t kLongestSleepMs = 3600 * 1000;

}  // namespace

Dispatcher::Dispatcher(std::unique_ptr<Broker> broker, Writer* writer,
                       store::Store* store, size_t queue_capacity,
                       metrics::Metrics& metrics)
    : broker_(std::move(broker)),
      writer_(writer),
      store_(store),
      metrics_(metrics),
      read_ahead_(store),
      queue_(queue_capacity) {}

Dispatcher::~Dispatcher() { Stop(); }

void Dispatcher::Start() {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "fairq-dispatch");  // for top and perf
    Loop();
  });
}

void Dispatcher::Post(Command command) {
  switch (queue_.Push(std::move(command))) {
    case CommandQueue<Command>::PushResult::kOk:
      return;
    case CommandQueue<Command>::PushResult::kFull:
      FinishCommand(command, ResourceExhausted(
                                 "dispatcher: command queue full; retry "
                                 "after a short backoff"));
      return;
    case CommandQueue<Command>::PushResult::kClosed:
      FinishCommand(command, Unavailable("fairqd is shutting down"));
      return;
  }
}

// The reader stops here, not in the destructor: the daemon closes the
// store once Stop returns.
void Dispatcher::Stop() {
  queue_.Close();
  if (thread_.joinable()) thread_.join();
  read_ahead_.Stop();
}

// One turn: wake at the next timer deadline or when commands arrive, cache
// what was read ahead, run the broker's turn (commands, timers, matching),
// pass on the ranges to read ahead, hand on the writes.
void Dispatcher::Loop() {
  std::vector<Command> commands;
  bool open = true;
  while (open) {
    std::optional<std::chrono::steady_clock::time_point> wake;
    // From the wall clock itself: while clock_ holds still after a step
    // back, a timer is due when the wall clock reaches it.
    if (std::optional<int64_t> at = broker_->NextDeadline()) {
      wake = std::chrono::steady_clock::now() +
             std::chrono::milliseconds(
                 std::clamp<int64_t>(*at - NowUnixMs(), 0, kLongestSleepMs));
    }
    commands.clear();
    open = queue_.PopAll(wake, &commands);
    auto start = std::chrono::steady_clock::now();
    int64_t now = clock_.Now();
    Turn turn(store_->NewBatch());
    ReadAhead::Taken read = read_ahead_.Take();
    broker_->CacheReadAhead(std::move(read.records));
    for (IdRange range : read.unread) broker_->ReadAheadDropped(range);
    broker_->RunTurn(commands, now, turn);
    if (!open) broker_->ReleaseWaiters(turn);
    bool reading = open;  // once the reader refuses, it is not asked again
    for (IdRange range : broker_->TakeReadAheadRequests()) {
      reading = reading && read_ahead_.Request(range);
      if (!reading) broker_->ReadAheadDropped(range);
    }
    std::vector<Reply> early = std::move(turn.replies_before_apply);
    if (!turn.batch.empty() || !turn.replies.empty() ||
        !turn.replies_before_sync.empty()) {
      writer_->Submit(std::move(turn));
    }
    // After Submit, so that the apply thread writes while this one sends.
    for (Reply& reply : early) reply(Status::Ok());
    metrics_.TurnDone(std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  }
}

}  // namespace fairq::server
