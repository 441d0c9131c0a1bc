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

void RefuseShuttingDown(std::vector<Command>& commands) {
  for (Command& command : commands) {
    FinishCommand(command, Unavailable("fairqd is shutting down"));
  }
  commands.clear();
}

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

void Dispatcher::Start(EventLoop* events) {
  events_ = events;
  // Commands posted before now (a metrics scrape) kicked nothing.
  if (events) events->Kick();
  thread_ = std::thread([this] {
    loop_thread_.store(std::this_thread::get_id());
    pthread_setname_np(pthread_self(), "fairq-dispatch");  // for top and perf
    Loop();
  });
}

void Dispatcher::Post(Command command) {
  if (std::this_thread::get_id() == loop_thread_.load() && events_.load()) {
    posted_here_.push_back(std::move(command));
    return;
  }
  switch (queue_.Push(std::move(command))) {
    case CommandQueue<Command>::PushResult::kOk:
      if (EventLoop* events = events_.load()) events->Kick();
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
  if (EventLoop* events = events_.exchange(nullptr)) events->Kick();
  if (thread_.joinable()) {
    thread_.join();
  } else {  // never started (the server did not come up): refuse what came
    std::vector<Command> queued;
    queue_.TryPopAll(&queued);
    RefuseShuttingDown(queued);
  }
  read_ahead_.Stop();
}

bool Dispatcher::NextCommands(
    std::optional<std::chrono::steady_clock::time_point> wake,
    std::vector<Command>* commands) {
  // Once stopped (no EventLoop), calls still arriving are the EventLoop
  // owner's to refuse (CallLoop::Drain); this thread only finishes what it
  // was given.
  EventLoop* events = events_.load();
  if (!events) return queue_.PopAll(wake, commands);
  // Posted here outside Collect (from a reply): this turn's, not the next
  // event's.
  if (!posted_here_.empty()) wake = std::chrono::steady_clock::now();
  events->Collect(wake);
  for (Command& command : posted_here_) commands->push_back(std::move(command));
  posted_here_.clear();
  return queue_.TryPopAll(commands);
}

// One turn: wake at the next timer deadline or when commands arrive, cache
// what was read ahead, run the broker's turn (commands, timers, matching),
// pass on the ranges to read ahead, hand on the writes.
void Dispatcher::Loop() {
  std::vector<Command> commands;
  bool open = true;
  while (open) {
    std::optional<std::chrono::steady_clock::time_point> wake;
    if (std::optional<int64_t> at = broker_->NextDeadline()) {
      wake = std::chrono::steady_clock::now() +
             std::chrono::milliseconds(
                 std::clamp<int64_t>(*at - clock_.Now(), 0, kLongestSleepMs));
    }
    commands.clear();
    open = NextCommands(wake, &commands);
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
  RefuseShuttingDown(posted_here_);
}

}  // namespace fairq::server
