// Startup: rebuild the broker's state from the store.
#include <algorithm>

#include "server/broker/broker.h"
#include "server/config/tenant_settings.h"

namespace fairq::server {

Status Broker::Restore(int64_t now_ms, Turn& turn) {
  for (const sched::OrgConfig& org : config_.orgs) {
    StatusOr<sched::OrgId> set = scheduler_->SetOrg(org);
    if (!set.ok()) return set.status();
  }
  FAIRQ_RETURN_IF_ERROR(RestoreTenantsAndPools(turn));
  FAIRQ_RETURN_IF_ERROR(RestoreJobs());
  return RestoreIndexes(now_ms, turn);
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
  for (const std::string& name : config_.pools) {
    if (pool_ids_.contains(name)) continue;
    v1::PoolRecord record;
    record.set_id(AddPool(name));
    turn.batch.PutPool(name, record);
  }
  std::vector<v1::TenantRecord> tenants;
  FAIRQ_RETURN_IF_ERROR(store_->ScanTenants([&](const v1::TenantRecord& r) {
    tenants.push_back(r);
    return true;
  }));
  std::sort(tenants.begin(), tenants.end(), [](const auto& a, const auto& b) {
    return a.id() < b.id();
  });
  for (const v1::TenantRecord& record : tenants) {
    if (record.id() != tenants_.size()) {
      return Internal("store: tenant ids are not dense");
    }
    FAIRQ_RETURN_IF_ERROR(ApplyTenant(record.id(), record.config()));
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

// Every stored job gets its metadata; the indexes then say which state it
// is in. Dead jobs are dropped from memory again.
Status Broker::RestoreJobs() {
  uint64_t max_id = 0;
  FAIRQ_RETURN_IF_ERROR(store_->ScanJobs([&](const v1::JobRecord& record) {
    jobs_.Insert(record.id(), MetaFor(record.spec(), record.tenant_id(),
                                      record.pool_id(),
                                      record.enqueued_unix_ms()));
    max_id = std::max(max_id, record.id());
    return true;
  }));
  auto reservation = store_->GetIdReservation();
  if (!reservation.ok()) return reservation.status();
  uint64_t reserved = *reservation ? (*reservation)->next_unreserved() : 1;
  next_job_id_ = std::max(max_id + 1, reserved);
  reserved_job_id_ = next_job_id_;  // the next id reserves a new block
  return Status::Ok();
}

Status Broker::RestoreIndexes(int64_t now_ms, Turn& turn) {
  Turn scratch(store_->NewBatch());  // restoring writes nothing back
  uint64_t max_seq = 0;
  FAIRQ_RETURN_IF_ERROR(store_->ScanReady(
      [&](const store::ReadyKey& key, const v1::ReadyEntry& entry) {
        JobMeta* job = jobs_.Find(entry.job_id());
        if (job == nullptr) return true;
        job->attempts = static_cast<uint16_t>(entry.attempts());
        jobs_.SetLastError(entry.job_id(), entry.last_error());
        next_seq_ = key.seq;  // MakeReady keeps the stored key's sequence
        max_seq = std::max(max_seq, key.seq);
        MakeReady(entry.job_id(), *job, entry.ready_unix_ms(), scratch);
        return true;
      }));
  next_seq_ = max_seq + 1;
  FAIRQ_RETURN_IF_ERROR(store_->ScanScheduled(
      [&](const store::ScheduledKey& key, const v1::ScheduledEntry& entry) {
        JobMeta* job = jobs_.Find(key.job_id);
        if (job == nullptr) return true;
        job->attempts = static_cast<uint16_t>(entry.attempts());
        jobs_.SetLastError(key.job_id, entry.last_error());
        MakeScheduled(key.job_id, *job, key.due_unix_ms, scratch);
        return true;
      }));
  // A lease survives a restart: its worker may still be running the job.
  // It gets at least a fresh lease duration from now, so a worker that was
  // heartbeating through the outage can still complete it.
  FAIRQ_RETURN_IF_ERROR(store_->ScanLeases(
      [&](uint64_t job_id, const v1::LeaseRecord& lease) {
        JobMeta* job = jobs_.Find(job_id);
        if (job == nullptr) return true;
        job->state = v1::JOB_STATE_LEASED;
        job->attempts = static_cast<uint16_t>(lease.attempt());
        job->token = lease.token();
        job->at_ms = std::max(lease.deadline_unix_ms(), now_ms + job->lease_ms);
        jobs_.SetLastError(job_id, lease.last_error());
        ++DepthOf(job->tenant, job->pool).leased;
        ExpectOk(scheduler_->AdoptRunning({job_id, job->tenant, job->pool,
                                           job->priority, job->declared_cost()}),
                 "restore a lease");
        lease_timers_.push({job->at_ms, job_id, job->token});
        metrics_.LeaseAdopted(job->tenant, job->pool, now_ms);
        return true;
      }));
  FAIRQ_RETURN_IF_ERROR(store_->ScanDead(0, [&](uint64_t job_id,
                                                const v1::DeadRecord&) {
    if (const JobMeta* job = jobs_.Find(job_id)) {
      ++DepthOf(job->tenant, job->pool).dead;
      jobs_.Erase(job_id);
    }
    return true;
  }));
  FAIRQ_RETURN_IF_ERROR(store_->ScanIdempotency(
      now_ms, [&](uint32_t tenant, const std::string& key,
                  const v1::IdempotencyRecord& record) {
        idempotency_.Insert(tenant, key, record.job_id(),
                            record.expires_unix_ms());
        return true;
      }));
  return RequeueOrphans(now_ms, turn);
}

// Every write puts a job record and its index entry in one batch, so a
// record without an index means a bug. The job goes back to READY (run at
// least once) and is counted so the daemon logs it.
Status Broker::RequeueOrphans(int64_t now_ms, Turn& turn) {
  std::vector<uint64_t> orphans;
  jobs_.ForEach([&](uint64_t id, const JobMeta& job) {
    if (job.state == v1::JOB_STATE_UNSPECIFIED) orphans.push_back(id);
  });
  for (uint64_t id : orphans) MakeReady(id, *jobs_.Find(id), now_ms, turn);
  orphans_requeued_ = orphans.size();
  return Status::Ok();
}

}  // namespace fairq::server
