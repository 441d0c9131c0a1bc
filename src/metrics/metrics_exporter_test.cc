#include "metrics/metrics_exporter.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

namespace fairq::metrics {
namespace {

// One HTTP/1.0 GET of /metrics on 127.0.0.1:port; the whole answer, or ""
// when nothing listens.
std::string Get(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // Bounded: a test must not hang on a listener that never answers.
  timeval limit = {5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == 0) {
    const std::string request = "GET /metrics HTTP/1.0\r\n\r\n";
    if (write(fd, request.data(), request.size()) ==
        static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      ssize_t n;
      while ((n = read(fd, buffer, sizeof(buffer))) > 0)
        answer.append(buffer, n);
    }
  }
  close(fd);
  return answer;
}

std::shared_ptr<prometheus::Registry> RegistryWithACounter() {
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter()
      .Name("exporter_test_total")
      .Help("a counter")
      .Register(*registry)
      .Add({})
      .Increment();
  return registry;
}

// The wildcard address is where the destructor's wake-up connects to
// loopback instead of the bound address. (How long the stop takes is
// measured by hand, docs/benchmarks.md, eighteenth round.)
class MetricsExporterTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MetricsExporterTest, ServesUntilDestroyedThenRefuses) {
  auto registry = RegistryWithACounter();
  auto exporter = MetricsExporter::Start(GetParam(), registry);
  ASSERT_TRUE(exporter.ok()) << exporter.status().ToString();
  const int port = (*exporter)->port();
  EXPECT_NE(Get(port).find("exporter_test_total 1"), std::string::npos);
  exporter->reset();
  EXPECT_EQ(Get(port), "");
}

INSTANTIATE_TEST_SUITE_P(Addresses, MetricsExporterTest,
                         ::testing::Values("127.0.0.1:0", "0.0.0.0:0"));

TEST(MetricsExporterStartTest, APortInUseIsUnavailable) {
  auto registry = RegistryWithACounter();
  auto first = MetricsExporter::Start("127.0.0.1:0", registry);
  ASSERT_TRUE(first.ok());
  auto second = MetricsExporter::Start(
      "127.0.0.1:" + std::to_string((*first)->port()), registry);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().ToString().find("metrics_listen"),
            std::string::npos);
}

}  // namespace
}  // namespace fairq::metrics
