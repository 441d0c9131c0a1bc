#include "metrics/metrics_exporter.h"

#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>

#include "tests/integration/http_get.h"

namespace fairq::metrics {
namespace {

// The /metrics page on 127.0.0.1:port, or "" when nothing serves it.
std::string Get(int port) {
  std::string body, error;
  return testing::HttpGet(port, "/metrics", &body, &error, 5) ? body : "";
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
