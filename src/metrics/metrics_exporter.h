// MetricsExporter: serves a Collectable as Prometheus text at
// http://<address>/metrics, on prometheus-cpp's Exposer (civetweb) and its
// own threads, until destroyed.
//
// Threading: one owner creates and destroys it; its serving threads call
// the Collectable concurrently, so the Collectable must be thread-safe.
// The destructor runs a short-lived thread of its own that connects to the
// listener, so that civetweb sees the stop at once (metrics_exporter.cc).
#ifndef FAIRQ_METRICS_METRICS_EXPORTER_H_
#define FAIRQ_METRICS_METRICS_EXPORTER_H_

#include <memory>
#include <string>

#include "base/status.h"

namespace prometheus {
class Collectable;
class Exposer;
}  // namespace prometheus

namespace fairq::metrics {

class MetricsExporter {
 public:
  // `address` is "host:port" (port 0 picks a free port). UNAVAILABLE when
  // it cannot be bound.
  static StatusOr<std::unique_ptr<MetricsExporter>> Start(
      const std::string& address,
      const std::shared_ptr<prometheus::Collectable>& collectable);
  ~MetricsExporter();  // stops serving and joins the threads

  // The port actually bound.
  int port() const { return port_; }

  struct Listener;  // where a connection reaches it; opaque here

 private:
  MetricsExporter() = default;

  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
  std::unique_ptr<Listener> listener_;  // null: stop without waking it
};

}  // namespace fairq::metrics

#endif  // FAIRQ_METRICS_METRICS_EXPORTER_H_
