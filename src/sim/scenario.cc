#include "sim/scenario.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include "sched/slot_limit.h"
#include "sim/scheduler_setup.h"
#include "yaml/yaml_fields.h"

namespace fairq::sim {

using yaml::ErrorAt;
using yaml::FieldOf;
using yaml::FieldReader;
using yaml::FormatNumber;
using yaml::LineOf;
using yaml::ProblemOf;

namespace {

// A typo such as `rate: 2e9` must fail fast instead of filling memory.
constexpr uint64_t kMaxJobs = 20'000'000;
constexpr int64_t kMaxWorkers = 1'000'000;

// Reads the YAML tree into a Scenario; the first problem ends the reading.
class Loader {
 public:
  explicit Loader(std::string source) { scenario_.source = std::move(source); }

  StatusOr<Scenario> Load(const YAML::Node& root);

 private:
  const std::string& source() const { return scenario_.source; }

  using ReadItem = Status (Loader::*)(const YAML::Node& item,
                                      const std::string& path);
  // Calls `read(item, path)` for each entry of the list under `key`.
  Status ForEachItem(FieldReader& parent, std::string_view key, bool required,
                     ReadItem read);

  Status ReadGlobals(FieldReader& top);
  Status ReadOptions(FieldReader& top);
  Status ReadPools(FieldReader& top);
  Status ReadOrg(const YAML::Node& node, const std::string& path);
  Status ReadTenant(const YAML::Node& node, const std::string& path);
  void ReadSlotLimit(FieldReader& r, std::string_view key,
                     sched::SlotLimit* limit);
  Status ReadArrival(const YAML::Node& node, const std::string& path);
  void ReadArrivalCosts(FieldReader& r, ArrivalSpec* arrival);
  void ReadArrivalTiming(FieldReader& r, ArrivalSpec* arrival);
  Status ReadPolicy(const YAML::Node& node, const std::string& path);
  std::optional<size_t> ResolvePool(FieldReader& r, std::string_view key);
  std::optional<size_t> FindTenant(std::string_view name) const;

  Scenario scenario_;
  uint64_t total_jobs_ = 0;
};

StatusOr<Scenario> Loader::Load(const YAML::Node& root) {
  FieldReader top(
      source(), root, "",
      {"name", "seed", "workers", "pools", "quantum", "max_deficit",
       "default_cost", "duration", "orgs", "tenants", "arrivals", "policies"});
  FAIRQ_RETURN_IF_ERROR(ReadGlobals(top));
  FAIRQ_RETURN_IF_ERROR(ReadOptions(top));
  FAIRQ_RETURN_IF_ERROR(ReadPools(top));
  FAIRQ_RETURN_IF_ERROR(ForEachItem(top, "orgs", false, &Loader::ReadOrg));
  FAIRQ_RETURN_IF_ERROR(ForEachItem(top, "tenants", true, &Loader::ReadTenant));
  FAIRQ_RETURN_IF_ERROR(
      ForEachItem(top, "arrivals", true, &Loader::ReadArrival));
  FAIRQ_RETURN_IF_ERROR(
      ForEachItem(top, "policies", false, &Loader::ReadPolicy));
  if (scenario_.policies.empty()) scenario_.policies = AllPolicies();
  // Settings that pass the checks above may still be refused by the
  // scheduler (an empty pool name, say); a dry run lets the scheduler's own
  // rules decide, reported against the file's lines.
  StatusOr<SimScheduler> dry_run =
      BuildScheduler(scenario_, sched::Policy::kDrr);
  if (!dry_run.ok()) return dry_run.status();
  return std::move(scenario_);
}

Status Loader::ForEachItem(FieldReader& parent, std::string_view key,
                           bool required, ReadItem read) {
  using Rule = FieldReader::ListRule;
  return parent.ForEachItem(
      key, required ? Rule::kRequiredNonEmpty : Rule::kOptionalNonEmpty,
      [&](const YAML::Node& item, const std::string& path) {
        return (this->*read)(item, path);
      });
}

Status Loader::ReadGlobals(FieldReader& top) {
  scenario_.name = top.String("name");
  top.Require(!scenario_.name.empty(), "name", "must not be empty");
  std::optional<int64_t> seed = top.OptInteger("seed");
  top.Require(seed.value_or(0) >= 0, "seed", "must be >= 0");
  scenario_.seed = static_cast<uint64_t>(seed.value_or(0));
  scenario_.duration = top.OptNumber("duration");
  if (scenario_.duration) {
    top.Require(*scenario_.duration > 0, "duration",
                "must be > 0, got " + FormatNumber(*scenario_.duration));
  }
  return top.status();
}

Status Loader::ReadOptions(FieldReader& top) {
  sched::SchedulerOptions& options = scenario_.options;
  options.quantum = top.OptNumber("quantum").value_or(options.quantum);
  options.max_deficit =
      top.OptNumber("max_deficit").value_or(options.max_deficit);
  options.default_cost =
      top.OptNumber("default_cost").value_or(options.default_cost);
  if (!top.ok()) return top.status();
  // The scheduler's own rules, reported against the field they name.
  Status valid = sched::Validate(options);
  std::string_view field = FieldOf(valid);
  top.Adopt(field.empty() ? "quantum" : field, valid);
  return top.status();
}

Status Loader::ReadPools(FieldReader& top) {
  if (top.Has("workers") == top.Has("pools")) {
    top.Fail(top.Has("pools") ? "pools" : "workers",
             "give either `workers: N` (one pool named \"default\") or "
             "`pools: {name: N, ...}`, exactly one of them");
    return top.status();
  }
  if (top.Has("workers")) {
    int64_t workers = top.OptInteger("workers").value_or(0);
    top.Require(workers >= 1 && workers <= kMaxWorkers, "workers",
                "must be between 1 and " + std::to_string(kMaxWorkers) +
                    ", got " + std::to_string(workers));
    scenario_.pools.push_back(
        {"default", static_cast<uint32_t>(workers), top.Line("workers")});
    return top.status();
  }
  FieldReader pools(source(), top.Get("pools"), "pools");
  for (const std::string& name : pools.Keys()) {
    int64_t workers = pools.OptInteger(name).value_or(0);
    pools.Require(workers >= 1 && workers <= kMaxWorkers, name,
                  "workers must be between 1 and " +
                      std::to_string(kMaxWorkers) + ", got " +
                      std::to_string(workers));
    scenario_.pools.push_back(
        {name, static_cast<uint32_t>(workers), pools.Line(name)});
  }
  if (pools.ok() && scenario_.pools.empty()) {
    top.Fail("pools", "must name at least one pool");
  }
  return pools.ok() ? top.status() : pools.status();
}

Status Loader::ReadOrg(const YAML::Node& node, const std::string& path) {
  FieldReader r(source(), node, path, {"name", "weight"});
  OrgSpec org{{r.String("name"), r.OptNumber("weight").value_or(1.0)},
              r.line()};
  if (!r.ok()) return r.status();
  Status valid = sched::Validate(org.config);
  r.Adopt(FieldOf(valid), valid);
  for (const OrgSpec& other : scenario_.orgs) {
    r.Require(other.config.name != org.config.name, "name",
              "duplicate organisation \"" + org.config.name +
                  "\" (first at line " + std::to_string(other.line) + ")");
  }
  scenario_.orgs.push_back(std::move(org));
  return r.status();
}

Status Loader::ReadTenant(const YAML::Node& node, const std::string& path) {
  FieldReader r(source(), node, path,
                {"name", "org", "weight", "pool", "cap", "cap_mode", "floor"});
  TenantSpec tenant;
  tenant.line = r.line();
  sched::TenantConfig& config = tenant.config;
  config.name = r.String("name");
  config.org = r.OptString("org").value_or("");
  config.weight = r.OptNumber("weight").value_or(1.0);
  ReadSlotLimit(r, "cap", &config.cap);
  ReadSlotLimit(r, "floor", &config.floor);
  if (std::optional<std::string> mode = r.OptString("cap_mode")) {
    StatusOr<sched::CapMode> parsed = sched::ParseCapMode(*mode);
    if (parsed.ok()) config.cap_mode = *parsed;
    r.Adopt("cap_mode", parsed.status());
  }
  if (r.Has("pool")) tenant.pool = ResolvePool(r, "pool");
  if (!r.ok()) return r.status();
  // The scheduler's rules name the offending field first ("weight: ...").
  Status valid = sched::Validate(config);
  std::string_view field = FieldOf(valid);
  bool known = field == "weight" || field == "cap" || field == "floor";
  r.Adopt(known ? field : "name", valid);
  std::optional<size_t> twin = FindTenant(config.name);
  r.Require(!twin, "name",
            "duplicate tenant \"" + config.name + "\" (first at line " +
                std::to_string(twin ? scenario_.tenants[*twin].line : 0) + ")");
  scenario_.tenants.push_back(std::move(tenant));
  return r.status();
}

void Loader::ReadSlotLimit(FieldReader& r, std::string_view key,
                           sched::SlotLimit* limit) {
  std::optional<std::string> text = r.OptString(key);
  if (!text) return;
  StatusOr<sched::SlotLimit> parsed =
      sched::SlotLimit::Parse(*text, r.FieldPath(key));
  if (parsed.ok()) *limit = *parsed;
  r.Adopt(key, parsed.status());
}

Status Loader::ReadArrival(const YAML::Node& node, const std::string& path) {
  FieldReader r(source(), node, path,
                {"tenant", "pool", "priority", "cost", "cost_jitter",
                 "declared_cost", "at", "count", "rate", "from", "until"});
  ArrivalSpec arrival;
  arrival.line = r.line();
  std::string tenant = r.String("tenant");
  std::optional<size_t> index = FindTenant(tenant);
  r.Require(index.has_value(), "tenant",
            "unknown tenant \"" + tenant + "\" (not listed under tenants)");
  arrival.tenant = index.value_or(0);
  if (r.Has("pool")) {
    arrival.pool = ResolvePool(r, "pool").value_or(0);
  } else if (r.ok() && scenario_.tenants[arrival.tenant].pool) {
    arrival.pool = *scenario_.tenants[arrival.tenant].pool;
  } else if (r.ok()) {
    arrival.pool = ResolvePool(r, "").value_or(0);
  }
  int64_t priority = r.OptInteger("priority").value_or(0);
  r.Require(priority >= std::numeric_limits<int32_t>::min() &&
                priority <= std::numeric_limits<int32_t>::max(),
            "priority", "must fit in 32 bits, got " + std::to_string(priority));
  arrival.priority = static_cast<int32_t>(priority);
  ReadArrivalCosts(r, &arrival);
  ReadArrivalTiming(r, &arrival);
  if (!r.ok()) return r.status();
  total_jobs_ += arrival.JobCount();
  r.Require(total_jobs_ <= kMaxJobs, arrival.steady ? "rate" : "count",
            "the scenario would hold more than " + std::to_string(kMaxJobs) +
                " jobs");
  scenario_.arrivals.push_back(arrival);
  return r.status();
}

void Loader::ReadArrivalCosts(FieldReader& r, ArrivalSpec* arrival) {
  arrival->cost = r.OptNumber("cost").value_or(1.0);
  r.Require(arrival->cost >= 0, "cost",
            "must be >= 0, got " + FormatNumber(arrival->cost));
  arrival->cost_jitter = r.OptNumber("cost_jitter").value_or(0.0);
  r.Require(arrival->cost_jitter >= 0 && arrival->cost_jitter <= 1,
            "cost_jitter",
            "must lie in [0, 1] (a fraction of cost), got " +
                FormatNumber(arrival->cost_jitter));
  arrival->declared_cost = arrival->cost;
  if (r.OptString("declared_cost") == "none") {
    arrival->declared_cost = std::nullopt;
  } else if (std::optional<double> declared = r.OptNumber("declared_cost")) {
    r.Require(*declared >= 0, "declared_cost",
              "must be >= 0 or none, got " + FormatNumber(*declared));
    arrival->declared_cost = declared;
  }
}

void Loader::ReadArrivalTiming(FieldReader& r, ArrivalSpec* arrival) {
  bool burst = r.Has("at") || r.Has("count");
  arrival->steady = r.Has("rate") || r.Has("from") || r.Has("until");
  if (burst == arrival->steady) {
    r.Fail(burst ? "rate" : "count",
           burst ? "a burst (at, count) and a steady stream (rate, from, "
                   "until) cannot be mixed; write two arrivals"
                 : "missing: give `at` and `count` for a burst, or `rate` "
                   "and `until` for a steady stream");
    return;
  }
  if (burst) {
    arrival->at = r.Number("at");
    r.Require(arrival->at >= 0, "at",
              "must be >= 0, got " + FormatNumber(arrival->at));
    if (!r.Has("count")) r.Fail("count", "missing required field");
    int64_t count = r.OptInteger("count").value_or(1);
    r.Require(count >= 1, "count",
              "must be >= 1, got " + std::to_string(count));
    arrival->count = static_cast<uint64_t>(std::max<int64_t>(count, 0));
    return;
  }
  arrival->rate = r.Number("rate");
  r.Require(arrival->rate > 0, "rate",
            "must be > 0 jobs/s, got " + FormatNumber(arrival->rate));
  arrival->from = r.OptNumber("from").value_or(0.0);
  r.Require(arrival->from >= 0, "from",
            "must be >= 0, got " + FormatNumber(arrival->from));
  arrival->until = r.Number("until");
  r.Require(arrival->until > arrival->from, "until",
            "must be after from (" + FormatNumber(arrival->from) + "), got " +
                FormatNumber(arrival->until));
  r.Require(
      (arrival->until - arrival->from) * arrival->rate <=
          static_cast<double>(kMaxJobs),
      "rate",
      "the stream would hold more than " + std::to_string(kMaxJobs) + " jobs");
}

Status Loader::ReadPolicy(const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) {
    return ErrorAt(source(), LineOf(node), path, "expected a policy name");
  }
  StatusOr<sched::Policy> policy = sched::ParsePolicy(node.Scalar());
  if (!policy.ok()) {
    return ErrorAt(source(), LineOf(node), path, ProblemOf(policy.status()));
  }
  scenario_.policies.push_back(*policy);
  return Status::Ok();
}

// An empty `key` asks for the pool named "default" on the mapping's behalf.
std::optional<size_t> Loader::ResolvePool(FieldReader& r,
                                          std::string_view key) {
  std::string name = key.empty() ? "default" : r.String(key);
  if (!r.ok()) return std::nullopt;
  for (size_t i = 0; i < scenario_.pools.size(); ++i) {
    if (scenario_.pools[i].name == name) return i;
  }
  r.Fail(key.empty() ? "pool" : key,
         key.empty() ? "no pool given and there is no pool named \"default\""
                     : "unknown pool \"" + name + "\"");
  return std::nullopt;
}

std::optional<size_t> Loader::FindTenant(std::string_view name) const {
  for (size_t i = 0; i < scenario_.tenants.size(); ++i) {
    if (scenario_.tenants[i].config.name == name) return i;
  }
  return std::nullopt;
}

}  // namespace

uint64_t ArrivalSpec::JobCount() const {
  if (!steady) return count;
  // Jobs at from + k / rate for every k with from + k / rate < until.
  // The loops only absorb rounding in the ceil().
  auto jobs = static_cast<uint64_t>(std::ceil((until - from) * rate));
  while (jobs > 0 && from + static_cast<double>(jobs - 1) / rate >= until) {
    --jobs;
  }
  while (from + static_cast<double>(jobs) / rate < until) ++jobs;
  return jobs;
}

uint32_t Scenario::TotalWorkers() const {
  uint32_t total = 0;
  for (const PoolSpec& pool : pools) total += pool.workers;
  return total;
}

uint64_t Scenario::TotalJobs() const {
  uint64_t total = 0;
  for (const ArrivalSpec& arrival : arrivals) total += arrival.JobCount();
  return total;
}

const std::vector<sched::Policy>& AllPolicies() {
  static const std::vector<sched::Policy> kAll = {
      sched::Policy::kFifo, sched::Policy::kRoundRobin, sched::Policy::kHardCap,
      sched::Policy::kWorkConservingCap, sched::Policy::kDrr};
  return kAll;
}

StatusOr<Scenario> ParseScenario(std::string_view yaml, std::string source) {
  return yaml::LoadDocument<Scenario>(
      yaml, source,
      [&](const YAML::Node& root) { return Loader(source).Load(root); });
}

StatusOr<Scenario> LoadScenario(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return NotFound(path + ": cannot read: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseScenario(text.str(), path);
}

}  // namespace fairq::sim
