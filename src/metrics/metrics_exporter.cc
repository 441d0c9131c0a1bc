#include "metrics/metrics_exporter.h"

#include <prometheus/exposer.h>

#include <exception>

namespace fairq::metrics {

StatusOr<std::unique_ptr<MetricsExporter>> MetricsExporter::Start(
    const std::string& address,
    const std::shared_ptr<prometheus::Collectable>& collectable) {
  std::unique_ptr<MetricsExporter> exporter(new MetricsExporter());
  // prometheus-cpp reports a failed bind by throwing; it stops here.
  try {
    exporter->exposer_ = std::make_unique<prometheus::Exposer>(address);
  } catch (const std::exception& e) {
    return Unavailable("metrics_listen: cannot serve metrics on " + address +
                       ": " + e.what());
  }
  std::vector<int> ports = exporter->exposer_->GetListeningPorts();
  if (ports.empty()) {
    return Unavailable("metrics_listen: no port bound for " + address);
  }
  exporter->port_ = ports.front();
  exporter->exposer_->RegisterCollectable(collectable);
  return exporter;
}

MetricsExporter::~MetricsExporter() = default;

}  // namespace fairq::metrics
