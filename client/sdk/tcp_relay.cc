#include "client/sdk/tcp_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace fairq::testing {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  return address;
}

// -1 when nothing listens there.
int ConnectTo(int port) {
  if (port == 0) return -1;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = Loopback(port);
  if (fd >= 0 &&
      connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    return fd;
  }
  if (fd >= 0) close(fd);
  return -1;
}

// Copies what `from` has to `to`; false on end of stream or error.
bool Copy(int from, int to) {
  char buffer[16384];
  ssize_t n = read(from, buffer, sizeof(buffer));
  if (n <= 0) return false;
  for (ssize_t done = 0; done < n;) {
    // MSG_NOSIGNAL: a peer that is gone must not SIGPIPE the test.
    ssize_t wrote =
        send(to, buffer + done, static_cast<size_t>(n - done), MSG_NOSIGNAL);
    if (wrote <= 0) return false;
    done += wrote;
  }
  return true;
}

}  // namespace

TcpRelay::TcpRelay() {
  if (pipe2(wake_, O_CLOEXEC) != 0) return;
  // Non-blocking, so that a client gone between poll and accept cannot
  // leave the acceptor stuck in accept.
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in address = Loopback(0);
  socklen_t size = sizeof(address);
  if (fd < 0 ||
      bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(fd, 64) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    if (fd >= 0) close(fd);
    return;
  }
  listen_fd_ = fd;
  port_ = ntohs(address.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TcpRelay::~TcpRelay() {
  if (wake_[1] >= 0) {
    char byte = 0;
    (void)!write(wake_[1], &byte, 1);
  }
  if (acceptor_.joinable()) acceptor_.join();
  for (std::thread& relay : relays_) relay.join();
  for (int fd : {listen_fd_, wake_[0], wake_[1]}) {
    if (fd >= 0) close(fd);
  }
}

void TcpRelay::AcceptLoop() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 || (fds[1].revents & POLLIN) != 0) return;
    int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::lock_guard<std::mutex> lock(mu_);
    relays_.emplace_back([this, client] { Relay(client); });
  }
}

void TcpRelay::DropConnections() {
  std::lock_guard<std::mutex> lock(mu_);
  // shutdown, not close: the relay thread still owns the descriptors, and
  // wakes to find both ends at end of stream.
  for (int fd : open_) shutdown(fd, SHUT_RDWR);
}

void TcpRelay::Relay(int client) {
  int server = ConnectTo(target_.load());
  if (server >= 0) {
    std::lock_guard<std::mutex> lock(mu_);
    open_.insert({client, server});
  }
  while (server >= 0) {
    pollfd fds[3] = {{client, POLLIN, 0}, {server, POLLIN, 0},
                     {wake_[0], POLLIN, 0}};
    if (poll(fds, 3, -1) < 0 || fds[2].revents != 0) break;
    if (fds[0].revents != 0 && !Copy(client, server)) break;
    if (fds[1].revents != 0 && !Copy(server, client)) break;
  }
  if (server >= 0) {
    std::lock_guard<std::mutex> lock(mu_);
    open_.erase(client);
    open_.erase(server);
    close(server);
  }
  close(client);
}

}  // namespace fairq::testing
