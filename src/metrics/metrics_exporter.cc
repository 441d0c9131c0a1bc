#include "metrics/metrics_exporter.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <prometheus/exposer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

namespace fairq::metrics {

// Resolved at Start, so that stopping needs no name lookup.
struct MetricsExporter::Listener {
  sockaddr_storage address;
  socklen_t length;
};

namespace {

using Listener = MetricsExporter::Listener;

// Where a connection reaches the listener civetweb bound for `address`
// ("host:port"; "[v6]:port") on `port`: loopback for a wildcard host.
// IPv4 unless the host is bracketed, as civetweb binds a name's IPv4
// address (and Debian's civetweb has no IPv6 at all); nullopt when the host
// does not resolve.
std::optional<Listener> ListenerAddress(const std::string& address, int port) {
  std::string host = address.substr(0, address.rfind(':'));
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    hints.ai_family = AF_INET6;
  }
  if (host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) !=
      0) {
    return std::nullopt;
  }
  Listener to{};
  std::memcpy(&to.address, found->ai_addr, found->ai_addrlen);
  to.length = found->ai_addrlen;
  freeaddrinfo(found);
  return to;
}

// Opens and at once closes a connection, waiting at most 50 ms for it.
// False once knocking is pointless: refused (the listener is closed, so
// its thread is past the poll) or unanswered (a firewall drops the
// packets, or the address is not this host's).
bool Knock(const Listener& to) {
  int fd = socket(to.address.ss_family,
                  SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  bool again = false;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&to.address), to.length) ==
      0) {
    again = true;
  } else if (errno == EINPROGRESS) {
    pollfd wait = {fd, POLLOUT, 0};
    int error = 0;
    socklen_t size = sizeof(error);
    again = poll(&wait, 1, 50) == 1 &&
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 &&
            error == 0;
  }
  close(fd);
  return again;
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
  if (std::optional<Listener> to = ListenerAddress(address, exporter->port_)) {
    exporter->listener_ = std::make_unique<Listener>(*to);
  }
  exporter->exposer_->RegisterCollectable(collectable);
  return exporter;
}

// civetweb's listener thread sees the stop flag only between polls of its
// socket, which time out after 2 s (its SOCKET_TIMEOUT_QUANTUM), so
// stopping the Exposer took up to that long, and with it every fairqd
// shutdown and restart with metrics on. A connection ends the poll at once.
// One that lands before the flag is set only starts another poll (a worker
// accepts it, reads end of file and closes it), so a thread knocks every
// 10 ms until the Exposer is gone. If that thread cannot start, or the
// knocks are refused or unanswered, the stop just takes as long as before.
MetricsExporter::~MetricsExporter() {
  std::mutex mu;
  std::condition_variable stopped_cv;
  bool stopped = false;
  std::thread knocker;
  if (listener_) {
    try {
      knocker = std::thread([&] {
        std::unique_lock<std::mutex> lock(mu);
        while (!stopped_cv.wait_for(lock, std::chrono::milliseconds(10),
                                    [&] { return stopped; })) {
          lock.unlock();
          bool again = Knock(*listener_);
          lock.lock();
          if (!again) return;
        }
      });
    } catch (const std::system_error&) {
      // No thread to spare: stop the slow way.
    }
  }
  exposer_.reset();
  {
    std::lock_guard<std::mutex> lock(mu);
    stopped = true;
  }
  stopped_cv.notify_one();
  if (knocker.joinable()) knocker.join();
}

}  // namespace fairq::metrics
