#include "server/config/daemon_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/util/scoped_temp_dir.h"

namespace fairq::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

StatusOr<DaemonConfig> Parse(const std::string& text) {
  return ParseConfig(text, "fairqd.yaml");
}

// Parses `text` as fairqd.yaml and returns the error message.
std::string ErrorOf(const std::string& text) {
  StatusOr<DaemonConfig> config = Parse(text);
  EXPECT_FALSE(config.ok()) << text;
  if (config.ok()) return "";
  EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument);
  return config.status().message();
}

std::string At(int line) {
  return "fairqd.yaml:" + std::to_string(line) + ": ";
}

void ExpectDefaults(const DaemonConfig& c) {
  const DaemonConfig d;
  EXPECT_EQ(c.listen, "127.0.0.1:7070");
  EXPECT_EQ(c.metrics_listen, "127.0.0.1:9464");
  EXPECT_EQ(c.data_dir, "./data");
  EXPECT_TRUE(c.sync);
  EXPECT_EQ(c.sync_min_interval_us, 1000u);
  EXPECT_EQ(c.default_lease_seconds, 30u);
  EXPECT_EQ(c.max_payload_bytes, 1048576u);
  EXPECT_EQ(c.max_batch, 1000u);
  EXPECT_TRUE(c.auto_create_tenants);
  EXPECT_TRUE(c.auto_create_pools);
  EXPECT_EQ(c.worker_liveness_seconds, 30u);
  EXPECT_EQ(c.command_queue_capacity, 65536u);
  EXPECT_EQ(c.idempotency_window_seconds, 86400u);
  EXPECT_EQ(c.repeat_window_reports, 262144u);
  EXPECT_EQ(c.max_queued_total, 0u);
  EXPECT_EQ(c.max_tenants, 100'000u);
  EXPECT_EQ(c.max_pools, 1024u);
  EXPECT_EQ(c.scheduling.policy, sched::Policy::kDrr);
  EXPECT_EQ(c.scheduling.quantum, 0.01);
  EXPECT_EQ(c.scheduling.max_deficit, 4.0);
  EXPECT_EQ(c.scheduling.default_cost, 1.0);
  EXPECT_EQ(c.scheduling.estimate_alpha, 0.2);
  EXPECT_EQ(c.scheduling.min_charge, 0.001);
  const TenantDefaults& t = c.tenant_defaults;
  EXPECT_EQ(t.settings.SerializeAsString(),
            d.tenant_defaults.settings.SerializeAsString())
      << t.settings.ShortDebugString();
  EXPECT_EQ(t.settings.weight(), 1.0);
  EXPECT_FALSE(t.settings.has_cap());
  EXPECT_FALSE(t.settings.has_floor());
  EXPECT_EQ(t.max_attempts, 5u);
  EXPECT_EQ(t.initial_backoff_seconds, 1.0);
  EXPECT_EQ(t.max_backoff_seconds, 300.0);
  EXPECT_THAT(c.pools, ElementsAre("default"));
  EXPECT_TRUE(c.orgs.empty());
  EXPECT_TRUE(c.tenants.empty());
  EXPECT_EQ(c.metrics.max_tenant_series, 100u);
  EXPECT_EQ(c.log.level, LogLevel::kInfo);
  EXPECT_EQ(c.log.format, LogFormat::kText);
}

TEST(DaemonConfigTest, ExampleFileLoadsAndStatesTheDefaults) {
  StatusOr<DaemonConfig> config = LoadConfig(FAIRQD_EXAMPLE_CONFIG);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->source, FAIRQD_EXAMPLE_CONFIG);
  ExpectDefaults(*config);
}

TEST(DaemonConfigTest, BuiltInDefaults) { ExpectDefaults(DaemonConfig()); }

TEST(DaemonConfigTest, EmptyFileGivesDefaults) {
  for (const char* text : {"", "# only a comment\n", "---\n"}) {
    StatusOr<DaemonConfig> config = Parse(text);
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    ExpectDefaults(*config);
  }
}

TEST(DaemonConfigTest, AbsentKeysKeepTheirDefaults) {
  StatusOr<DaemonConfig> config = Parse(
      "listen: \"[::]:7000\"\n"
      "scheduling:\n"
      "  quantum: 0.5\n"
      "tenant_defaults:\n"
      "log:\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->listen, "[::]:7000");
  EXPECT_EQ(config->scheduling.quantum, 0.5);
  EXPECT_EQ(config->scheduling.max_deficit, 4.0);
  EXPECT_EQ(config->metrics_listen, "127.0.0.1:9464");
  EXPECT_EQ(config->tenant_defaults.max_attempts, 5u);
  EXPECT_EQ(config->log.level, LogLevel::kInfo);
}

constexpr char kFull[] = R"(listen: unix:/run/fairqd.sock
metrics_listen: ""
data_dir: /var/lib/fairqd
sync: false
sync_min_interval_us: 100000
default_lease_seconds: 43200
max_payload_bytes: 67108864
max_batch: 10
auto_create_tenants: false
auto_create_pools: FALSE
worker_liveness_seconds: 5
command_queue_capacity: 16
idempotency_window_seconds: 60
repeat_window_reports: 4096
max_queued_total: 1000000
max_tenants: 50
max_pools: 8
scheduling: {policy: wc-cap, quantum: 2, max_deficit: 8, default_cost: 3,
             estimate_alpha: 1, min_charge: 0.5}
tenant_defaults:
  weight: 2
  max_attempts: 1000
  initial_backoff_seconds: 0.5
  max_backoff_seconds: 0.5
  cap: "50%"
  cap_mode: hard
  quotas: {max_queued: 10, enqueue_rate: 2.5}
pools: [gpu, cpu]
orgs:
  - {name: acme, weight: 3}
tenants:
  - {name: A, org: acme}
  - name: B
    weight: 0.25
    cap: none
    floor: 2
    cap_mode: work-conserving
    quotas: {enqueue_burst: 7}
metrics: {max_tenant_series: 0}
log: {level: trace, format: json}
)";

TEST(DaemonConfigTest, EveryFieldIsRead) {
  StatusOr<DaemonConfig> config = Parse(kFull);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const DaemonConfig& c = *config;
  EXPECT_EQ(c.listen, "unix:/run/fairqd.sock");
  EXPECT_EQ(c.metrics_listen, "");
  EXPECT_EQ(c.data_dir, "/var/lib/fairqd");
  EXPECT_FALSE(c.sync);
  EXPECT_EQ(c.sync_min_interval_us, 100000u);
  EXPECT_EQ(c.default_lease_seconds, 43200u);
  EXPECT_EQ(c.max_payload_bytes, 64u << 20);
  EXPECT_EQ(c.max_batch, 10u);
  EXPECT_FALSE(c.auto_create_tenants);
  EXPECT_FALSE(c.auto_create_pools);
  EXPECT_EQ(c.worker_liveness_seconds, 5u);
  EXPECT_EQ(c.command_queue_capacity, 16u);
  EXPECT_EQ(c.idempotency_window_seconds, 60u);
  EXPECT_EQ(c.repeat_window_reports, 4096u);
  EXPECT_EQ(c.max_queued_total, 1000000u);
  EXPECT_EQ(c.max_tenants, 50u);
  EXPECT_EQ(c.max_pools, 8u);
  EXPECT_EQ(c.scheduling.policy, sched::Policy::kWorkConservingCap);
  EXPECT_EQ(c.scheduling.quantum, 2);
  EXPECT_EQ(c.scheduling.max_deficit, 8);
  EXPECT_EQ(c.scheduling.default_cost, 3);
  EXPECT_EQ(c.scheduling.estimate_alpha, 1);
  EXPECT_EQ(c.scheduling.min_charge, 0.5);
  EXPECT_EQ(c.tenant_defaults.max_attempts, 1000u);
  EXPECT_EQ(c.tenant_defaults.initial_backoff_seconds, 0.5);
  EXPECT_EQ(c.tenant_defaults.max_backoff_seconds, 0.5);
  EXPECT_THAT(c.pools, ElementsAre("default", "gpu", "cpu"));
  ASSERT_EQ(c.orgs.size(), 1u);
  EXPECT_EQ(c.orgs[0].name, "acme");
  EXPECT_EQ(c.orgs[0].weight, 3);
  EXPECT_EQ(c.metrics.max_tenant_series, 0u);
  EXPECT_EQ(c.log.level, LogLevel::kTrace);
  EXPECT_EQ(c.log.format, LogFormat::kJson);
}

TEST(DaemonConfigTest, TenantsStartFromTenantDefaults) {
  StatusOr<DaemonConfig> config = Parse(kFull);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  ASSERT_EQ(config->tenants.size(), 2u);
  const v1::Tenant& a = config->tenants[0];
  EXPECT_EQ(a.name(), "A");
  EXPECT_EQ(a.org(), "acme");
  EXPECT_EQ(a.weight(), 2);
  EXPECT_DOUBLE_EQ(a.cap().share(), 0.5);
  EXPECT_EQ(a.cap_mode(), v1::CAP_MODE_HARD);
  EXPECT_FALSE(a.has_floor());
  EXPECT_EQ(a.quotas().max_queued(), 10u);
  EXPECT_EQ(a.quotas().enqueue_rate(), 2.5);
  const v1::Tenant& b = config->tenants[1];
  EXPECT_EQ(b.org(), "");
  EXPECT_EQ(b.weight(), 0.25);
  EXPECT_FALSE(b.has_cap());  // "none" drops the default's cap
  EXPECT_EQ(b.floor().slots(), 2u);
  EXPECT_EQ(b.cap_mode(), v1::CAP_MODE_WORK_CONSERVING);
  // Quotas are merged field by field.
  EXPECT_EQ(b.quotas().max_queued(), 10u);
  EXPECT_EQ(b.quotas().enqueue_rate(), 2.5);
  EXPECT_EQ(b.quotas().enqueue_burst(), 7u);
}

TEST(DaemonConfigTest, DefaultPoolKeepsItsPlaceWhenListed) {
  StatusOr<DaemonConfig> config = Parse("pools: [gpu, default]\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_THAT(config->pools, ElementsAre("gpu", "default"));
}

TEST(DaemonConfigTest, DescribeEffectiveListsTheValues) {
  StatusOr<DaemonConfig> config = Parse(kFull);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  std::string text = DescribeEffective(*config);
  EXPECT_THAT(text, StartsWith("config: fairqd.yaml\n"));
  EXPECT_THAT(text, HasSubstr("listen unix:/run/fairqd.sock, metrics off"));
  EXPECT_THAT(text, HasSubstr("sync off"));
  EXPECT_THAT(text, HasSubstr("policy wc-cap, quantum 2"));
  EXPECT_THAT(text, HasSubstr("max_tenants 50, max_pools 8"));
  EXPECT_THAT(text, HasSubstr("pools: default, gpu, cpu"));
  EXPECT_THAT(text, HasSubstr("orgs: acme (weight 3)"));
  EXPECT_THAT(text, HasSubstr("A (org acme, weight 2, cap 50% (hard)"));
  EXPECT_THAT(text, HasSubstr("B (weight 0.25, cap none, floor 2"));
  EXPECT_THAT(text, HasSubstr("log: level trace, format json"));
  EXPECT_LT(std::count(text.begin(), text.end(), '\n'), 12);

  std::string defaults = DescribeEffective(DaemonConfig());
  EXPECT_THAT(defaults, StartsWith("config: built-in defaults\n"));
  EXPECT_THAT(defaults, HasSubstr("tenants (0): none configured"));
  EXPECT_THAT(defaults,
              HasSubstr("metrics 127.0.0.1:9464 (max_tenant_series 100)"));
  // A relative data_dir is shown resolved too: it depends on the cwd.
  EXPECT_THAT(defaults,
              HasSubstr("data_dir ./data (" +
                        (std::filesystem::current_path() / "data").string() +
                        ")"));
  EXPECT_THAT(text, HasSubstr("data_dir /var/lib/fairqd, sync off\n"));
  StatusOr<DaemonConfig> paced = Parse("sync_min_interval_us: 2000\n");
  ASSERT_TRUE(paced.ok()) << paced.status().ToString();
  EXPECT_THAT(DescribeEffective(*paced),
              HasSubstr("sync on (paced: 2000 us)\n"));
}

TEST(DaemonConfigTest, DescribeEffectiveShortensLongTenantLists) {
  std::string text = "tenants:\n";
  for (int i = 0; i < 25; ++i)
    text += "  - {name: t" + std::to_string(i) + "}\n";
  StatusOr<DaemonConfig> config = Parse(text);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  std::string description = DescribeEffective(*config);
  EXPECT_THAT(description, HasSubstr("tenants (25): t0 ("));
  EXPECT_THAT(description, HasSubstr("; and 15 more"));
  EXPECT_THAT(description, Not(HasSubstr("t10 (")));
}

// The API reads weight 0 as 1; a file that writes 0 gets the scheduler's
// rule, with file, line and field.
TEST(DaemonConfigTest, ZeroWeightNamesFileLineAndField) {
  EXPECT_EQ(ErrorOf("tenants:\n"
                    "  - {name: A}\n"
                    "  - {name: B, weight: 0}\n"),
            At(3) +
                "tenants[1].weight: must be between 0.000001 and 1000000, "
                "got 0");
  EXPECT_THAT(ErrorOf("tenants:\n  - name: A\n    weight: 2e6\n"),
              HasSubstr(At(3) + "tenants[0].weight: must be between"));
  EXPECT_THAT(ErrorOf("tenant_defaults:\n  weight: -1\n"),
              HasSubstr(At(2) + "tenant_defaults.weight: must be between"));
}

TEST(DaemonConfigTest, BadTypes) {
  EXPECT_EQ(ErrorOf("sync: yes\n"),
            At(1) + "sync: expected true or false, got \"yes\"");
  EXPECT_EQ(ErrorOf("listen: x:1\nmax_batch: lots\n"),
            At(2) + "max_batch: expected a whole number, got \"lots\"");
  EXPECT_EQ(ErrorOf("scheduling:\n  quantum: fast\n"),
            At(2) + "scheduling.quantum: expected a number, got \"fast\"");
  EXPECT_EQ(ErrorOf("data_dir: [a, b]\n"),
            At(1) + "data_dir: expected a single value, got a list");
  EXPECT_EQ(ErrorOf("scheduling: drr\n"),
            At(1) + "scheduling: expected a mapping, got a scalar");
  EXPECT_EQ(ErrorOf("tenants: {name: A}\n"),
            At(1) + "tenants: expected a list");
  EXPECT_EQ(ErrorOf("tenants:\n  - A\n"),
            At(2) + "tenants[0]: expected a mapping, got a scalar");
  EXPECT_EQ(ErrorOf("pools:\n  - {name: gpu}\n"),
            At(2) + "pools[0]: expected a name");
  EXPECT_THAT(ErrorOf("- 1\n"), HasSubstr("(top level): expected a mapping"));
}

TEST(DaemonConfigTest, OutOfRange) {
  EXPECT_EQ(ErrorOf("sync_min_interval_us: 100001\n"),
            At(1) +
                "sync_min_interval_us: must be between 0 and 100000, "
                "got 100001");
  EXPECT_EQ(ErrorOf("max_batch: 0\n"),
            At(1) + "max_batch: must be between 1 and 10000, got 0");
  EXPECT_EQ(ErrorOf("default_lease_seconds: 43201\n"),
            At(1) +
                "default_lease_seconds: must be between 1 and 43200, "
                "got 43201");
  EXPECT_THAT(ErrorOf("max_payload_bytes: 67108865\n"),
              HasSubstr(At(1) + "max_payload_bytes: must be between 1 and"));
  EXPECT_THAT(ErrorOf("worker_liveness_seconds: 3601\n"),
              HasSubstr(At(1) + "worker_liveness_seconds: must be between"));
  EXPECT_THAT(ErrorOf("command_queue_capacity: 15\n"),
              HasSubstr(At(1) + "command_queue_capacity: must be between 16"));
  EXPECT_THAT(ErrorOf("idempotency_window_seconds: 0\n"),
              HasSubstr(At(1) + "idempotency_window_seconds: must be"));
  EXPECT_EQ(ErrorOf("repeat_window_reports: 1023\n"),
            At(1) +
                "repeat_window_reports: must be between 1024 and 16777216, "
                "got 1023");
  EXPECT_EQ(ErrorOf("max_queued_total: -1\n"),
            At(1) + "max_queued_total: must be >= 0, got -1");
  EXPECT_EQ(ErrorOf("max_pools: 0\n"),
            At(1) + "max_pools: must be between 1 and 4096, got 0");
  EXPECT_EQ(ErrorOf("tenant_defaults:\n  max_attempts: 1001\n"),
            At(2) +
                "tenant_defaults.max_attempts: must be between 1 and "
                "1000, got 1001");
  EXPECT_EQ(ErrorOf("tenant_defaults:\n  initial_backoff_seconds: 5\n"
                    "  max_backoff_seconds: 2\n"),
            At(3) +
                "tenant_defaults.max_backoff_seconds: must lie in "
                "[initial_backoff_seconds (5), 86400], got 2");
  EXPECT_EQ(ErrorOf("log: {level: info}\nmetrics:\n  max_tenant_series: 10001\n"),
            At(3) +
                "metrics.max_tenant_series: must be between 0 and 10000, "
                "got 10001");
  EXPECT_EQ(ErrorOf("sync: true\nmetrics_listen: unix:/run/m.sock\n"),
            At(2) +
                "metrics_listen: expected host:port (the exporter cannot "
                "serve a unix socket), got \"unix:/run/m.sock\"");
  EXPECT_EQ(ErrorOf("tenants:\n  - name: A\n    quotas:\n"
                    "      enqueue_rate: -2\n"),
            At(4) +
                "tenants[0].quotas.enqueue_rate: must be >= 0 jobs/s, "
                "got -2");
}

TEST(DaemonConfigTest, UnknownKeys) {
  EXPECT_THAT(ErrorOf("sync: true\nlisen: x:1\n"),
              HasSubstr(At(2) + "lisen: unknown field (expected one of: "
                                "listen, metrics_listen,"));
  EXPECT_THAT(ErrorOf("scheduling:\n  policy: drr\n  quantom: 1\n"),
              HasSubstr(At(3) + "scheduling.quantom: unknown field"));
  EXPECT_THAT(ErrorOf("tenants:\n  - {name: A, wieght: 2}\n"),
              HasSubstr(At(2) + "tenants[0].wieght: unknown field"));
  EXPECT_THAT(ErrorOf("tenant_defaults:\n  quotas: {max_qeued: 2}\n"),
              HasSubstr(At(2) + "tenant_defaults.quotas.max_qeued: unknown"));
  EXPECT_THAT(ErrorOf("metrics:\n  max_series: 3\n"),
              HasSubstr(At(2) + "metrics.max_series: unknown field"));
  EXPECT_THAT(ErrorOf("log:\n  colour: true\n"),
              HasSubstr(At(2) + "log.colour: unknown field"));
  EXPECT_EQ(ErrorOf("sync: true\nsync: false\n"),
            At(2) + "sync: duplicate field");
}

TEST(DaemonConfigTest, BadSlotLimits) {
  EXPECT_THAT(ErrorOf("tenants:\n  - {name: A, cap: lots}\n"),
              HasSubstr(At(2) + "tenants[0].cap: expected a slot count like 4 "
                                "or a share like \"50%\", got \"lots\""));
  EXPECT_THAT(ErrorOf("tenants:\n  - {name: A, cap: \"150%\"}\n"),
              HasSubstr(At(2) + "tenants[0].cap: a share must lie in"));
  EXPECT_THAT(
      ErrorOf("tenants:\n  - {name: A, cap: 0}\n"),
      HasSubstr(At(2) + "tenants[0].cap: a slot count must be at least"));
  EXPECT_THAT(ErrorOf("tenants:\n  - {name: A, floor: 1.5}\n"),
              HasSubstr(At(2) + "tenants[0].floor: a slot count must be a "
                                "whole number"));
  EXPECT_THAT(ErrorOf("tenant_defaults:\n  cap_mode: soft\n"),
              HasSubstr(At(2) + "tenant_defaults.cap_mode: unknown mode"));
}

TEST(DaemonConfigTest, FloorAboveCap) {
  EXPECT_EQ(ErrorOf("tenants:\n"
                    "  - name: A\n"
                    "    cap: 2\n"
                    "    floor: 3\n"),
            At(4) + "tenants[0].floor: 3 exceeds the cap 2");
  EXPECT_EQ(ErrorOf("tenant_defaults:\n"
                    "  cap: \"25%\"\n"
                    "  floor: \"50%\"\n"),
            At(3) + "tenant_defaults.floor: 50% exceeds the cap 25%");
  // The cap comes from the defaults, the floor from the tenant.
  EXPECT_EQ(ErrorOf("tenant_defaults: {cap: 1}\n"
                    "tenants:\n"
                    "  - {name: A, floor: 2}\n"),
            At(3) + "tenants[0].floor: 2 exceeds the cap 1");
}

TEST(DaemonConfigTest, BadNames) {
  EXPECT_EQ(ErrorOf("tenants:\n  - {name: \"a b\"}\n"),
            At(2) +
                "tenants[0].name: character ' ' at position 2 is not "
                "allowed (use A-Z, a-z, 0-9, '.', '_', '-')");
  EXPECT_EQ(ErrorOf("tenants:\n  - {name: " + std::string(129, 'x') + "}\n"),
            At(2) + "tenants[0].name: must be at most 128 characters, got 129");
  EXPECT_EQ(ErrorOf("tenants:\n  - {name: \"\"}\n"),
            At(2) + "tenants[0].name: must not be empty");
  EXPECT_EQ(ErrorOf("tenants:\n  - {weight: 2}\n"),
            At(2) + "tenants[0].name: missing required field");
  EXPECT_THAT(ErrorOf("tenants:\n  - {name: A, org: \"x/y\"}\n"),
              HasSubstr(At(2) + "tenants[0].org: character '/'"));
  EXPECT_THAT(ErrorOf("pools: [default, \"g p u\"]\n"),
              HasSubstr(At(1) + "pools[1]: character ' '"));
  EXPECT_THAT(ErrorOf("orgs:\n  - {name: \"a:b\"}\n"),
              HasSubstr(At(2) + "orgs[0].name: character ':'"));
}

TEST(DaemonConfigTest, DuplicateNames) {
  EXPECT_EQ(
      ErrorOf("tenants:\n"
              "  - {name: A}\n"
              "  - {name: B}\n"
              "  - {name: A, weight: 2}\n"),
      At(4) + "tenants[2].name: duplicate tenant \"A\" (first at line 2)");
  EXPECT_EQ(ErrorOf("pools:\n  - gpu\n  - gpu\n"),
            At(3) + "pools[1]: duplicate pool \"gpu\" (first at line 2)");
  EXPECT_THAT(ErrorOf("orgs:\n  - {name: X}\n  - {name: X, weight: 2}\n"),
              HasSubstr(At(3) + "orgs[1].name: duplicate organisation \"X\""));
}

TEST(DaemonConfigTest, SchedulingRules) {
  EXPECT_EQ(ErrorOf("scheduling:\n  policy: lottery\n"),
            At(2) +
                "scheduling.policy: unknown policy \"lottery\" (expected "
                "fifo, rr, hard-cap, wc-cap or drr)");
  EXPECT_THAT(ErrorOf("scheduling:\n  quantum: 8\n"),
              HasSubstr(At(2) + "scheduling.max_deficit: must be at least"));
  EXPECT_THAT(
      ErrorOf("scheduling:\n  quantum: 1\n  estimate_alpha: 0\n"),
      HasSubstr(At(3) + "scheduling.estimate_alpha: must lie in (0, 1]"));
  EXPECT_THAT(ErrorOf("scheduling:\n  min_charge: 0.5\n"),
              HasSubstr(At(2) + "scheduling.min_charge: must lie in [0, "
                                "quantum (0.01)], got 0.5"));
  EXPECT_THAT(ErrorOf("orgs:\n  - {name: X, weight: -1}\n"),
              HasSubstr(At(2) + "orgs[0].weight: must be between"));
}

TEST(DaemonConfigTest, BadLogSettings) {
  EXPECT_EQ(ErrorOf("log:\n  level: verbose\n"),
            At(2) +
                "log.level: unknown level \"verbose\" (expected trace, "
                "debug, info, warn or error)");
  EXPECT_EQ(ErrorOf("log:\n  format: xml\n"),
            At(2) +
                "log.format: unknown format \"xml\" (expected text or "
                "json)");
}

TEST(DaemonConfigTest, BadAddresses) {
  for (const char* bad : {"localhost", "7070", ":7070", "host:", "host:70000",
                          "host:12ab", "unix:"}) {
    EXPECT_EQ(ErrorOf(std::string("listen: \"") + bad + "\"\n"),
              At(1) +
                  "listen: expected host:port (e.g. 127.0.0.1:7070) or "
                  "unix:/path, got \"" +
                  bad + "\"");
  }
  EXPECT_THAT(ErrorOf("listen: \"\"\n"), HasSubstr(At(1) + "listen: expected"));
  EXPECT_THAT(ErrorOf("metrics_listen: nowhere\n"),
              HasSubstr(At(1) + "metrics_listen: expected"));
  EXPECT_THAT(ErrorOf("data_dir: \"\"\n"),
              HasSubstr(At(1) + "data_dir: must not be empty"));
}

TEST(DaemonConfigTest, YamlSyntaxErrorBecomesStatus) {
  std::string message = ErrorOf("sync: true\ntenants: [{name: A}\n");
  EXPECT_THAT(message, StartsWith("fairqd.yaml:"));
  EXPECT_THAT(message, HasSubstr("invalid YAML"));
}

// Each test that touches files gets its own directory.
class LoadConfigTest : public ::testing::Test {
 protected:
  testing::ScopedTempDir dir_{"fairqd_config"};
};

TEST_F(LoadConfigTest, ErrorsNameThePath) {
  std::string path = dir_.Path("fairqd.yaml");
  std::ofstream(path) << "# header\nmax_batch: 0\n";
  StatusOr<DaemonConfig> config = LoadConfig(path);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), StartsWith(path + ":2: max_batch: "));
}

TEST_F(LoadConfigTest, MissingFileOrDirectoryIsNotFound) {
  for (const std::string& path : {dir_.Path("absent.yaml"), dir_.path()}) {
    StatusOr<DaemonConfig> config = LoadConfig(path);
    ASSERT_FALSE(config.ok()) << path;
    EXPECT_EQ(config.status().code(), StatusCode::kNotFound);
    EXPECT_THAT(config.status().message(), StartsWith(path + ": "));
  }
}

}  // namespace
}  // namespace fairq::config
