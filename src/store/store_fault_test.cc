// Fault injection: full disks, torn writes and failing fsyncs. Each test
// closes the failed store while the fault is still armed (so nothing
// buffered can slip out on close), then reopens with a healthy file system
// and checks which batches survived. And failing reads, which must say
// what they were reading.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "store/fault_injection_env.h"
#include "store/store.h"
#include "store/store_test_util.h"

namespace fairq::store {
namespace {

// Job `id` with a ready entry: the shape of one enqueue.
WriteBatch EnqueueBatch(const Store& store, uint64_t id,
                        std::string payload = "") {
  WriteBatch batch = store.NewBatch();
  v1::JobRecord job = MakeJob(id);
  if (!payload.empty()) job.mutable_spec()->set_payload(payload);
  PutJob(batch, job);
  batch.PutReady({1, 1, 0, id}, MakeReady(id));
  return batch;
}

// Puts into every family but meta, so a partial apply would show somewhere.
WriteBatch CrossFamilyBatch(const Store& store, uint64_t id,
                            std::string payload = "") {
  WriteBatch batch = EnqueueBatch(store, id, std::move(payload));
  for (uint64_t seq = 1000; seq < 1050; ++seq) {
    batch.PutReady({2, 1, 0, seq}, MakeReady(id));
  }
  batch.PutScheduled({5000, id}, v1::ScheduledEntry());
  batch.PutLease(id, v1::LeaseRecord());
  batch.PutDead(id + 1, v1::DeadRecord());
  v1::TenantRecord tenant;
  tenant.mutable_config()->set_name("tenant-of-" + std::to_string(id));
  batch.PutTenant(tenant);
  batch.PutIdempotency(1, "key-" + std::to_string(id), v1::IdempotencyRecord());
  return batch;
}

// Counts the records of the families CrossFamilyBatch writes, except jobs.
int CountIndexRecords(const Store& store) {
  int records = static_cast<int>(AllReady(store).size());
  auto count = [&](auto&&...) { return ++records > 0; };
  EXPECT_TRUE(store.ScanScheduled(count).ok());
  EXPECT_TRUE(store.ScanLeases(count).ok());
  EXPECT_TRUE(store.ScanDead(0, count).ok());
  EXPECT_TRUE(store.ScanTenants(count).ok());
  EXPECT_TRUE(store.ScanIdempotency(0, count).ok());
  return records;
}

// Bytes in the write-ahead log files.
uintmax_t WalBytes(const std::string& db) {
  uintmax_t bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(db)) {
    if (entry.path().extension() == ".log") bytes += entry.file_size();
  }
  return bytes;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class StoreFaultTest : public ::testing::TestWithParam<bool> {
 protected:
  bool sync() const { return GetParam(); }
  ScopedTempDir dir_;
  FaultInjectionEnv faults_;
};

TEST_P(StoreFaultTest, FullDiskFailsCommitAndTheStoreStaysFailed) {
  {
    auto store = OpenStore(dir_.Path("db"), sync(), faults_.env());
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(CommitOne(*store, EnqueueBatch(*store, 1)).ok());
    ASSERT_TRUE(CommitOne(*store, EnqueueBatch(*store, 2)).ok());
    EXPECT_FALSE(store->failed());

    faults_.FailAppends(true);
    Status s = CommitOne(*store, CrossFamilyBatch(*store, 3));
    EXPECT_EQ(s.code(), StatusCode::kUnavailable);
    EXPECT_TRUE(Contains(s.message(), "No space")) << s.ToString();
    EXPECT_TRUE(store->failed());

    // Failed for good: no write is even attempted.
    const uint64_t appends = faults_.append_calls();
    s = CommitOne(*store, EnqueueBatch(*store, 4));
    EXPECT_EQ(s.code(), StatusCode::kUnavailable);
    EXPECT_TRUE(Contains(s.message(), "failed state")) << s.ToString();
    EXPECT_EQ(faults_.append_calls(), appends);
    // Reads keep working, for diagnosis and draining.
    EXPECT_TRUE(HasJob(*store, 1));
  }
  faults_.FailAppends(false);
  auto store = OpenStore(dir_.Path("db"));
  ASSERT_NE(store, nullptr);
  EXPECT_FALSE(store->failed());
  EXPECT_TRUE(HasJob(*store, 1));
  EXPECT_TRUE(HasJob(*store, 2));
  EXPECT_FALSE(HasJob(*store, 3));
  EXPECT_FALSE(HasJob(*store, 4));
  EXPECT_EQ(AllJobIdsInReady(*store), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(CountIndexRecords(*store), 2);  // the two ready entries
}

TEST_P(StoreFaultTest, FailureMidCommitWritesNothingAfterTheFailingBatch) {
  {
    auto store = OpenStore(dir_.Path("db"), sync(), faults_.env());
    ASSERT_NE(store, nullptr);
    faults_.FailAppends(true, "POISON");
    std::vector<WriteBatch> batches;
    batches.push_back(EnqueueBatch(*store, 1));
    batches.push_back(EnqueueBatch(*store, 2, "POISON"));
    batches.push_back(EnqueueBatch(*store, 3));
    Status s = store->Commit(batches);
    EXPECT_EQ(s.code(), StatusCode::kUnavailable);
    EXPECT_TRUE(Contains(s.message(), "commit batch 2 of 3")) << s.ToString();
    EXPECT_TRUE(store->failed());
  }
  faults_.FailAppends(false);
  auto store = OpenStore(dir_.Path("db"));
  ASSERT_NE(store, nullptr);
  // Batch 1 reached the log (the page cache) before batch 2 failed; only a
  // power loss could drop it. The caller acknowledged none of the three.
  EXPECT_TRUE(HasJob(*store, 1));
  EXPECT_FALSE(HasJob(*store, 2));
  EXPECT_FALSE(HasJob(*store, 3));
  EXPECT_EQ(AllJobIdsInReady(*store), (std::vector<uint64_t>{1}));
}

// A crash in the middle of write(2) leaves part of the batch's log record on
// disk. Recovery must drop the torn record whole: no family may show any of
// the batch, however many log blocks it spans.
TEST_P(StoreFaultTest, TornWriteOfACrossFamilyBatchLeavesNoneOfIt) {
  {
    auto store = OpenStore(dir_.Path("db"), sync(), faults_.env());
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(CommitOne(*store, EnqueueBatch(*store, 1)).ok());
    faults_.SetTornWrites(true);
    faults_.FailAppends(true);
    // 200 KiB spans several 32 KiB log blocks, so half of it is a prefix of
    // whole fragments plus a cut one.
    Status s = CommitOne(
        *store, CrossFamilyBatch(*store, 7, std::string(200 << 10, 'p')));
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
    EXPECT_TRUE(store->failed());
  }
  EXPECT_GE(faults_.injected_failures(), 1u);
  // The torn half really is in the log for recovery to deal with.
  EXPECT_GT(WalBytes(dir_.Path("db")), uintmax_t{100} << 10);
  faults_.FailAppends(false);
  faults_.SetTornWrites(false);
  auto store = OpenStore(dir_.Path("db"));
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(HasJob(*store, 1));
  EXPECT_FALSE(HasJob(*store, 7));
  EXPECT_EQ(CountIndexRecords(*store), 1);  // job 1's ready entry only
  // The recovered store takes writes again.
  ASSERT_TRUE(CommitOne(*store, CrossFamilyBatch(*store, 9)).ok());
  EXPECT_TRUE(HasJob(*store, 9));
}

// Only meaningful with sync: without it Commit never calls fsync.
TEST(StoreSyncFaultTest, FailedSyncFailsCommitAndTheBatchIsAllOrNothing) {
  ScopedTempDir dir;
  FaultInjectionEnv faults;
  {
    auto store = OpenStore(dir.Path("db"), /*sync=*/true, faults.env());
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(CommitOne(*store, EnqueueBatch(*store, 1)).ok());
    faults.FailSyncs(true);
    Status s = CommitOne(*store, CrossFamilyBatch(*store, 3));
    EXPECT_EQ(s.code(), StatusCode::kUnavailable);
    EXPECT_TRUE(store->failed());
    const uint64_t appends = faults.append_calls();
    EXPECT_EQ(CommitOne(*store, EnqueueBatch(*store, 5)).code(),
              StatusCode::kUnavailable);
    EXPECT_EQ(faults.append_calls(), appends);
  }
  faults.FailSyncs(false);
  auto store = OpenStore(dir.Path("db"));
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(HasJob(*store, 1));
  EXPECT_FALSE(HasJob(*store, 5));
  // The unsynced batch reached the page cache, so it may survive; if it
  // does, it survives whole.
  const int index_records = CountIndexRecords(*store);
  if (HasJob(*store, 3)) {
    EXPECT_EQ(index_records, 1 + 1 + 50 + 5);
  } else {
    EXPECT_EQ(index_records, 1);
  }
}

// A failed read says what it was reading, for GetJob and for a lease's
// GetJobs alike; the store is not failed by it (reads may be retried).
TEST(StoreReadFaultTest, AFailedReadNamesTheFamilyAndTheKey) {
  ScopedTempDir dir;
  FaultInjectionEnv faults;
  {
    auto store = OpenStore(dir.Path("db"), false, faults.env());
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(CommitOne(*store, EnqueueBatch(*store, 42)).ok());
  }
  // Reopening flushes the recovered log to a table file: reads go to disk.
  auto store = OpenStore(dir.Path("db"), false, faults.env());
  ASSERT_NE(store, nullptr);
  faults.FailTableReads(true);
  const std::string where = "read jobs from key 000000000000002a";
  auto one = store->GetJob(42);
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(one.status().message(), where))
      << one.status().ToString();
  // The first id read fails, and is named.
  auto many = store->GetJobs({42, 99});
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(many.status().message(), where))
      << many.status().ToString();
  EXPECT_GT(faults.injected_failures(), 0u);
  EXPECT_FALSE(store->failed());
  faults.FailTableReads(false);
  EXPECT_TRUE(HasJob(*store, 42));
}

INSTANTIATE_TEST_SUITE_P(SyncAndNoSync, StoreFaultTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param_info) {
                           return param_info.param ? "Sync" : "NoSync";
                         });

}  // namespace
}  // namespace fairq::store
