// EventLoop: what the dispatcher thread waits on between turns when it
// also serves gRPC's completion queue itself (service/call_loop.h), so that
// a request is read, handled and answered on one thread instead of being
// handed from gRPC's threads to this one. Without an EventLoop (tests, the
// broker's own tools) the dispatcher waits on its command queue alone.
//
// Thread-safety: Collect is the dispatcher thread's; Kick is any thread's.
#ifndef FAIRQ_SERVER_BROKER_EVENT_LOOP_H_
#define FAIRQ_SERVER_BROKER_EVENT_LOOP_H_

#include <chrono>
#include <optional>

namespace fairq::server {

class EventLoop {
 public:
  virtual ~EventLoop() = default;
  // Waits until an event is ready, Kick is called, or `deadline` passes
  // (nullopt: no deadline), then handles every ready event. Handlers that
  // run here post their commands with Dispatcher::Post as on any thread.
  virtual void Collect(
      std::optional<std::chrono::steady_clock::time_point> deadline) = 0;
  // Makes the current or next Collect return soon.
  virtual void Kick() = 0;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_EVENT_LOOP_H_
