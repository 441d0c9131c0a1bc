#include "metrics/metrics_exporter.h"

#include <netdb.h>
#include <prometheus/exposer.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <thread>

namespace fairq::metrics {
namespace {

// The address a connection to a listener bound at `address` ("host:port",
// "[v6]:port") goes to, with the bound port; nullopt if it cannot be told.
std::optional<std::pair<sockaddr_storage, socklen_t>> ConnectAddress(
    const std::string& address, int port) {
  std::string host = address.substr(0, address.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) !=
      0) {
    return std::nullopt;
  }
  std::pair<sockaddr_storage, socklen_t> to{};
  std::memcpy(&to.first, found->ai_addr, found->ai_addrlen);
  to.second = found->ai_addrlen;
  freeaddrinfo(found);
  return to;
}

// Opens and at once closes a connection; a refusal (the listener already
// gone) is as good as a success here.
void Knock(const sockaddr_storage& to, socklen_t length) {
  int fd = socket(to.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  (void)connect(fd, reinterpret_cast<const sockaddr*>(&to), length);
  close(fd);
}

}  // namespace

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
  if (auto to = ConnectAddress(address, exporter->port_)) {
    exporter->wake_ = WakeAddress{to->first, to->second};
  }
  exporter->exposer_->RegisterCollectable(collectable);
  return exporter;
}

// civetweb's listener thread sees the stop flag only between polls of its
// socket, which time out after 2 s (its SOCKET_TIMEOUT_QUANTUM), so
// stopping the Exposer took up to that long, and with it every fairqd
// shutdown and restart with metrics on. A connection ends the poll at once:
// while the Exposer stops, a thread knocks every 10 ms (each connection is
// closed at once, and civetweb drops it).
MetricsExporter::~MetricsExporter() {
  std::atomic<bool> stopped{false};
  std::thread knocker;
  if (wake_) {
    knocker = std::thread([this, &stopped] {
      while (!stopped.load()) {
        Knock(wake_->address, wake_->length);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
  }
  exposer_.reset();
  stopped.store(true);
  if (knocker.joinable()) knocker.join();
}

}  // namespace fairq::metrics
