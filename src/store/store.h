// Store: fairqd's durable state in RocksDB, one column family per record
// kind (see column_families.h and docs/storage.md).
//
// Thread-safety: reads may run on any thread. Commit runs on the writer
// thread only (one writer keeps the log in dispatcher order). A failed write
// puts the store into a lasting failed state: every later Commit returns
// UNAVAILABLE without writing, and failed() reports it.
#ifndef FAIRQ_STORE_STORE_H_
#define FAIRQ_STORE_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fairq/v1/records.pb.h"
#include "store/job_page.h"
#include "store/key_codec.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
class Env;
class WriteBatch;
}  // namespace rocksdb

namespace fairq::store {

// 2: job pages and the done family (docs/storage.md, "Format version").
// A format-1 store is read as it is and marked 2 when opened.
inline constexpr uint32_t kFormatVersion = 2;

struct StoreOptions {
  std::string path;
  // false: Commit hands the log to the kernel but never fsyncs it. A process
  // crash loses nothing; a power loss or kernel crash may lose what the
  // kernel had not yet written back (on Linux's defaults up to ~30 s of
  // acknowledged writes; docs/storage.md).
  bool sync = true;
  // For tests: a RocksDB Env wrapper that injects faults. Not owned.
  rocksdb::Env* env = nullptr;
};

// Turns RocksDB's perf counters off on the calling thread. They are on by
// default and fairq reads none of them; each update is a thread-local
// lookup inside the shared library, 9-10% of the apply thread's time at
// the backlog benchmark (perf, docs/benchmarks.md). Threads that call the
// store in a loop call this first.
void DisablePerfCountersOnThisThread();

// The mutations of one logical operation (or one dispatcher turn), across
// families. Applied atomically by Store::Commit. Not thread-safe; move it
// from the thread that builds it to the writer.
class WriteBatch {
 public:
  ~WriteBatch();
  WriteBatch(WriteBatch&&) noexcept;
  WriteBatch& operator=(WriteBatch&&) noexcept;

  // A page of job records, under its first id.
  void PutJobPage(const JobPageEncoder& page);
  // The page stored under first_id, with every record in it.
  void DeleteJobPage(uint64_t first_id);
  // A finished job whose page keeps its record for the page's other jobs.
  void PutJobDone(uint64_t job_id);
  // The done marks of ids in [begin_id, end_id): with their page.
  void DeleteJobsDone(uint64_t begin_id, uint64_t end_id);
  void PutReady(const ReadyKey& key, const v1::ReadyEntry& entry);
  void DeleteReady(const ReadyKey& key);
  void PutScheduled(const ScheduledKey& key, const v1::ScheduledEntry& entry);
  void DeleteScheduled(const ScheduledKey& key);
  void PutLease(uint64_t job_id, const v1::LeaseRecord& lease);
  void DeleteLease(uint64_t job_id);
  void PutDead(uint64_t job_id, const v1::DeadRecord& dead);
  void DeleteDead(uint64_t job_id);
  void PutTenant(const v1::TenantRecord& tenant);
  void PutIdempotency(uint32_t tenant_id, std::string_view key,
                      const v1::IdempotencyRecord& record);
  void PutPool(std::string_view name, const v1::PoolRecord& pool);
  void PutIdReservation(const v1::IdReservation& reservation);

  bool empty() const;
  // Number of puts and deletes.
  uint32_t count() const;

 private:
  friend class Store;
  explicit WriteBatch(const std::vector<rocksdb::ColumnFamilyHandle*>* families);

  const std::vector<rocksdb::ColumnFamilyHandle*>* families_;  // the Store's
  std::unique_ptr<rocksdb::WriteBatch> rep_;
};

class Store {
 public:
  // Opens or creates the database at options.path with every column family.
  // Refuses a database whose format_version is unknown (FAILED_PRECONDITION)
  // or that cannot be opened (UNAVAILABLE, with RocksDB's reason).
  static StatusOr<std::unique_ptr<Store>> Open(const StoreOptions& options);
  ~Store();

  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // An empty batch for this store. Any thread; the batch must not outlive
  // the store.
  WriteBatch NewBatch() const;

  // --- Writer threads only ---------------------------------------------------
  // Writes the batches in order to the log and the memtables, without
  // syncing: readers see them at once; a process crash keeps them (the log
  // is in the kernel's page cache), a power loss may not. UNAVAILABLE, and
  // the lasting failed state, on any failure (no batch after the failing
  // one is written). One thread calls Apply, so the log keeps its order.
  Status Apply(std::vector<WriteBatch>& batches);
  // Makes everything applied before this call durable (one fsync of the
  // log; a no-op when the store was opened without sync). May run on
  // another thread concurrently with Apply. Failure: as for Apply.
  Status SyncLog();
  // Apply, then SyncLog.
  Status Commit(std::vector<WriteBatch>& batches);

  // --- Any thread ------------------------------------------------------------
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // UNAVAILABLE once a write or sync has failed (the lasting failed state).
  Status CheckNotFailed() const;

  // A job's record, found in its page. A finished job's record stays while
  // its page holds others that live, so a record found does not say the job
  // is live: the broker says that.
  StatusOr<std::optional<v1::JobRecord>> GetJob(uint64_t job_id) const;
  // One result per id, in order; nullopt for ids not stored.
  StatusOr<std::vector<std::optional<v1::JobRecord>>> GetJobs(
      const std::vector<uint64_t>& job_ids) const;
  // The job records with ids in [begin_id, end_id), by id, read with one
  // iterator: for ids read together, a fraction of a point read each, only
  // the records in the range parsed. Finished jobs whose page lives are
  // included, as in GetJob. Each spec stays encoded, for the read-ahead to
  // hand on unparsed. Stops after the record whose spec brings the total
  // past `max_spec_bytes` (the first is always returned); `next_id` says
  // where: end_id when the whole range was read.
  struct JobsRead {
    std::vector<v1::JobRecordWithEncodedSpec> jobs;
    uint64_t next_id = 0;
  };
  StatusOr<JobsRead> ReadJobs(uint64_t begin_id, uint64_t end_id,
                              size_t max_spec_bytes) const;
  StatusOr<std::optional<v1::DeadRecord>> GetDead(uint64_t job_id) const;
  StatusOr<std::optional<v1::IdReservation>> GetIdReservation() const;

  // Scans in key order, for recovery and admin listings. A visitor returning
  // false stops the scan early.
  template <class... Args>
  using Visitor = std::function<bool(const Args&...)>;
  // Every job record not marked done (live and dead jobs), by id; recovery
  // reads the jobs family in one sequential pass instead of a point read
  // per job. After a page of more than one record, `on_page` gets its ids
  // and how many of its records were visited (not done).
  struct StoredPage {
    uint64_t first_id = 0;
    uint64_t end_id = 0;  // one past the last record's id
    uint32_t live = 0;
  };
  Status ScanJobs(
      const Visitor<v1::JobRecord>& visit,
      const std::function<void(const StoredPage&)>& on_page =
          [](const StoredPage&) {}) const;
  Status ScanReady(const Visitor<ReadyKey, v1::ReadyEntry>& visit) const;
  Status ScanScheduled(
      const Visitor<ScheduledKey, v1::ScheduledEntry>& visit) const;
  Status ScanLeases(const Visitor<uint64_t, v1::LeaseRecord>& visit) const;
  // Dead letters with job id > after_job_id.
  Status ScanDead(uint64_t after_job_id,
                  const Visitor<uint64_t, v1::DeadRecord>& visit) const;
  Status ScanTenants(const Visitor<v1::TenantRecord>& visit) const;
  Status ScanPools(const Visitor<std::string, v1::PoolRecord>& visit) const;
  // Unexpired records only.
  Status ScanIdempotency(
      int64_t now_unix_ms,
      const Visitor<uint32_t, std::string, v1::IdempotencyRecord>& visit) const;

 private:
  Store() = default;

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> families_;  // by Family
  bool sync_ = true;
  std::atomic<bool> failed_{false};
};

}  // namespace fairq::store

#endif  // FAIRQ_STORE_STORE_H_
