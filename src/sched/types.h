// Plain value types of the scheduling core: ids, policies, tenant settings.
//
// Values only; no behaviour beyond validation. Safe to copy across threads.
#ifndef FAIRQ_SCHED_TYPES_H_
#define FAIRQ_SCHED_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "sched/slot_limit.h"

namespace fairq::sched {

using JobId = uint64_t;
using TenantId = uint32_t;
using PoolId = uint32_t;
using OrgId = uint32_t;

// How the scheduler chooses between tenants. kDrr is the product; the others
// are baselines that the simulator compares it against.
enum class Policy {
  kFifo,                // one queue in arrival order; caps ignored
  kRoundRobin,          // one job per active tenant in turn; caps ignored
  kHardCap,             // arrival order, each tenant's cap always enforced
  kWorkConservingCap,   // arrival order, caps bind only while others wait
  kDrr,                 // weighted DRR in worker-seconds, caps and floors
};

std::string_view PolicyName(Policy policy);
StatusOr<Policy> ParsePolicy(std::string_view name);

// How a tenant's cap behaves under kDrr.
enum class CapMode {
  kWorkConserving,  // binds only while another tenant could use the slot
  kHard,            // binds always, even when workers sit idle
};

std::string_view CapModeName(CapMode mode);
StatusOr<CapMode> ParseCapMode(std::string_view name);

// Bounds that keep DRR arithmetic finite and exact enough: a weight ratio
// of at most 1e12 and costs of at most ~31 years stay far inside a double's
// range and precision, and a grant never underflows to zero.
inline constexpr double kMinWeight = 1e-6;
inline constexpr double kMaxWeight = 1e6;
inline constexpr double kMaxSeconds = 1e9;

// A tenant's scheduling settings. An empty `org` makes the tenant its own
// organisation, whose weight is then the tenant's weight.
struct TenantConfig {
  std::string name;
  std::string org;
  double weight = 1.0;
  SlotLimit cap;    // none by default
  CapMode cap_mode = CapMode::kWorkConserving;
  SlotLimit floor;  // reserved minimum; none by default
};

struct OrgConfig {
  std::string name;
  double weight = 1.0;
};

struct SchedulerOptions {
  Policy policy = Policy::kDrr;
  // Worker-seconds of credit a tenant (or organisation) of weight 1 earns per
  // turn. Near the typical job cost gives O(1) decisions; smaller interleaves
  // tenants more finely.
  double quantum = 0.01;
  // Ceiling on banked credit, in worker-seconds per unit of weight. Must be at
  // least `quantum`.
  double max_deficit = 4.0;
  // Cost charged for a job with no estimate before any runtime is measured.
  double default_cost = 1.0;
  // Weight of the newest measurement in the learned per-tenant estimate.
  double estimate_alpha = 0.2;
  // The least worker-seconds a lease is charged, whatever its job's cost or
  // runtime. A lease costs the broker and the other tenants' wait something
  // even when its job takes no time: without a floor, a tenant whose jobs
  // report microseconds keeps the turn for thousands of jobs (quantum /
  // cost). 0..quantum.
  double min_charge = 0.001;
};

Status Validate(const TenantConfig& config);
Status Validate(const OrgConfig& config);
Status Validate(const SchedulerOptions& options);

// A job as the scheduler sees it: identity, owner and ordering; no payload.
struct JobSpec {
  JobId id = 0;
  TenantId tenant = 0;
  PoolId pool = 0;
  int32_t priority = 0;         // higher runs first within the tenant
  std::optional<double> cost;   // declared worker-seconds; learned if absent
};

// What the core keeps of a queued job. `cost` is the declared estimate, NaN
// when the producer gave none (a float, to keep the entry at 32 bytes).
struct QueuedJob {
  JobId id = 0;
  uint64_t seq = 0;     // arrival order within the pool
  double ready_at = 0;  // when it became ready, for oldest-job age
  float cost = 0;
};
static_assert(sizeof(QueuedJob) == 32, "queued job entry grew");

// The answer to "a worker slot of this pool is free: which job?".
struct Dispatch {
  JobId job = 0;
  TenantId tenant = 0;
  double charged_cost = 0;  // worker-seconds charged now, reconciled later
};

// A tenant's standing in one pool, for stats and tests.
struct TenantPoolStats {
  uint64_t queued = 0;
  uint32_t running = 0;
  double deficit = 0;                      // DRR credit; 0 for baselines
  double worker_seconds = 0;               // measured runtime so far
  double estimate = 0;                     // cost charged to jobs without one
  std::optional<double> oldest_ready_at;   // ready time of the oldest queued
  // The tenant's limits at the pool's capacity now, as the scheduler
  // applies them: the cap (none without one) and the floor rounded down,
  // the part always kept (docs/scheduling.md, "Caps and floors").
  std::optional<uint32_t> cap_slots;
  uint32_t whole_floor_slots = 0;
};

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_TYPES_H_
