// Runs jobs from the default pool on 4 slots until SIGINT or SIGTERM.
//   worker_example [host:port]       (default 127.0.0.1:7070)
#include <fairq/client/worker.h>

#include <csignal>
#include <iostream>

int main(int argc, char** argv) {
  sigset_t signals;  // taken by sigwait below, so block them everywhere
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  fairq::client::WorkerOptions options;
  options.slots = 4;
  options.on_error = [](const fairq::client::Status& e) {
    std::cerr << e.ToString() << "\n";
  };
  auto worker =
      fairq::client::Worker::Create(argc > 1 ? argv[1] : "127.0.0.1:7070", options);
  if (!worker.ok()) {
    std::cerr << worker.status().ToString() << "\n";
    return 2;
  }
  auto started = (*worker)->Start([](fairq::client::JobContext& job) {
    std::cout << "job " << job.id() << " of " << job.tenant() << ": "
              << job.payload() << std::endl;
    if (job.payload().empty()) return fairq::client::Outcome::Fail("empty payload");
    return fairq::client::Outcome::Success();
  });
  if (!started.ok()) {
    std::cerr << started.ToString() << "\n";
    return 2;
  }
  int signal = 0;
  sigwait(&signals, &signal);
  (*worker)->Stop();  // lets running jobs finish
  return 0;
}
