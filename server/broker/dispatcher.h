// Dispatcher: the one thread that owns the Broker, and so all scheduling
// state. Threads in fairqd:
//   dispatcher    drives gRPC's completion queue (service/call_loop.h):
//                 reads requests, validates and translates them into
//                 commands; owns the Broker: applies commands and timers,
//                 one turn at a time, and hands each turn's writes and
//                 replies on, then sends the lease replies that read
//                 nothing from the store;
//   rpc reads     the few handlers that read the store themselves (GetJob,
//                 CancelJob, dead letters), off the dispatcher thread;
//   writer apply  writes turns' batches, runs the other lease replies
//                 (writer.h);
//   writer sync   syncs the log once per group, then runs the other replies;
//   read-ahead    reads job records ahead of a deep backlog's leases, in id
//                 ranges the Broker asks for, for its PayloadCache
//                 (read_ahead.h); this thread carries ranges and records;
//   metrics       prometheus-cpp's exporter threads: serve /metrics, asking
//                 this thread for a snapshot by command (src/metrics);
//   main          waits for signals and shuts the others down in order.
// gRPC's own threads (its timer, executor, and the reflection service's
// pollers) do no fairq work. The Broker is moved in and never handed out:
// only this thread touches it. Post is safe from any thread; everything
// else is for the owner (main).
#ifndef FAIRQ_SERVER_BROKER_DISPATCHER_H_
#define FAIRQ_SERVER_BROKER_DISPATCHER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "base/status.h"
#include "metrics/metrics.h"
#include "server/broker/broker.h"
#include "server/broker/broker_clock.h"
#include "server/broker/command_queue.h"
#include "server/broker/commands.h"
#include "server/broker/event_loop.h"
#include "server/broker/read_ahead.h"
#include "server/broker/writer.h"

namespace fairq::server {

class Dispatcher {
 public:
  // `metrics` hears how long each turn took; it must outlive us.
  Dispatcher(std::unique_ptr<Broker> broker, Writer* writer,
             store::Store* store, size_t queue_capacity,
             metrics::Metrics& metrics = metrics::NoMetrics());
  ~Dispatcher();  // Stop()

  // With `events`, the thread waits on it as well as on its queue; it must
  // outlive Stop.
  void Start(EventLoop* events = nullptr);
  // Any thread. Queues the command for the dispatcher; from the dispatcher
  // thread itself (handlers run by the EventLoop) it joins the coming turn
  // without a lock. When the queue is full (RESOURCE_EXHAUSTED) or closed
  // (UNAVAILABLE) the command is finished here with that status instead.
  void Post(Command command);
  // Any thread. A fresh id for a Lease call.
  WaiterId NewWaiterId() { return next_waiter_.fetch_add(1) + 1; }
  // Stops taking commands, handles those queued, answers waiting Lease
  // calls with no jobs, hands the last turn to the writer, and joins.
  void Stop();

  size_t queue_depth() const { return queue_.size(); }

 private:
  void Loop();
  // Waits for the next turn's commands; false once stopped and drained.
  bool NextCommands(std::optional<std::chrono::steady_clock::time_point> wake,
                    std::vector<Command>* commands);

  std::unique_ptr<Broker> broker_;  // dispatcher thread only
  BrokerClock clock_;               // dispatcher thread only
  Writer* const writer_;
  store::Store* const store_;
  metrics::Metrics& metrics_;
  ReadAhead read_ahead_;
  CommandQueue<Command> queue_;
  std::atomic<uint64_t> next_waiter_{0};
  std::atomic<EventLoop*> events_{nullptr};  // set from Start to Stop
  std::vector<Command> posted_here_;         // dispatcher thread only
  // Posts on this thread take the fast path while events_ is set.
  std::atomic<std::thread::id> loop_thread_{};
  std::thread thread_;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_DISPATCHER_H_
