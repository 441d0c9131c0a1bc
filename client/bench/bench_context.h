// BenchContext: what every fairq-bench scenario shares.
//
//  - The connection flags: --server (else $FAIRQ_SERVER, else
//    127.0.0.1:7070), --json, --run-id, --rpc-timeout, --channels, --keep.
//  - A small pool of gRPC channels, each its own TCP connection, so that
//    load threads do not all queue behind one HTTP/2 connection.
//  - Run-scoped names: the run's tenants are "<run id>-<name>" and its pool
//    is the run id, so an earlier or concurrent run (or a recovery backlog
//    left in the daemon) never shares queues or leases with this one.
//  - The deadline every RPC carries, and clean-up of the run's backlog.
//
// Thread-safe once parsing is done: load threads take stubs, names and
// deadlines concurrently. The channels open on first use.
#ifndef FAIRQ_CLIENT_BENCH_BENCH_CONTEXT_H_
#define FAIRQ_CLIENT_BENCH_BENCH_CONTEXT_H_

#include <grpcpp/grpcpp.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "bench/host_cpu.h"
#include "fairq/v1/fairq.grpc.pb.h"

namespace fairq::bench {

class Report;

class BenchContext {
 public:
  // Adds the connection flags to `sub`.
  void AddFlags(CLI::App* sub);
  // Opens every channel, waiting at most --rpc-timeout: a clear error up
  // front when fairqd is not there, and no connection set-up in the first
  // measured call.
  Status Connect() const;
  // Adds the server, run id and --note to `report`'s facts.
  void Describe(Report& report) const;
  // Adds the machine's busy and stolen CPU shares since the process began
  // (host_busy_pct, host_steal_pct; where /proc/stat can be read) to
  // `report`'s facts, then prints it as --json asks.
  void Print(Report& report, std::ostream& out) const;

  const std::string& server() const { return server_; }
  bool json() const { return json_; }
  const std::string& run_id() const { return run_id_; }
  // True when --run-id was given (not generated).
  bool run_id_given() const { return run_id_option_->count() > 0; }
  // The run's own worker pool.
  const std::string& pool() const { return run_id_; }
  // "<run id>-<name>".
  std::string Tenant(std::string_view name) const;
  double rpc_timeout() const { return rpc_timeout_seconds_; }

  // Stubs on channel `i` modulo --channels.
  std::unique_ptr<v1::Producer::Stub> Producer(size_t i) const;
  std::unique_ptr<v1::Worker::Stub> Worker(size_t i) const;
  std::unique_ptr<v1::Admin::Stub> Admin() const;
  // Channel `i` modulo --channels, for the SDK's clients.
  std::shared_ptr<grpc::Channel> Channel(size_t i) const;

  // Sets the --rpc-timeout deadline on `context`, plus `extra_seconds` (a
  // long poll's wait, a large batch's expected time).
  void SetDeadline(grpc::ClientContext& context,
                   double extra_seconds = 0) const;

  // Unless --keep: cancels the run's queued jobs of `tenants` (names as
  // returned by Tenant()) so the next run starts from an empty broker.
  // Failures are reported to `err` and otherwise ignored: the figures are
  // already printed.
  void Cleanup(const std::vector<std::string>& tenants,
               std::ostream& err) const;

 private:
  std::string server_;
  bool json_ = false;
  std::string run_id_;
  CLI::Option* run_id_option_ = nullptr;
  std::string note_;
  double rpc_timeout_seconds_ = 10;
  size_t channel_count_ = 4;
  bool keep_ = false;
  // Read when the flags are added: at the start of the process, which runs
  // one scenario.
  std::optional<CpuTimes> host_at_start_;

  mutable std::once_flag opened_;
  mutable std::vector<std::shared_ptr<grpc::Channel>> channels_;
};

// A channel to `server` with its own connection (not shared with other
// channels of this process) and a short reconnect backoff.
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& server);

// The failed call's status as a fairq Status naming the RPC, e.g.
// "Lease: DEADLINE_EXCEEDED: Deadline Exceeded".
Status FromGrpc(const grpc::Status& status, std::string_view rpc);

// Seconds elapsed since `start` on the steady clock.
double SecondsSince(std::chrono::steady_clock::time_point start);
// Milliseconds elapsed since `start` on the steady clock.
double MillisSince(std::chrono::steady_clock::time_point start);
// `seconds` from now, on the steady clock.
std::chrono::steady_clock::time_point SecondsFromNow(double seconds);

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_BENCH_CONTEXT_H_
