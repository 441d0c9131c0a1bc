// fairqd: the fair-share job broker daemon.
//
//   fairqd --config config/fairqd.yaml [--listen ADDR] [--data-dir DIR]
//          [--metrics-listen ADDR]
//
// SIGTERM or SIGINT drains and exits; SIGHUP re-reads the config file and
// applies its organisations, tenant settings, and log level and format.
#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "server/allocator/allocator.h"
#include "server/config/daemon_config.h"
#include "server/daemon.h"
#include "server/logging/library_logs.h"
#include "server/logging/logging.h"

namespace {

// Optional, so that an explicit empty value (--metrics-listen "" turns the
// exporter off) still overrides the file.
struct Flags {
  std::string config = "config/fairqd.yaml";
  std::optional<std::string> listen, data_dir, metrics_listen;
};

fairq::StatusOr<fairq::config::DaemonConfig> LoadWithFlags(const Flags& flags) {
  auto config = fairq::config::LoadConfig(flags.config);
  if (!config.ok()) return config;
  if (flags.listen) config->listen = *flags.listen;
  if (flags.data_dir) config->data_dir = *flags.data_dir;
  if (flags.metrics_listen) config->metrics_listen = *flags.metrics_listen;
  return config;
}

// Signals are blocked in every thread and taken here with sigwait: the main
// thread sleeps until one arrives, with no polling.
int WaitForSignals(const Flags& flags, fairq::server::Daemon& daemon,
                   const sigset_t& signals) {
  while (true) {
    int signal = 0;
    sigwait(&signals, &signal);
    if (signal != SIGHUP) {
      spdlog::info("signal {}: draining", signal);
      daemon.Shutdown();
      return 0;
    }
    auto config = LoadWithFlags(flags);
    if (!config.ok()) {
      spdlog::error("reload refused: {}", config.status().message());
      continue;
    }
    fairq::logging::ApplyLogConfig(config->log);
    daemon.ReloadSettings(*config);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Logs go to stderr. stdout carries only the "listening on port" line,
  // which a supervisor or test harness may read and then close its end of;
  // logging to stdout after that would kill fairqd with SIGPIPE. A closed
  // stdout or stderr must not be fatal either way.
  fairq::logging::InstallStderrLogger();
  fairq::logging::RouteLibraryLogs();
  std::signal(SIGPIPE, SIG_IGN);
  Flags flags;
  CLI::App app("fairqd: fair-share job broker");
  app.add_option("--config", flags.config, "YAML config file")
      ->capture_default_str();
  app.add_option("--listen", flags.listen, "gRPC address, overrides the file");
  app.add_option("--data-dir", flags.data_dir, "data directory, overrides");
  app.add_option("--metrics-listen", flags.metrics_listen,
                 "metrics address, overrides the file");
  CLI11_PARSE(app, argc, argv);

  auto config = LoadWithFlags(flags);
  if (!config.ok()) {
    std::cerr << "fairqd: " << config.status().message() << "\n";
    return 2;
  }
  fairq::logging::ApplyLogConfig(config->log);
  spdlog::info("effective configuration:\n{}",
               fairq::config::DescribeEffective(*config));
  spdlog::info("allocator: {}", fairq::server::DescribeAllocator());

  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // inherited by all threads

  auto daemon = fairq::server::Daemon::Start(*config);
  if (!daemon.ok()) {
    spdlog::error("fairqd: {}", daemon.status().ToString());
    return 1;
  }
  // Tests and scripts read the bound ports from these lines; the metrics
  // line (when the exporter is on) comes first.
  if (int port = (*daemon)->metrics_port(); port != 0) {
    std::cout << "fairqd metrics on port " << port << std::endl;
    spdlog::info("serving metrics on {} (port {})", config->metrics_listen,
                 port);
  }
  std::cout << "fairqd listening on port " << (*daemon)->port() << std::endl;
  spdlog::info("serving gRPC on {} (port {})", config->listen,
               (*daemon)->port());
  return WaitForSignals(flags, **daemon, signals);
}
