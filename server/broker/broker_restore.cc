// Startup: rebuild the broker's state from the store.
#include <algorithm>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "server/broker/broker.h"
#include "server/logging/logging.h"
#include "server/config/tenant_settings.h"

namespace fairq::server {
namespace {

// An index entry whose job record is missing: the entry is skipped (the
// job cannot run without its spec) and reported.
void RecordMissing(const char* index, uint64_t job_id) {
  logging::Log(spdlog::level::warn, "index entry without job record skipped",
               {{"index", index}, {"job_id", job_id}});
}

// Builds before enqueue_rate had its floor stored any finite rate >= 0;
// one in (0, kMinEnqueueRate) would fail ApplyTenant's checks and with
// them fairqd's start. Such a rate is raised to the floor, with a warning.
bool RaiseStoredRate(v1::Tenant* tenant) {
  double rate = tenant->quotas().enqueue_rate();
  if (!(rate > 0 && rate < config::kMinEnqueueRate)) return false;
  tenant->mutable_quotas()->set_enqueue_rate(config::kMinEnqueueRate);
  logging::Log(spdlog::level::warn,
               "stored enqueue_rate raised to the least allowed",
               {{"tenant", tenant->name()},
                {"stored", rate},
                {"now", config::kMinEnqueueRate}});
  return true;
}

}  // namespace

Status Broker::Restore(int64_t now_ms, Turn& turn) {
  restored_ms_ = now_ms;
  FAIRQ_RETURN_IF_ERROR(ApplyOrgs(config_.orgs));
  FAIRQ_RETURN_IF_ERROR(RestoreTenantsAndPools(turn));
  FAIRQ_RETURN_IF_ERROR(RestoreJobs(now_ms));
  return RestoreIdempotency(now_ms);
}

// Stored pools and tenants first, in id order (ids are dense), then the
// configured ones: the config file wins for the tenants it names, at every
// start; tenants made by the API or by auto-creation keep their settings.
Status Broker::RestoreTenantsAndPools(Turn& turn) {
  std::vector<std::pair<uint32_t, std::string>> pools;
  FAIRQ_RETURN_IF_ERROR(store_->ScanPools(
      [&](const std::string& name, const v1::PoolRecord& record) {
        pools.emplace_back(record.id(), name);
        return true;
      }));
  std::sort(pools.begin(), pools.end());
  for (const auto& [id, name] : pools) {
    if (id != pools_.size()) return Internal("store: pool ids are not dense");
    AddPool(name);
  }
  // Configured pools are created whatever auto_create_pools says: that
  // switch is about pools first named by a job or a worker. (Going through
  // FindOrCreatePool here made fairqd refuse to start with
  // auto_create_pools: false, even for "default".)
  AddListedPools(config_.pools, turn);
  std::vector<v1::TenantRecord> tenants;
  FAIRQ_RETURN_IF_ERROR(store_->ScanTenants([&](const v1::TenantRecord& r) {
    tenants.push_back(r);
    return true;
  }));
  std::sort(tenants.begin(), tenants.end(), [](const auto& a, const auto& b) {
    return a.id() < b.id();
  });
  for (v1::TenantRecord& record : tenants) {
    if (record.id() != tenants_.size()) {
      return Internal("store: tenant ids are not dense");
    }
    bool raised = RaiseStoredRate(record.mutable_config());
    FAIRQ_RETURN_IF_ERROR(ApplyTenant(record.id(), record.config()));
    if (raised) PersistTenant(record.id(), turn);
  }
  for (const v1::Tenant& configured : config_.tenants) {
    auto it = tenant_ids_.find(configured.name());
    auto id = it != tenant_ids_.end()
                  ? it->second
                  : static_cast<sched::TenantId>(tenants_.size());
    v1::Tenant settings = configured;
    settings.set_paused(id < tenants_.size() && tenants_[id].config.paused());
    FAIRQ_RETURN_IF_ERROR(ApplyTenant(id, settings));
    PersistTenant(id, turn);
  }
  return Status::Ok();
}

namespace {

// What the indexes say, read before the jobs: all are small next to the
// jobs family except the dead letters, kept as a sorted list of ids.
struct StoredIndexes {
  struct Ready {
    store::ReadyKey key;
    v1::ReadyEntry entry;
  };
  std::vector<Ready> ready;  // by sequence
  absl::flat_hash_set<uint64_t> ready_ids;
  absl::flat_hash_map<uint64_t, std::pair<int64_t, v1::ScheduledEntry>>
      scheduled;  // job id -> due time, entry
  absl::flat_hash_map<uint64_t, v1::LeaseRecord> leases;
  std::vector<uint64_t> dead;  // ascending: the dead family is keyed by id
  uint64_t max_seq = 0;
};

StatusOr<StoredIndexes> ReadIndexes(const store::Store& store) {
  StoredIndexes idx;
  FAIRQ_RETURN_IF_ERROR(store.ScanReady(
      [&](const store::ReadyKey& key, const v1::ReadyEntry& entry) {
        idx.ready.push_back({key, entry});
        idx.ready_ids.insert(entry.job_id());
        idx.max_seq = std::max(idx.max_seq, key.seq);
        return true;
      }));
  // In the order they became ready (the sequence), not by their wall-clock
  // ready time, which a clock step could reorder.
  std::sort(idx.ready.begin(), idx.ready.end(),
            [](const auto& a, const auto& b) { return a.key.seq < b.key.seq; });
  FAIRQ_RETURN_IF_ERROR(store.ScanScheduled(
      [&](const store::ScheduledKey& key, const v1::ScheduledEntry& entry) {
        idx.scheduled[key.job_id] = {key.due_unix_ms, entry};
        return true;
      }));
  FAIRQ_RETURN_IF_ERROR(
      store.ScanLeases([&](uint64_t job_id, const v1::LeaseRecord& lease) {
        idx.leases[job_id] = lease;
        return true;
      }));
  FAIRQ_RETURN_IF_ERROR(
      store.ScanDead(0, [&](uint64_t job_id, const v1::DeadRecord&) {
        idx.dead.push_back(job_id);
        return true;
      }));
  return idx;
}

}  // namespace

// One pass over the jobs family in id order (enqueue order). A job's state
// comes from its index entry; a job with none is READY since its enqueue
// (JobMeta::ready_entry). Jobs requeued with an entry of their own go back
// between those by ready time, so every queue keeps its order.
Status Broker::RestoreJobs(int64_t now_ms) {
  StatusOr<StoredIndexes> indexes = ReadIndexes(*store_);
  if (!indexes.ok()) return indexes.status();
  StoredIndexes& idx = *indexes;
  Turn scratch(store_->NewBatch());  // entries re-made here are stored already
  size_t next_ready = 0;
  std::vector<const StoredIndexes::Ready*> unplaced;
  auto place_ready_until = [&](int64_t ready_ms) {
    for (; next_ready < idx.ready.size() &&
           idx.ready[next_ready].entry.ready_unix_ms() <= ready_ms;
         ++next_ready) {
      const StoredIndexes::Ready& ready = idx.ready[next_ready];
      if (!RestoreReady(ready.key, ready.entry, scratch)) {
        unplaced.push_back(&ready);  // its record comes later in the scan
      }
    }
  };
  uint64_t max_id = 0;
  auto dead = idx.dead.begin();
  auto restore_job = [&](const v1::JobRecord& record) {
    const uint64_t id = record.id();
    max_id = std::max(max_id, id);
    while (dead != idx.dead.end() && *dead < id) ++dead;
    if (dead != idx.dead.end() && *dead == id) {
      ++DepthOf(record.tenant_id(), record.pool_id()).dead;
      dead_ids_.insert(id);
      return true;
    }
    // As between commands: a long-lived job restored first must not leave
    // every job after a wide gap in its ids outside the table's window.
    jobs_.Compact();
    JobMeta& job = jobs_.Insert(
        id, MetaFor(record.spec(), record.tenant_id(), record.pool_id()));
    if (auto lease = idx.leases.find(id); lease != idx.leases.end()) {
      RestoreLease(id, job, lease->second, now_ms);
    } else if (auto s = idx.scheduled.find(id); s != idx.scheduled.end()) {
      job.attempts = static_cast<uint16_t>(s->second.second.attempts());
      jobs_.SetLastError(id, s->second.second.last_error());
      MakeScheduled(id, job, s->second.first, scratch);
    } else if (!idx.ready_ids.contains(id)) {
      place_ready_until(record.enqueued_unix_ms());
      MakeReady(id, job, record.enqueued_unix_ms(), scratch,
                /*since_enqueue=*/true);
      // Only such a job can have had a lease answered before it was written
      // (its spec was in the payload cache). Even in a tenant the store has
      // paused: a resume may have been lost in the crash with the grant.
      job.adoptable = true;
    }
    return true;
  };
  // Pages of more than one job, with how many of them have not finished.
  auto count_page = [&](const store::Store::StoredPage& page) {
    pages_.Add(page.first_id, page.end_id, page.live);
  };
  FAIRQ_RETURN_IF_ERROR(store_->ScanJobs(restore_job, count_page));
  place_ready_until(std::numeric_limits<int64_t>::max());
  for (const StoredIndexes::Ready* ready : unplaced) {
    if (!RestoreReady(ready->key, ready->entry, scratch)) {
      RecordMissing("ready", ready->entry.job_id());
    }
  }
  for (const auto& [id, entry] : idx.scheduled) {
    if (jobs_.Find(id) == nullptr) RecordMissing("scheduled", id);
  }
  for (const auto& [id, lease] : idx.leases) {
    if (jobs_.Find(id) == nullptr) RecordMissing("lease", id);
  }
  next_seq_ = std::max(next_seq_, idx.max_seq + 1);
  auto reservation = store_->GetIdReservation();
  if (!reservation.ok()) return reservation.status();
  uint64_t reserved = *reservation ? (*reservation)->next_unreserved() : 1;
  next_job_id_ = std::max(max_id + 1, reserved);
  reserved_job_id_ = next_job_id_;  // the next id reserves a new block
  return Status::Ok();
}

// False when the job's record has not been read yet.
bool Broker::RestoreReady(const store::ReadyKey& key,
                          const v1::ReadyEntry& entry, Turn& scratch) {
  JobMeta* job = jobs_.Find(entry.job_id());
  if (job == nullptr) return false;
  if (job->state != v1::JOB_STATE_UNSPECIFIED) return true;  // leased etc.
  job->attempts = static_cast<uint16_t>(entry.attempts());
  jobs_.SetLastError(entry.job_id(), entry.last_error());
  next_seq_ = key.seq;  // MakeReady keeps the stored key's sequence
  MakeReady(entry.job_id(), *job, entry.ready_unix_ms(), scratch);
  return true;
}

// A lease survives a restart: its worker may still be running the job. It
// gets at least a fresh lease duration from now, so a worker that was
// heartbeating through the outage can still complete it: the length it was
// granted with, if longer. The worker paces its beats by that length until
// an answer tells it the new one (a restart may have lowered
// default_lease_seconds), and its first beat may come that long after the
// restart.
void Broker::RestoreLease(uint64_t job_id, JobMeta& job,
                          const v1::LeaseRecord& lease, int64_t now_ms) {
  job.state = v1::JOB_STATE_LEASED;
  job.attempts = static_cast<uint16_t>(lease.attempt());
  job.token = lease.token();
  // Bounded as a lease length is, whatever the record says.
  int64_t granted_ms =
      lease.leased_unix_ms() > 0
          ? std::clamp<int64_t>(
                lease.deadline_unix_ms() - lease.leased_unix_ms(), 0,
                int64_t{config::kMaxLeaseSeconds} * 1000)
          : 0;
  job.at_ms = std::max(lease.deadline_unix_ms(),
                       now_ms + std::max<int64_t>(job.lease_ms, granted_ms));
  // A lapse charges from the grant, but at most the length granted before
  // the restart: not hours fairqd was down, when no worker could report.
  job.leased_ms =
      std::max<int64_t>(lease.leased_unix_ms(), now_ms - granted_ms);
  jobs_.SetLastError(job_id, lease.last_error());
  ++DepthOf(job.tenant, job.pool).leased;
  lease_timers_.Push({job.at_ms, job_id, job.token});
  workers_.LeaseStarted(job_id, lease.worker_id());
  AdoptRunning(job_id, job, now_ms);
}

// A lease this run did not grant: the scheduler counts it as running, the
// metrics as adopted.
void Broker::AdoptRunning(uint64_t job_id, const JobMeta& job, int64_t now_ms) {
  ExpectOk(scheduler_->AdoptRunning({job_id, job.tenant, job.pool, job.priority,
                                     job.declared_cost()}),
           "adopt a lease", job_id);
  metrics_.LeaseAdopted(job.tenant, job.pool, now_ms);
}

Status Broker::RestoreIdempotency(int64_t now_ms) {
  return store_->ScanIdempotency(
      now_ms, [&](uint32_t tenant, const std::string& key,
                  const v1::IdempotencyRecord& record) {
        idempotency_.Insert(tenant, key, record.job_id(),
                            record.expires_unix_ms());
        return true;
      });
}

}  // namespace fairq::server
