// beanstalkd_latency: fairq-bench's `latency` workload against beanstalkd,
// a peer the issue-4 targets are set against, so that both are measured on
// the same machine in the same minutes (scripts/peer_latency.sh starts it).
// One producer connection sends 100-byte puts on fairq-bench's schedule
// (Pace, RunPaced) without waiting for their replies, which a reader thread
// takes in order; --consumers connections each loop on `reserve`. A
// consumer sends the `delete` of the job it got just ahead of its next
// `reserve`: beanstalkd accepts a delete only from the connection that
// reserved the job, so unlike fairq-bench's background Completer, the
// delete (and its fsync under -f 0) runs before that consumer's next
// reserve. fairq's workers also take up to 16 jobs a Lease; a reserve takes
// one. Latency is client side: the put sent to the reserve reply carrying
// its job read. All on a tube of the run's own. --closed-loop makes each
// put wait for the previous one's reply, as a synchronous client does: the
// time a put waits behind a slow reply is then not measured.
//
// Hand-written protocol code rather than a client library: Debian ships no
// C++ beanstalkd client, and the five commands used fit in this file.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/paced_schedule.h"
#include "bench/stats.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kTagDigits = 20;
constexpr size_t kBodyBytes = 100;
// A beanstalkd that stops answering fails the run instead of hanging it.
constexpr int kReadTimeoutSeconds = 10;

// One blocking connection with a read buffer; lines end in "\r\n".
class Connection {
 public:
  ~Connection() {
    if (fd_ >= 0) close(fd_);
  }

  bool Open(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return false;
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    timeval timeout{kReadTimeoutSeconds, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }

  bool Send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      // MSG_NOSIGNAL: a closed connection fails the run with a message
      // rather than killing the process with SIGPIPE.
      ssize_t n =
          send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
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

  // A job body of `n` bytes and the "\r\n" after it.
  bool ReadBody(size_t n, std::string* body) {
    while (buffer_.size() < n + 2) {
      if (!Fill()) return false;
    }
    if (buffer_.compare(n, 2, "\r\n") != 0) return false;
    *body = buffer_.substr(0, n);
    buffer_.erase(0, n + 2);
    return true;
  }

  // Ends both directions: a thread blocked reading returns false.
  void Shutdown() { shutdown(fd_, SHUT_RDWR); }

  // Sends `command` and expects `reply` as the whole answer line.
  bool Expect(const std::string& command, const std::string& reply) {
    std::string line;
    return Send(command) && ReadLine(&line) && line == reply;
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

// What the threads share; the first failure is kept and ends the run.
class Run {
 public:
  Run(uint64_t count, std::string tube)
      : count_(count),
        tube_(std::move(tube)),
        issued_(count),
        arrived_(count) {}

  void Fail(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_.empty()) error_ = why;
    failed_ = true;
    changed_.notify_all();
  }
  // Waits until every job arrived or the run failed; fails it if neither
  // happened by `deadline`, which ends the consumers.
  void WaitUntilDone(Clock::time_point deadline) {
    WaitFor(
        deadline, [&] { return done_.load(); },
        [&] {
          return std::to_string(count_ - received_) + " jobs never arrived";
        });
  }
  bool failed() const { return failed_.load(); }
  std::string error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

  // Reserves until every job arrived or the run failed.
  void Consume(int port);
  // Waits until `n` consumers watch the tube; fails the run if they do not
  // by `deadline`.
  void WaitForConsumers(size_t n, Clock::time_point deadline) {
    WaitFor(
        deadline, [&] { return watching_ >= n; },
        [] { return std::string("consumers did not start"); });
  }
  // Puts every job on the schedule; returns how many were sent late.
  // `closed_loop`: each put waits for the previous one's reply, so a slow
  // reply delays the puts after it and their wait is not measured.
  uint64_t Produce(int port, const fairq::bench::Pace& pace, bool closed_loop);
  // Puts sent per second, first to last.
  double IssuedPerSecond() const;
  // Latency of each job in ms. REQUIRES: every job arrived.
  std::vector<double> LatenciesMs() const;

 private:
  // Waits until `ready()` (under mu_) or the run failed; fails it with
  // `why()` if neither happened by `deadline`.
  template <class Ready, class Why>
  void WaitFor(Clock::time_point deadline, Ready ready, Why why) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!changed_.wait_until(lock, deadline,
                             [&] { return ready() || failed_; })) {
      error_ = why();
      failed_ = true;
    }
  }
  // Consume's per-job step: records the job's arrival, once.
  void Arrived(const std::string& body, Clock::time_point now);

  const uint64_t count_;
  const std::string tube_;
  std::vector<Clock::time_point> issued_;   // written by Produce's thread
  std::vector<Clock::time_point> arrived_;  // guarded by mu_
  uint64_t received_ = 0;                   // guarded by mu_
  size_t watching_ = 0;                     // guarded by mu_
  std::atomic<bool> done_{false};           // every job arrived
  std::atomic<bool> failed_{false};
  mutable std::mutex mu_;
  std::condition_variable changed_;  // done_, failed_ or watching_ changed
  std::string error_;                // guarded by mu_
};

void Run::Consume(int port) {
  Connection conn;
  if (!conn.Open(port) ||
      !conn.Expect("watch " + tube_ + "\r\n", "WATCHING 2") ||
      !conn.Expect("ignore default\r\n", "WATCHING 1")) {
    return Fail("consumer: cannot connect and watch the tube");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++watching_;
    changed_.notify_all();
  }
  std::string line, body, pending_delete;
  while (!done_ && !failed_) {
    // With a timeout, so that a consumer notices the end of the run.
    if (!conn.Send(pending_delete + "reserve-with-timeout 1\r\n")) {
      return Fail("consumer: send failed");
    }
    if (!pending_delete.empty()) {
      if (!conn.ReadLine(&line)) return Fail("consumer: no answer to delete");
      if (line != "DELETED") {
        return Fail("consumer: delete answered '" + line + "'");
      }
    }
    pending_delete.clear();
    if (!conn.ReadLine(&line)) return Fail("consumer: connection closed");
    if (line == "TIMED_OUT") continue;
    unsigned long long id = 0;
    size_t bytes = 0;
    if (std::sscanf(line.c_str(), "RESERVED %llu %zu", &id, &bytes) != 2 ||
        bytes != kBodyBytes) {
      return Fail("consumer: reserve answered '" + line + "'");
    }
    if (!conn.ReadBody(bytes, &body)) return Fail("consumer: bad job body");
    Arrived(body, Clock::now());
    pending_delete = "delete " + std::to_string(id) + "\r\n";
  }
}

void Run::Arrived(const std::string& body, Clock::time_point now) {
  uint64_t seq = 0;
  auto [end, ec] = std::from_chars(body.data(), body.data() + kTagDigits, seq);
  if (ec != std::errc() || end != body.data() + kTagDigits || seq >= count_) {
    return Fail("consumer: a job that is not this run's");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (arrived_[seq] != Clock::time_point{}) return;  // reserved twice
  arrived_[seq] = now;
  if (++received_ == count_) {
    done_ = true;
    changed_.notify_all();
  }
}

uint64_t Run::Produce(int port, const fairq::bench::Pace& pace,
                      bool closed_loop) {
  Connection conn;
  if (!conn.Open(port) ||
      !conn.Expect("use " + tube_ + "\r\n", "USING " + tube_)) {
    Fail("producer: cannot connect and use the tube");
    return 0;
  }
  // The replies, in order, on their own thread so that puts go out on
  // schedule however long beanstalkd takes to answer (an fsync each).
  std::string line;
  auto read_reply = [&] {
    if (!conn.ReadLine(&line) || line.rfind("INSERTED ", 0) != 0) {
      Fail("producer: put answered '" + line + "'");
    }
  };
  std::thread replies;
  if (!closed_loop) {
    replies = std::thread([&] {
      for (uint64_t i = 0; i < count_ && !failed_; ++i) read_reply();
    });
  }
  char tag[kTagDigits + 1];
  const std::string filler(kBodyBytes - kTagDigits, 'x');
  uint64_t late = fairq::bench::RunPaced(
      Clock::now(), count_, pace.interval(), [&](uint64_t i) {
        if (failed_) return;
        std::snprintf(tag, sizeof(tag), "%020llu",
                      static_cast<unsigned long long>(i));
        const std::string put = "put 0 0 60 " + std::to_string(kBodyBytes) +
                                "\r\n" + tag + filler + "\r\n";
        // Stamped once the put is built, as fairq-bench stamps its call.
        issued_[i] = Clock::now();
        if (!conn.Send(put)) {
          Fail("producer: send failed");
        } else if (closed_loop) {
          read_reply();
        }
      });
  // After a failure fewer puts went out than the reader waits for.
  if (failed_) conn.Shutdown();
  if (replies.joinable()) replies.join();
  return late;
}

double Run::IssuedPerSecond() const {
  if (count_ < 2) return 0;
  return static_cast<double>(count_ - 1) /
         std::chrono::duration<double>(issued_.back() - issued_.front())
             .count();
}

std::vector<double> Run::LatenciesMs() const {
  std::vector<double> ms;
  ms.reserve(count_);
  std::lock_guard<std::mutex> lock(mu_);
  for (uint64_t i = 0; i < count_; ++i) {
    ms.push_back(
        std::chrono::duration<double, std::milli>(arrived_[i] - issued_[i])
            .count());
  }
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fairq-bench latency's workload against beanstalkd"};
  int port = 11300;
  int consumers = 4;
  bool closed_loop = false;
  fairq::bench::Pace pace;
  app.add_option("--port", port, "beanstalkd's port on 127.0.0.1")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  pace.AddFlags(&app, "puts");
  app.add_option("--consumers", consumers, "connections looping on reserve")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_flag("--closed-loop", closed_loop,
               "wait for each put's reply before the next (how a synchronous "
               "client measures; hides time puts wait behind slow replies)");
  CLI11_PARSE(app, argc, argv);

  Run run(pace.count(), "fairq-bench-" + std::to_string(getpid()));
  std::vector<std::thread> threads;
  for (int c = 0; c < consumers; ++c) {
    threads.emplace_back([&] { run.Consume(port); });
  }
  // As fairq-bench: the consumers wait before the first put.
  run.WaitForConsumers(static_cast<size_t>(consumers),
                       Clock::now() + std::chrono::seconds(5));
  uint64_t late = run.failed() ? 0 : run.Produce(port, pace, closed_loop);
  run.WaitUntilDone(Clock::now() + std::chrono::seconds(10));
  for (std::thread& t : threads) t.join();
  if (run.failed()) {
    std::cerr << "beanstalkd_latency: " << run.error() << "\n";
    return 1;
  }
  fairq::bench::Summary summary = fairq::bench::Summarize(run.LatenciesMs());
  std::printf(
      "{\"peer\": \"beanstalkd\", \"loop\": \"%s\", \"jobs\": %zu, "
      "\"late\": %llu, "
      "\"issued_per_s\": %.1f, \"p50_ms\": %.3f, \"p99_ms\": %.3f, "
      "\"max_ms\": %.3f}\n",
      closed_loop ? "closed" : "open", summary.count,
      static_cast<unsigned long long>(late), run.IssuedPerSecond(), summary.p50,
      summary.p99, summary.max);
  return 0;
}
