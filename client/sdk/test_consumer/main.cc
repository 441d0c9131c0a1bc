// Links and runs against the installed SDK: makes a producer and a worker,
// and fills a generated fairq.v1 message through the installed headers.
// Talks to no broker: an enqueue to a closed port must fail cleanly.
#include <iostream>

#include <fairq/client/producer.h>
#include <fairq/client/worker.h>
#include <fairq/v1/fairq.pb.h>

int main() {
  fairq::client::ProducerOptions options;
  options.retry.max_attempts = 1;
  options.rpc_timeout = std::chrono::seconds(5);
  auto producer = fairq::client::Producer::Create("127.0.0.1:1", options);
  auto worker = fairq::client::Worker::Create("127.0.0.1:1");
  if (!producer.ok() || !worker.ok()) {
    std::cerr << "create failed\n";
    return 1;
  }
  fairq::v1::JobSpec spec;
  spec.set_tenant("consumer");
  auto result = (*producer)->Enqueue(spec);
  if (result.ok()) {
    std::cerr << "enqueue to a closed port succeeded?\n";
    return 1;
  }
  std::cout << "enqueue failed as expected: " << result.status().ToString()
            << "\n";
  return 0;
}
