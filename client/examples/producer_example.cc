// Enqueues ten jobs for tenant "demo" in one batch and prints their ids.
//   producer_example [host:port]     (default 127.0.0.1:7070)
#include <fairq/client/producer.h>

#include <future>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::string address = argc > 1 ? argv[1] : "127.0.0.1:7070";
  fairq::client::ProducerOptions options;
  options.linger = std::chrono::milliseconds(20);
  auto producer = fairq::client::Producer::Create(address, options);
  if (!producer.ok()) {
    std::cerr << producer.status().ToString() << "\n";
    return 2;
  }
  std::vector<std::future<fairq::client::StatusOr<fairq::client::EnqueueResult>>>
      results;
  for (int i = 0; i < 10; ++i) {
    fairq::client::JobSpec job;
    job.tenant = "demo";
    job.payload = "job " + std::to_string(i);
    job.idempotency_key = "demo-" + std::to_string(i);  // safe to re-run
    results.push_back((*producer)->EnqueueAsync(job));
  }
  int failed = 0;
  for (auto& result : results) {
    auto r = result.get();
    if (!r.ok()) {
      std::cerr << r.status().ToString() << "\n";
      ++failed;
      continue;
    }
    std::cout << "job " << r->job_id << (r->duplicate ? " (duplicate)\n" : "\n");
  }
  return failed == 0 ? 0 : 1;
}
