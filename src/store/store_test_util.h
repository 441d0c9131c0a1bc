// Test helpers for the store: record builders, and readers that collect a
// whole family into a vector; each test's directory is a ScopedTempDir.
#ifndef FAIRQ_STORE_STORE_TEST_UTIL_H_
#define FAIRQ_STORE_STORE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rocksdb/db.h"
#include "store/column_families.h"
#include "store/store.h"
#include "tests/util/scoped_temp_dir.h"

namespace fairq::store {

using ::fairq::testing::ScopedTempDir;

// The store's database opened with plain RocksDB and the store's own family
// table, to plant what the Store API cannot write (other versions, garbage).
class RawDb {
 public:
  explicit RawDb(const std::string& path,
                 StoreResources resources = NewStoreResources()) {
    rocksdb::DB* db = nullptr;
    rocksdb::Status s =
        rocksdb::DB::Open(MakeDBOptions(resources, nullptr), path,
                          MakeFamilyDescriptors(resources), &handles_, &db);
    EXPECT_TRUE(s.ok()) << s.ToString();
    db_.reset(db);
  }
  ~RawDb() {
    for (auto* handle : handles_) {
      db_->DestroyColumnFamilyHandle(handle).PermitUncheckedError();
    }
  }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  bool ok() const { return db_ != nullptr; }
  rocksdb::DB* db() const { return db_.get(); }
  rocksdb::ColumnFamilyHandle* handle(Family family) const {
    return handles_[static_cast<size_t>(family)];
  }
  void Put(Family family, const std::string& key, const std::string& value) {
    rocksdb::Status s =
        db_->Put(rocksdb::WriteOptions(), handle(family), key, value);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  void Delete(Family family, const std::string& key) {
    rocksdb::Status s =
        db_->Delete(rocksdb::WriteOptions(), handle(family), key);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  std::optional<std::string> Get(Family family, const std::string& key) {
    std::string value;
    rocksdb::Status s =
        db_->Get(rocksdb::ReadOptions(), handle(family), key, &value);
    if (s.IsNotFound()) return std::nullopt;
    EXPECT_TRUE(s.ok()) << s.ToString();
    return value;
  }

 private:
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  std::unique_ptr<rocksdb::DB> db_;
};

// Plants `version` as the store's format_version.
inline void SetFormatVersion(RawDb& raw, uint32_t version) {
  v1::MetaFormat format;
  format.set_format_version(version);
  raw.Put(Family::kMeta, std::string(kFormatVersionKey),
          format.SerializeAsString());
}

inline std::unique_ptr<Store> OpenStore(const std::string& path,
                                        bool sync = true,
                                        rocksdb::Env* env = nullptr) {
  StoreOptions options;
  options.path = path;
  options.sync = sync;
  options.env = env;
  StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

// A store at `dir` holding `value`, planted raw in `jobs` under job id
// `key_id`: for values the Store API would not write.
inline std::unique_ptr<Store> StoreWithJobsValue(const ScopedTempDir& dir,
                                                 uint64_t key_id,
                                                 const std::string& value) {
  if (OpenStore(dir.Path("db")) == nullptr) return nullptr;  // made, closed
  {
    RawDb raw(dir.Path("db"));
    raw.Put(Family::kJobs, EncodeJobId(key_id), value);
  }
  return OpenStore(dir.Path("db"));
}

// The recovery scan reports corruption in `jobs`.
inline void ExpectCorruptJobs(const Store& store) {
  Status s = store.ScanJobs([](const v1::JobRecord&) { return true; });
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.ToString();
  EXPECT_NE(s.message().find("family jobs"), std::string::npos) << s.message();
}

inline Status CommitOne(Store& store, WriteBatch batch) {
  std::vector<WriteBatch> batches;
  batches.push_back(std::move(batch));
  return store.Commit(batches);
}

// Adds a page of one record to `batch`.
inline void PutJob(WriteBatch& batch, const v1::JobRecord& job) {
  JobPageEncoder page;
  page.Add(job);
  batch.PutJobPage(page);
}

// Stores one job record in a batch of its own.
inline Status CommitJob(Store& store, const v1::JobRecord& job) {
  WriteBatch batch = store.NewBatch();
  PutJob(batch, job);
  return CommitOne(store, std::move(batch));
}

inline v1::JobRecord MakeJob(uint64_t id, uint32_t tenant_id = 1,
                             uint32_t pool_id = 1) {
  v1::JobRecord job;
  job.set_id(id);
  job.set_tenant_id(tenant_id);
  job.set_pool_id(pool_id);
  job.mutable_spec()->set_tenant("tenant-" + std::to_string(tenant_id));
  job.mutable_spec()->set_payload("payload-" + std::to_string(id));
  job.set_enqueued_unix_ms(1700000000000 + static_cast<int64_t>(id));
  return job;
}

inline v1::ReadyEntry MakeReady(uint64_t job_id) {
  v1::ReadyEntry entry;
  entry.set_job_id(job_id);
  entry.set_ready_unix_ms(1700000000000 + static_cast<int64_t>(job_id));
  return entry;
}

inline std::vector<std::pair<ReadyKey, v1::ReadyEntry>> AllReady(
    const Store& store) {
  std::vector<std::pair<ReadyKey, v1::ReadyEntry>> out;
  Status s = store.ScanReady([&](const ReadyKey& k, const v1::ReadyEntry& e) {
    out.emplace_back(k, e);
    return true;
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

inline std::vector<uint64_t> AllJobIdsInReady(const Store& store) {
  std::vector<uint64_t> ids;
  for (const auto& [key, entry] : AllReady(store))
    ids.push_back(entry.job_id());
  return ids;
}

inline bool HasJob(const Store& store, uint64_t id) {
  StatusOr<std::optional<v1::JobRecord>> job = store.GetJob(id);
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  return job.ok() && job->has_value();
}

}  // namespace fairq::store

#endif  // FAIRQ_STORE_STORE_TEST_UTIL_H_
