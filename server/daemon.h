// Daemon: fairqd's parts wired together and started in order (metrics,
// store, restored broker, writer, dispatcher, metrics exporter, gRPC server
// with health and reflection), and shut down in reverse.
//
// Threading: created, reloaded and shut down by the main thread only.
#ifndef FAIRQ_SERVER_DAEMON_H_
#define FAIRQ_SERVER_DAEMON_H_

#include <grpcpp/grpcpp.h>

#include <memory>

#include "base/status.h"
#include "metrics/metrics_exporter.h"
#include "metrics/prometheus_metrics.h"
#include "server/broker/dispatcher.h"
#include "server/broker/writer.h"
#include "server/config/daemon_config.h"
#include "server/service/admin_service.h"
#include "server/service/call_loop.h"
#include "server/service/health_service.h"
#include "server/service/producer_service.h"
#include "server/service/worker_service.h"
#include "store/store.h"

namespace fairq::server {

class Daemon {
 public:
  static StatusOr<std::unique_ptr<Daemon>> Start(
      const config::DaemonConfig& config);
  ~Daemon();  // Shutdown()

  // The gRPC port actually bound (useful with port 0).
  int port() const { return port_; }
  // The metrics port bound; 0 when the exporter is off.
  int metrics_port() const { return exporter_ ? exporter_->port() : 0; }
  // Applies the organisations and tenants of a re-read config file (SIGHUP).
  void ReloadSettings(const config::DaemonConfig& config);
  // Stops taking work, answers waiting workers, commits and replies to what
  // is in flight, then closes the server and the store.
  void Shutdown();

 private:
  Daemon() = default;
  Status Open(const config::DaemonConfig& config);
  Status ServeMetrics(const config::DaemonConfig& config);
  Status Serve(const config::DaemonConfig& config);
  metrics::Metrics& metrics();

  // First, so it is destroyed last: everything below reports to it.
  std::shared_ptr<metrics::PrometheusMetrics> metrics_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Writer> writer_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<ProducerService> producer_;
  std::unique_ptr<WorkerService> worker_;
  std::unique_ptr<AdminService> admin_;
  HealthService health_;
  std::unique_ptr<CallLoop> calls_;
  std::unique_ptr<metrics::MetricsExporter> exporter_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  bool stopped_ = false;
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_DAEMON_H_
