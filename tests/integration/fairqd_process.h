// FairqdProcess: a real fairqd child process for integration tests: its own
// temp data directory and config file, 127.0.0.1 on a port the kernel picks,
// and gRPC stubs to talk to it. It can be stopped gently (SIGTERM), killed
// (SIGKILL) and started again on the same data.
//
// Not thread-safe: one test thread drives it; the stubs it hands out are
// thread-safe as gRPC stubs are.
#ifndef FAIRQ_TESTS_INTEGRATION_FAIRQD_PROCESS_H_
#define FAIRQ_TESTS_INTEGRATION_FAIRQD_PROCESS_H_

#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <memory>
#include <string>

#include "fairq/v1/fairq.grpc.pb.h"
#include "tests/util/scoped_temp_dir.h"

namespace fairq::testing {

class FairqdProcess {
 public:
  // `config_yaml` is appended to a base config (listen on `listen`, data
  // in a fresh temp dir, metrics on `metrics_listen`, "" for off); later
  // keys may not repeat base keys: listen, data_dir, metrics_listen.
  explicit FairqdProcess(std::string config_yaml = "",
                         std::string listen = "127.0.0.1:0",
                         std::string metrics_listen = "");
  ~FairqdProcess();  // SIGKILL if still running; removes the temp dir

  // Starts fairqd and waits (at most 30 s) for it to report its port.
  // Returns false, with the reason in error(), if it exits or times out.
  // fairqd is killed when the thread that started it ends (a test that
  // crashes, or that CTest kills at its timeout, leaves no daemon behind),
  // so call this from the test's own thread.
  bool Start();
  // SIGTERM and wait: the exit code, or -1.
  int Terminate();
  // SIGKILL and wait: a crash.
  void Kill();
  // Replaces the appended config with `config_yaml` and sends SIGHUP.
  bool Reload(const std::string& config_yaml);
  // Replaces the appended config for the next Start (after Terminate or
  // Kill): settings a reload does not change.
  void SetConfig(const std::string& config_yaml) { WriteConfig(config_yaml); }
  bool running() const { return pid_ > 0; }

  int port() const { return port_; }
  // The metrics port fairqd reported; 0 when its exporter is off.
  int metrics_port() const { return metrics_port_; }
  const std::string& data_dir() const { return data_dir_; }
  const std::string& error() const { return error_; }
  // What fairqd wrote to stderr so far: its log (stdout carries only the
  // port line).
  std::string Log() const;

  std::unique_ptr<v1::Producer::Stub> Producer();
  std::unique_ptr<v1::Worker::Stub> Worker();
  std::unique_ptr<v1::Admin::Stub> Admin();
  std::shared_ptr<grpc::Channel> Channel();

 private:
  int WaitForExit();
  void WriteConfig(const std::string& config_yaml);

  std::string listen_;
  std::string metrics_listen_;
  ScopedTempDir dir_{"fairqd_test"};  // config, log, data; outlives the child
  std::string data_dir_;
  std::string config_path_;
  std::string log_path_;
  pid_t pid_ = -1;
  int port_ = 0;
  int metrics_port_ = 0;
  std::string error_;
};

// A deadline `seconds` from now, for every RPC a test makes: no test waits
// forever on a broken daemon.
std::chrono::system_clock::time_point Deadline(double seconds = 10);

}  // namespace fairq::testing

#endif  // FAIRQ_TESTS_INTEGRATION_FAIRQD_PROCESS_H_
