#include "sim/simulator.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <string>
#include <utility>

#include "sim/scheduler_setup.h"
#include "sim/workload.h"

namespace fairq::sim {
namespace {

constexpr double kNotStarted = -1;

// One policy's run. Invariants between instants: free_[p] + (jobs of pool p
// in running_) == workers of p; start_[i] != kNotStarted iff job i was leased;
// every job before next_arrival_ has been enqueued.
class Run {
 public:
  Run(const Scenario& scenario, const std::vector<SimJob>& jobs,
      SimScheduler sim)
      : scenario_(scenario),
        jobs_(jobs),
        sim_(std::move(sim)),
        start_(jobs.size(), kNotStarted) {
    for (const PoolSpec& pool : scenario.pools) free_.push_back(pool.workers);
  }

  Status Execute();
  PolicyResult Summarise(sched::Policy policy) const;

 private:
  using Completion = std::pair<double, sched::JobId>;

  std::optional<double> NextTime() const;
  Status CompleteAt(double now);
  Status ArriveAt(double now);
  Status FillWorkers(double now);
  Status Start(const sched::Dispatch& dispatch, size_t pool, double now);
  Status Broken(const std::string& what) const;

  const Scenario& scenario_;
  const std::vector<SimJob>& jobs_;
  SimScheduler sim_;
  std::vector<double> start_;   // per job
  std::vector<uint32_t> free_;  // per pool
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>>
      running_;
  size_t next_arrival_ = 0;
  double last_event_ = 0;
};

Status Run::Execute() {
  while (std::optional<double> now = NextTime()) {
    if (scenario_.duration && *now > *scenario_.duration) break;
    last_event_ = *now;
    FAIRQ_RETURN_IF_ERROR(CompleteAt(*now));
    FAIRQ_RETURN_IF_ERROR(ArriveAt(*now));
    FAIRQ_RETURN_IF_ERROR(FillWorkers(*now));
  }
  return Status::Ok();
}

std::optional<double> Run::NextTime() const {
  std::optional<double> next;
  if (next_arrival_ < jobs_.size()) next = jobs_[next_arrival_].arrival;
  if (!running_.empty() && (!next || running_.top().first < *next)) {
    next = running_.top().first;
  }
  return next;
}

Status Run::CompleteAt(double now) {
  while (!running_.empty() && running_.top().first == now) {
    sched::JobId id = running_.top().second;
    running_.pop();
    const SimJob& job = jobs_[id - 1];
    ++free_[job.pool];
    Status status = sim_.scheduler->Complete(id, job.cost);
    if (!status.ok()) return Broken("Complete: " + status.ToString());
  }
  return Status::Ok();
}

Status Run::ArriveAt(double now) {
  for (; next_arrival_ < jobs_.size() && jobs_[next_arrival_].arrival == now;
       ++next_arrival_) {
    const SimJob& job = jobs_[next_arrival_];
    sched::JobSpec spec{next_arrival_ + 1, sim_.tenants[job.tenant],
                        sim_.pools[job.pool], job.priority, job.declared_cost};
    Status status = sim_.scheduler->Enqueue(spec, now);
    if (!status.ok()) return Broken("Enqueue: " + status.ToString());
  }
  return Status::Ok();
}

Status Run::FillWorkers(double now) {
  for (size_t pool = 0; pool < free_.size(); ++pool) {
    while (free_[pool] > 0) {
      StatusOr<std::optional<sched::Dispatch>> dispatch =
          sim_.scheduler->LeaseNextJob(sim_.pools[pool]);
      if (!dispatch.ok()) {
        return Broken("LeaseNextJob: " + dispatch.status().ToString());
      }
      if (!dispatch->has_value()) break;
      FAIRQ_RETURN_IF_ERROR(Start(**dispatch, pool, now));
    }
  }
  return Status::Ok();
}

// The simulator doubles as a checker of the scheduler's basic promises.
Status Run::Start(const sched::Dispatch& dispatch, size_t pool, double now) {
  sched::JobId id = dispatch.job;
  if (id == 0 || id > next_arrival_) {
    return Broken("leased unknown or not yet enqueued job " +
                  std::to_string(id));
  }
  const SimJob& job = jobs_[id - 1];
  if (start_[id - 1] != kNotStarted) {
    return Broken("leased job " + std::to_string(id) + " twice");
  }
  if (job.pool != pool || dispatch.tenant != sim_.tenants[job.tenant]) {
    return Broken("job " + std::to_string(id) +
                  " leased with the wrong pool or tenant");
  }
  start_[id - 1] = now;
  --free_[pool];
  running_.push({now + job.cost, id});
  return Status::Ok();
}

Status Run::Broken(const std::string& what) const {
  return Internal(scenario_.source + ": scheduler broke the simulation at t=" +
                  std::to_string(last_event_) + ": " + what);
}

// Per-tenant accumulation before percentiles are taken.
struct Tally {
  std::vector<double> waits;
  double worker_seconds = 0;
  double last_end = 0;
  bool unfinished = false;
};

PolicyResult Run::Summarise(sched::Policy policy) const {
  double horizon = scenario_.duration.value_or(last_event_);
  std::vector<Tally> tallies(scenario_.tenants.size());
  for (size_t i = 0; i < jobs_.size() && jobs_[i].arrival <= horizon; ++i) {
    Tally& tally = tallies[jobs_[i].tenant];
    double start = start_[i];
    bool started = start != kNotStarted;
    double end = start + jobs_[i].cost;
    tally.waits.push_back((started ? start : horizon) - jobs_[i].arrival);
    if (started) tally.worker_seconds += std::min(end, horizon) - start;
    tally.unfinished = tally.unfinished || !started || end > horizon;
    if (started) tally.last_end = std::max(tally.last_end, end);
  }
  PolicyResult result{policy, 0, horizon, {}};
  double total = 0;
  for (const Tally& tally : tallies) total += tally.worker_seconds;
  for (size_t t = 0; t < tallies.size(); ++t) {
    Tally& tally = tallies[t];
    std::sort(tally.waits.begin(), tally.waits.end());
    TenantResult& out = result.tenants.emplace_back();
    out.tenant = scenario_.tenants[t].config.name;
    out.jobs = tally.waits.size();
    out.wait_p50_s = NearestRank(tally.waits, 50);
    out.wait_p99_s = NearestRank(tally.waits, 99);
    out.wait_max_s = NearestRank(tally.waits, 100);
    if (!tally.unfinished && out.jobs > 0) out.finish_s = tally.last_end;
    out.worker_seconds = tally.worker_seconds;
    out.share = total > 0 ? tally.worker_seconds / total : 0;
  }
  double capacity = scenario_.TotalWorkers() * horizon;
  result.utilization = capacity > 0 ? total / capacity : 0;
  return result;
}

StatusOr<PolicyResult> SimulateJobs(const Scenario& scenario,
                                    const std::vector<SimJob>& jobs,
                                    sched::Policy policy) {
  StatusOr<SimScheduler> sim = BuildScheduler(scenario, policy);
  if (!sim.ok()) return sim.status();
  Run run(scenario, jobs, std::move(sim).value());
  FAIRQ_RETURN_IF_ERROR(run.Execute());
  return run.Summarise(policy);
}

}  // namespace

double NearestRank(const std::vector<double>& sorted, int percent) {
  if (sorted.empty()) return 0;
  // Integer arithmetic: ceil(percent / 100 * n) without rounding surprises.
  size_t n = sorted.size();
  size_t rank = (static_cast<size_t>(percent) * n + 99) / 100;
  return sorted[std::max<size_t>(rank, 1) - 1];
}

StatusOr<PolicyResult> Simulate(const Scenario& scenario,
                                sched::Policy policy) {
  return SimulateJobs(scenario, ExpandArrivals(scenario), policy);
}

StatusOr<std::vector<PolicyResult>> SimulateAll(
    const Scenario& scenario, const std::vector<sched::Policy>& policies) {
  std::vector<SimJob> jobs = ExpandArrivals(scenario);
  std::vector<PolicyResult> results;
  for (sched::Policy policy : policies) {
    StatusOr<PolicyResult> result = SimulateJobs(scenario, jobs, policy);
    if (!result.ok()) return result.status();
    results.push_back(std::move(result).value());
  }
  return results;
}

}  // namespace fairq::sim
