#include "tests/integration/fairqd_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

namespace fairq::testing {
namespace {

constexpr char kPortLine[] = "fairqd listening on port ";
// Printed before kPortLine when the exporter is on.
constexpr char kMetricsPortLine[] = "fairqd metrics on port ";

}  // namespace

std::chrono::system_clock::time_point Deadline(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

FairqdProcess::FairqdProcess(std::string config_yaml, std::string listen,
                             std::string metrics_listen)
    : listen_(std::move(listen)),
      metrics_listen_(std::move(metrics_listen)),
      data_dir_(dir_.Path("data")),
      config_path_(dir_.Path("fairqd.yaml")),
      log_path_(dir_.Path("fairqd.log")) {
  WriteConfig(config_yaml);
}

void FairqdProcess::WriteConfig(const std::string& config_yaml) {
  std::ofstream config(config_path_, std::ios::trunc);
  config << "listen: " << listen_ << "\n"
         << "metrics_listen: \"" << metrics_listen_ << "\"\n"
         << "data_dir: " << data_dir_ << "\n"
         << config_yaml << "\n";
}

bool FairqdProcess::Reload(const std::string& config_yaml) {
  WriteConfig(config_yaml);
  return running() && kill(pid_, SIGHUP) == 0;
}

FairqdProcess::~FairqdProcess() {
  if (running()) Kill();
}

bool FairqdProcess::Start() {
  int out[2];
  if (pipe(out) != 0) {
    error_ = "pipe failed";
    return false;
  }
  pid_t parent = getpid();
  pid_ = fork();
  if (pid_ == 0) {
    // Dies with its parent; the check covers a parent gone before prctl.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    // Child: stdout to the pipe (for the port line), stderr to the log.
    int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(out[1], STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    close(out[0]);
    execl(FAIRQD_PATH, FAIRQD_PATH, "--config", config_path_.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string seen;
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (port_ == 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        give_up - std::chrono::steady_clock::now());
    pollfd fd{out[0], POLLIN, 0};
    if (left.count() <= 0 || poll(&fd, 1, static_cast<int>(left.count())) <= 0) {
      error_ = "fairqd did not report its port within 30 s";
      break;
    }
    char buffer[256];
    ssize_t n = read(out[0], buffer, sizeof(buffer));
    if (n <= 0) {
      error_ = "fairqd exited before serving: " + Log();
      break;
    }
    seen.append(buffer, static_cast<size_t>(n));
    size_t at = seen.find(kPortLine);
    size_t end = at == std::string::npos ? at : seen.find('\n', at);
    if (end != std::string::npos) {
      port_ = std::stoi(seen.substr(at + sizeof(kPortLine) - 1));
      size_t metrics_at = seen.find(kMetricsPortLine);
      if (metrics_at != std::string::npos && metrics_at < at) {
        metrics_port_ =
            std::stoi(seen.substr(metrics_at + sizeof(kMetricsPortLine) - 1));
      }
    }
  }
  close(out[0]);
  if (port_ == 0) {
    Kill();
    return false;
  }
  return true;
}

int FairqdProcess::WaitForExit() {
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  port_ = 0;
  metrics_port_ = 0;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int FairqdProcess::Terminate() {
  if (!running()) return -1;
  kill(pid_, SIGTERM);
  return WaitForExit();
}

void FairqdProcess::Kill() {
  if (!running()) return;
  kill(pid_, SIGKILL);
  WaitForExit();
}

std::string FairqdProcess::Log() const {
  std::ifstream log(log_path_);
  std::stringstream text;
  text << log.rdbuf();
  return text.str();
}

std::shared_ptr<grpc::Channel> FairqdProcess::Channel() {
  return grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                             grpc::InsecureChannelCredentials());
}

std::unique_ptr<v1::Producer::Stub> FairqdProcess::Producer() {
  return v1::Producer::NewStub(Channel());
}
std::unique_ptr<v1::Worker::Stub> FairqdProcess::Worker() {
  return v1::Worker::NewStub(Channel());
}
std::unique_ptr<v1::Admin::Stub> FairqdProcess::Admin() {
  return v1::Admin::NewStub(Channel());
}

}  // namespace fairq::testing
