// TcpRelay: a TCP forwarder on 127.0.0.1 for tests. Clients connect to its
// port, which never changes; each connection is relayed to the current
// target port on 127.0.0.1. With no target, or a target that refuses,
// accepted connections are closed at once, which a gRPC client sees as
// UNAVAILABLE. It lets a test restart fairqd (whose port changes) behind an
// address that does not.
//
// Thread-safe: set_target may be called while connections are relayed. One
// thread accepts; each connection gets a thread that copies both ways.
#ifndef FAIRQ_CLIENT_SDK_TCP_RELAY_H_
#define FAIRQ_CLIENT_SDK_TCP_RELAY_H_

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace fairq::testing {

class TcpRelay {
 public:
  TcpRelay();   // listens on 127.0.0.1, port chosen by the kernel
  ~TcpRelay();  // closes every connection and joins the threads

  bool ok() const { return listen_fd_ >= 0; }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  // Connections accepted from now on go to 127.0.0.1:`port`; 0: none.
  void set_target(int port) { target_.store(port); }
  // Cuts every relayed connection, as a network failure would.
  void DropConnections();

 private:
  void AcceptLoop();
  void Relay(int client);

  int listen_fd_ = -1;
  int port_ = 0;
  // Written once at shutdown; every thread polls its read end, so one
  // write wakes them all without any of them polling a flag on a timer.
  int wake_[2] = {-1, -1};
  std::atomic<int> target_{0};
  std::mutex mu_;
  std::set<int> open_;  // sockets of relayed connections, both ends
  std::vector<std::thread> relays_;
  std::thread acceptor_;
};

}  // namespace fairq::testing

#endif  // FAIRQ_CLIENT_SDK_TCP_RELAY_H_
