// beanstalkd_latency: fairq-bench's `latency` scenario against beanstalkd,
// a peer the issue-4 targets are set against, so that both are measured on
// the same machine in the same hour (scripts/peer_latency.sh starts it).
// One producer connection puts 100-byte jobs at --rate for --duration on a
// steady_clock schedule; --consumers connections each loop on `reserve`,
// sending the `delete` of the job they got ahead of the next `reserve`
// (pipelined, as fairq-bench completes in the background). Latency is
// client side: the put issued to the reserve reply carrying its job read.
//
// Hand-written protocol code rather than a client library: Debian ships no
// C++ beanstalkd client, and the three commands used fit in this file.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/stats.h"

namespace {

using Clock = std::chrono::steady_clock;

// One blocking connection with a read buffer; lines end in "\r\n".
class Connection {
 public:
  bool Open(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return false;
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~Connection() {
    if (fd_ >= 0) close(fd_);
  }

  bool Send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n = write(fd_, bytes.data() + sent, bytes.size() - sent);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  // The next line, without its "\r\n"; false when the peer closed.
  bool ReadLine(std::string* line) {
    for (;;) {
      size_t end = buffer_.find("\r\n");
      if (end != std::string::npos) {
        *line = buffer_.substr(0, end);
        buffer_.erase(0, end + 2);
        return true;
      }
      if (!Fill()) return false;
    }
  }

  // `n` bytes of a job body and its "\r\n".
  bool ReadBody(size_t n, std::string* body) {
    while (buffer_.size() < n + 2) {
      if (!Fill()) return false;
    }
    *body = buffer_.substr(0, n);
    buffer_.erase(0, n + 2);
    return true;
  }

 private:
  bool Fill() {
    char chunk[4096];
    ssize_t n = read(fd_, chunk, sizeof(chunk));
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  std::string buffer_;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fairq-bench latency's workload against beanstalkd"};
  int port = 11300;
  double rate = 2000, duration = 5;
  int consumers = 4;
  app.add_option("--port", port, "beanstalkd's port on 127.0.0.1")
      ->capture_default_str();
  app.add_option("--rate", rate, "puts per second")->capture_default_str();
  app.add_option("--duration", duration, "seconds of puts")
      ->capture_default_str();
  app.add_option("--consumers", consumers, "connections looping on reserve")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  CLI11_PARSE(app, argc, argv);

  const uint64_t count = static_cast<uint64_t>(rate * duration);
  const auto interval =
      std::chrono::nanoseconds(static_cast<int64_t>(1e9 / rate));
  std::vector<Clock::time_point> issued(count), arrived(count);
  std::atomic<uint64_t> received{0};
  std::atomic<bool> failed{false};

  std::vector<std::thread> threads;
  for (int c = 0; c < consumers; ++c) {
    threads.emplace_back([&] {
      Connection conn;
      if (!conn.Open(port)) {
        failed = true;
        return;
      }
      std::string line, body, pending_delete;
      while (received.load() < count && !failed) {
        // reserve-with-timeout so that consumers notice the end.
        if (!conn.Send(pending_delete + "reserve-with-timeout 1\r\n")) break;
        if (!pending_delete.empty() && !conn.ReadLine(&line)) break;
        pending_delete.clear();
        if (!conn.ReadLine(&line)) break;
        unsigned long long id = 0;
        size_t bytes = 0;
        if (std::sscanf(line.c_str(), "RESERVED %llu %zu", &id, &bytes) != 2) {
          if (line == "TIMED_OUT") continue;
          failed = true;
          break;
        }
        if (!conn.ReadBody(bytes, &body)) break;
        Clock::time_point now = Clock::now();
        uint64_t seq = std::stoull(body.substr(0, 20));
        if (seq < count) arrived[seq] = now;
        received.fetch_add(1);
        pending_delete = "delete " + std::to_string(id) + "\r\n";
      }
    });
  }

  Connection producer;
  if (!producer.Open(port)) {
    std::cerr << "beanstalkd_latency: cannot connect to 127.0.0.1:" << port
              << "\n";
    failed = true;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Clock::time_point start = Clock::now();
  std::string line;
  for (uint64_t i = 0; i < count && !failed; ++i) {
    std::this_thread::sleep_until(start + interval * i);
    char head[21];
    std::snprintf(head, sizeof(head), "%020llu",
                  static_cast<unsigned long long>(i));
    std::string body = std::string(head) + std::string(80, 'x');
    issued[i] = Clock::now();
    if (!producer.Send("put 0 0 60 " + std::to_string(body.size()) + "\r\n" +
                       body + "\r\n") ||
        !producer.ReadLine(&line) || line.rfind("INSERTED", 0) != 0) {
      std::cerr << "beanstalkd_latency: put " << i << " got '" << line << "'\n";
      failed = true;
    }
  }
  for (std::thread& t : threads) t.join();
  if (failed || received.load() < count) {
    std::cerr << "beanstalkd_latency: " << received.load() << " of " << count
              << " jobs reserved\n";
    return 1;
  }
  std::vector<double> ms(count);
  for (uint64_t i = 0; i < count; ++i) {
    ms[i] = std::chrono::duration<double, std::milli>(arrived[i] - issued[i])
                .count();
  }
  fairq::bench::Summary summary = fairq::bench::Summarize(std::move(ms));
  std::printf(
      "{\"peer\": \"beanstalkd\", \"jobs\": %zu, \"p50_ms\": %.3f, "
      "\"p99_ms\": %.3f, \"max_ms\": %.3f}\n",
      summary.count, summary.p50, summary.p99, summary.max);
  return 0;
}
