#include "store/store.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "rocksdb/perf_context.h"
#include "store/store_test_util.h"

namespace fairq::store {
namespace {

using ::google::protobuf::util::MessageDifferencer;

// One record of every kind, written in one batch.
struct Fixture {
  v1::JobRecord job = MakeJob(7, 3, 2);
  ReadyKey ready_key{3, 2, -5, 99};
  v1::ReadyEntry ready = MakeReady(7);
  ScheduledKey scheduled_key{-1234, 8};
  v1::ScheduledEntry scheduled;
  v1::LeaseRecord lease;
  v1::DeadRecord dead;
  v1::TenantRecord tenant;
  v1::IdempotencyRecord idempotency;
  v1::PoolRecord pool;
  v1::IdReservation reservation;

  Fixture() {
    (*job.mutable_spec()->mutable_labels())["team"] = "render";
    job.mutable_spec()->set_priority(-5);
    scheduled.set_attempts(2);
    scheduled.set_last_error("timeout");
    lease.set_token(42);
    lease.set_deadline_unix_ms(1700000030000);
    lease.set_attempt(1);
    lease.set_worker_id("w-1");
    dead.set_attempts(5);
    dead.set_last_error("boom");
    tenant.set_id(3);
    tenant.mutable_config()->set_name("acme");
    tenant.mutable_config()->set_weight(2.5);
    idempotency.set_job_id(7);
    idempotency.set_expires_unix_ms(1700086400000);
    pool.set_id(2);
    reservation.set_next_unreserved(4096);
  }

  WriteBatch Batch(const Store& store) const {
    WriteBatch batch = store.NewBatch();
    PutJob(batch, job);
    batch.PutReady(ready_key, ready);
    batch.PutScheduled(scheduled_key, scheduled);
    batch.PutLease(9, lease);
    batch.PutDead(10, dead);
    batch.PutTenant(tenant);
    batch.PutIdempotency(3, "req-1", idempotency);
    batch.PutPool("gpu", pool);
    batch.PutIdReservation(reservation);
    return batch;
  }
};

// Checks that `store` holds exactly the fixture's records.
void ExpectFixture(const Store& store, const Fixture& f) {
  auto job = store.GetJob(7);
  ASSERT_TRUE(job.ok() && job->has_value());
  EXPECT_TRUE(MessageDifferencer::Equals(**job, f.job));
  auto ready = AllReady(store);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].first, f.ready_key);
  EXPECT_TRUE(MessageDifferencer::Equals(ready[0].second, f.ready));
  int seen = 0;
  ASSERT_TRUE(store
                  .ScanScheduled(
                      [&](const ScheduledKey& k, const v1::ScheduledEntry& e) {
                        EXPECT_EQ(k, f.scheduled_key);
                        EXPECT_TRUE(MessageDifferencer::Equals(e, f.scheduled));
                        return ++seen > 0;
                      })
                  .ok());
  ASSERT_TRUE(store
                  .ScanLeases([&](uint64_t id, const v1::LeaseRecord& l) {
                    EXPECT_EQ(id, 9u);
                    EXPECT_TRUE(MessageDifferencer::Equals(l, f.lease));
                    return ++seen > 0;
                  })
                  .ok());
  auto dead = store.GetDead(10);
  ASSERT_TRUE(dead.ok() && dead->has_value());
  EXPECT_TRUE(MessageDifferencer::Equals(**dead, f.dead));
  ASSERT_TRUE(store
                  .ScanTenants([&](const v1::TenantRecord& t) {
                    EXPECT_TRUE(MessageDifferencer::Equals(t, f.tenant));
                    return ++seen > 0;
                  })
                  .ok());
  ASSERT_TRUE(store
                  .ScanIdempotency(0,
                                   [&](uint32_t tenant, const std::string& key,
                                       const v1::IdempotencyRecord& r) {
                                     EXPECT_EQ(tenant, 3u);
                                     EXPECT_EQ(key, "req-1");
                                     EXPECT_TRUE(MessageDifferencer::Equals(
                                         r, f.idempotency));
                                     return ++seen > 0;
                                   })
                  .ok());
  ASSERT_TRUE(
      store
          .ScanPools([&](const std::string& name, const v1::PoolRecord& p) {
            EXPECT_EQ(name, "gpu");
            EXPECT_TRUE(MessageDifferencer::Equals(p, f.pool));
            return ++seen > 0;
          })
          .ok());
  EXPECT_EQ(seen, 5);
  auto reservation = store.GetIdReservation();
  ASSERT_TRUE(reservation.ok() && reservation->has_value());
  EXPECT_EQ((*reservation)->next_unreserved(), 4096u);
}

TEST(StoreTest, FreshStoreIsEmptyAndNotFailed) {
  ScopedTempDir dir;
  auto store = OpenStore(dir.Path("db"));
  ASSERT_NE(store, nullptr);
  EXPECT_FALSE(store->failed());
  EXPECT_TRUE(AllReady(*store).empty());
  auto job = store->GetJob(1);
  ASSERT_TRUE(job.ok());
  EXPECT_FALSE(job->has_value());
  auto reservation = store->GetIdReservation();
  ASSERT_TRUE(reservation.ok());
  EXPECT_FALSE(reservation->has_value());
}

TEST(StoreTest, ReopenKeepsEveryKindOfRecord) {
  ScopedTempDir dir;
  Fixture fixture;
  {
    auto store = OpenStore(dir.Path("db"));
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(CommitOne(*store, fixture.Batch(*store)).ok());
    ExpectFixture(*store, fixture);
  }
  for (int reopen = 0; reopen < 2; ++reopen) {
    auto store = OpenStore(dir.Path("db"));
    ASSERT_NE(store, nullptr);
    ExpectFixture(*store, fixture);
  }
}

TEST(StoreTest, FormatVersionIsWrittenOnCreate) {
  ScopedTempDir dir;
  { ASSERT_NE(OpenStore(dir.Path("db")), nullptr); }
  RawDb raw(dir.Path("db"));
  ASSERT_TRUE(raw.ok());
  auto value = raw.Get(Family::kMeta, std::string(kFormatVersionKey));
  ASSERT_TRUE(value.has_value());
  v1::MetaFormat format;
  ASSERT_TRUE(format.ParseFromString(*value));
  EXPECT_EQ(format.format_version(), kFormatVersion);
}

TEST(StoreTest, ScanReadyReturnsTenantPoolPriorityThenArrivalOrder) {
  ScopedTempDir dir;
  auto store = OpenStore(dir.Path("db"), /*sync=*/false);
  ASSERT_NE(store, nullptr);
  std::vector<ReadyKey> keys;
  for (uint32_t tenant : {2u, 1u, 300u}) {
    for (uint32_t pool : {1u, 0u}) {
      for (int32_t priority : {0, 1000, -1000, 5}) {
        for (uint64_t seq : {9u, 1u})
          keys.push_back({tenant, pool, priority, seq});
      }
    }
  }
  std::vector<ReadyKey> shuffled = keys;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(1));
  WriteBatch batch = store->NewBatch();
  for (size_t i = 0; i < shuffled.size(); ++i) {
    batch.PutReady(shuffled[i], MakeReady(i));
  }
  ASSERT_TRUE(CommitOne(*store, std::move(batch)).ok());

  std::sort(keys.begin(), keys.end(), [](const ReadyKey& a, const ReadyKey& b) {
    return std::tuple(a.tenant_id, a.pool_id, -a.priority, a.seq) <
           std::tuple(b.tenant_id, b.pool_id, -b.priority, b.seq);
  });
  std::vector<ReadyKey> scanned;
  for (const auto& [key, entry] : AllReady(*store)) scanned.push_back(key);
  EXPECT_EQ(scanned, keys);
}

TEST(StoreTest, ScanScheduledReturnsDueTimeOrderIncludingNegativeTimes) {
  ScopedTempDir dir;
  auto store = OpenStore(dir.Path("db"), /*sync=*/false);
  ASSERT_NE(store, nullptr);
  const std::vector<ScheduledKey> ordered = {
      {INT64_MIN, 5}, {-1000, 1}, {-1, 9}, {0, 0}, {0, 3}, {1700000000000, 2}};
  WriteBatch batch = store->NewBatch();
  for (auto it = ordered.rbegin(); it != ordered.rend(); ++it) {
    batch.PutScheduled(*it, v1::ScheduledEntry());
  }
  ASSERT_TRUE(CommitOne(*store, std::move(batch)).ok());
  std::vector<ScheduledKey> scanned;
  ASSERT_TRUE(store
                  ->ScanScheduled(
                      [&](const ScheduledKey& k, const v1::ScheduledEntry&) {
                        scanned.push_back(k);
                        return true;
                      })
                  .ok());
  EXPECT_EQ(scanned, ordered);
}

TEST(StoreTest, ScanDeadPagesAfterJobIdAndVisitorCanStop) {
  ScopedTempDir dir;
  auto store = OpenStore(dir.Path("db"), /*sync=*/false);
  ASSERT_NE(store, nullptr);
  WriteBatch batch = store->NewBatch();
  for (uint64_t id : {300u, 5u, 70000u, 6u, 1u}) {
    batch.PutDead(id, v1::DeadRecord());
  }
  batch.PutDead(UINT64_MAX, v1::DeadRecord());
  ASSERT_TRUE(CommitOne(*store, std::move(batch)).ok());

  auto page = [&](uint64_t after, size_t limit) {
    std::vector<uint64_t> ids;
    Status s = store->ScanDead(after, [&](uint64_t id, const v1::DeadRecord&) {
      ids.push_back(id);
      return ids.size() < limit;
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return ids;
  };
  EXPECT_EQ(page(0, 3), (std::vector<uint64_t>{1, 5, 6}));
  EXPECT_EQ(page(6, 3), (std::vector<uint64_t>{300, 70000, UINT64_MAX}));
  EXPECT_EQ(page(5, 100), (std::vector<uint64_t>{6, 300, 70000, UINT64_MAX}));
  EXPECT_TRUE(page(UINT64_MAX, 100).empty());
}

TEST(StoreTest, DeletesRemoveRecordsAndLaterBatchesWin) {
  ScopedTempDir dir;
  auto store = OpenStore(dir.Path("db"));
  ASSERT_NE(store, nullptr);
  const ReadyKey rk{1, 1, 0, 1};
  const ScheduledKey sk{100, 1};
  WriteBatch put = store->NewBatch();
  PutJob(put, MakeJob(1));
  put.PutReady(rk, MakeReady(1));
  put.PutScheduled(sk, v1::ScheduledEntry());
  put.PutLease(1, v1::LeaseRecord());
  put.PutDead(1, v1::DeadRecord());
  EXPECT_EQ(put.count(), 5u);
  EXPECT_FALSE(put.empty());
  WriteBatch del = store->NewBatch();
  EXPECT_TRUE(del.empty());
  del.DeleteJobPage(1);
  del.DeleteReady(rk);
  del.DeleteScheduled(sk);
  del.DeleteLease(1);
  del.DeleteDead(1);
  std::vector<WriteBatch> batches;
  batches.push_back(std::move(put));
  batches.push_back(store->NewBatch());  // empty batches are skipped
  batches.push_back(std::move(del));
  ASSERT_TRUE(store->Commit(batches).ok());

  EXPECT_FALSE(HasJob(*store, 1));
  EXPECT_TRUE(AllReady(*store).empty());
  auto dead = store->GetDead(1);
  ASSERT_TRUE(dead.ok());
  EXPECT_FALSE(dead->has_value());
  int records = 0;
  auto count = [&](auto&&...) { return ++records > 0; };
  ASSERT_TRUE(store->ScanScheduled(count).ok());
  ASSERT_TRUE(store->ScanLeases(count).ok());
  EXPECT_EQ(records, 0);
}

// The leases family's memtable keeps writes in arrival order until it is
// scanned or flushed (column_families.cc): a scan must still see ids in
// order, each with its newest write and none deleted, from the live
// memtable, after the log is replayed into a new one, and from a flushed
// file.
TEST(StoreTest, ScanLeasesSeesTheNewestWriteOfEachIdInIdOrder) {
  ScopedTempDir dir;
  auto store = OpenStore(dir.Path("db"), /*sync=*/false);
  ASSERT_NE(store, nullptr);
  auto lease = [](uint64_t token) {
    v1::LeaseRecord record;
    record.set_token(token);
    return record;
  };
  WriteBatch first = store->NewBatch();
  for (uint64_t id : {70u, 3u, 500u, 9u, 41u}) first.PutLease(id, lease(id));
  first.DeleteLease(9);
  ASSERT_TRUE(CommitOne(*store, std::move(first)).ok());
  WriteBatch second = store->NewBatch();
  second.PutLease(3, lease(1003));  // leased again
  second.DeleteLease(500);
  second.PutLease(9, lease(1009));  // a put after its delete
  ASSERT_TRUE(CommitOne(*store, std::move(second)).ok());

  auto scan = [](const Store& s) {
    std::vector<std::pair<uint64_t, uint64_t>> scanned;
    EXPECT_TRUE(s.ScanLeases([&](uint64_t id, const v1::LeaseRecord& l) {
                   scanned.emplace_back(id, l.token());
                   return true;
                 }).ok());
    return scanned;
  };
  const std::vector<std::pair<uint64_t, uint64_t>> want = {
      {3, 1003}, {9, 1009}, {41, 41}, {70, 70}};
  EXPECT_EQ(scan(*store), want) << "live memtable";
  store.reset();
  store = OpenStore(dir.Path("db"), /*sync=*/false);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(scan(*store), want) << "after the log is replayed";
  store.reset();
  {
    RawDb raw(dir.Path("db"));
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE(
        raw.db()
            ->Flush(rocksdb::FlushOptions(), raw.handle(Family::kLeases))
            .ok());
  }
  store = OpenStore(dir.Path("db"), /*sync=*/false);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(scan(*store), want) << "from a flushed file";
}

TEST(StoreTest, ScanJobsReturnsEveryJobInIdOrder) {
  ScopedTempDir dir;
  auto store = OpenStore(dir.Path("db"), /*sync=*/false);
  ASSERT_NE(store, nullptr);
  WriteBatch batch = store->NewBatch();
  for (uint64_t id : {70000u, 3u, 256u, 1u}) PutJob(batch, MakeJob(id));
  batch.PutDead(3, v1::DeadRecord());  // dead jobs keep their record
  ASSERT_TRUE(CommitOne(*store, std::move(batch)).ok());
  std::vector<uint64_t> ids;
  ASSERT_TRUE(store
                  ->ScanJobs([&](const v1::JobRecord& job) {
                    ids.push_back(job.id());
                    EXPECT_EQ(job.spec().payload(),
                              "payload-" + std::to_string(job.id()));
                    return true;
                  })
                  .ok());
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 3, 256, 70000}));
}

TEST(StoreTest, ScanJobsRefusesARecordFiledUnderAnotherId) {
  ScopedTempDir dir;
  auto store = StoreWithJobsValue(dir, 8, MakeJob(9).SerializeAsString());
  ASSERT_NE(store, nullptr);
  ExpectCorruptJobs(*store);
}

TEST(StoreTest, GetJobsReturnsOneResultPerIdInOrder) {
  ScopedTempDir dir;
  auto store = OpenStore(dir.Path("db"));
  ASSERT_NE(store, nullptr);
  WriteBatch batch = store->NewBatch();
  for (uint64_t id : {2u, 4u, 6u}) PutJob(batch, MakeJob(id));
  ASSERT_TRUE(CommitOne(*store, std::move(batch)).ok());
  auto jobs = store->GetJobs({6, 1, 2, 2, 5});
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 5u);
  EXPECT_EQ((*jobs)[0]->id(), 6u);
  EXPECT_FALSE((*jobs)[1].has_value());
  EXPECT_EQ((*jobs)[2]->id(), 2u);
  EXPECT_EQ((*jobs)[3]->id(), 2u);
  EXPECT_FALSE((*jobs)[4].has_value());
  auto none = store->GetJobs({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// Jobs 1-260 with every third deleted, and 100-109 deleted too: the first
// 200 in a table file, the rest and those deletes in the memtable.
std::unique_ptr<Store> StoreWithJobsInTableAndMemtable(
    const ScopedTempDir& dir) {
  auto batch_of = [](Store& store, uint64_t from, uint64_t to) {
    WriteBatch batch = store.NewBatch();
    for (uint64_t id = from; id <= to; ++id) {
      if (id % 3 == 0) {
        batch.DeleteJobPage(id);
      } else {
        PutJob(batch, MakeJob(id));
      }
    }
    return batch;
  };
  {
    auto store = OpenStore(dir.Path("db"));
    if (store == nullptr || !CommitOne(*store, batch_of(*store, 1, 200)).ok()) {
      return nullptr;
    }
  }
  // Reopening flushes the first 200 to a table file.
  auto store = OpenStore(dir.Path("db"));
  if (store == nullptr) return nullptr;
  WriteBatch more = batch_of(*store, 201, 260);
  for (uint64_t id = 100; id < 110; ++id) more.DeleteJobPage(id);
  if (!CommitOne(*store, std::move(more)).ok()) return nullptr;
  return store;
}

// GetJobs answers as GetJob does, for records in a table file and in the
// memtable, deletes in both, and ids repeated, missing or out of order.
TEST(StoreTest, GetJobsAgreesWithGetJobForAnyMixOfIds) {
  ScopedTempDir dir;
  auto store = StoreWithJobsInTableAndMemtable(dir);
  ASSERT_NE(store, nullptr);

  std::mt19937_64 random(7);
  for (int query = 0; query < 200; ++query) {
    // Clusters of nearby ids, some repeated, around a few random centres.
    std::vector<uint64_t> ids;
    const size_t size = 1 + random() % 40;
    uint64_t centre = random() % 280;
    for (size_t i = 0; i < size; ++i) {
      if (random() % 8 == 0) centre = random() % 280;
      ids.push_back(centre + random() % 7);
    }
    auto jobs = store->GetJobs(ids);
    ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
    ASSERT_EQ(jobs->size(), ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      auto one = store->GetJob(ids[i]);
      ASSERT_TRUE(one.ok());
      ASSERT_EQ((*jobs)[i].has_value(), one->has_value()) << "id " << ids[i];
      if (one->has_value()) {
        EXPECT_TRUE(MessageDifferencer::Equals(*(*jobs)[i], **one))
            << "id " << ids[i];
      }
    }
  }
}

// ReadJobs returns what GetJob would for each id of its range, in order,
// across the table file and the memtable, with each spec still encoded.
TEST(StoreTest, ReadJobsReturnsTheStoredRecordsOfItsRangeInOrder) {
  ScopedTempDir dir;
  auto store = StoreWithJobsInTableAndMemtable(dir);
  ASSERT_NE(store, nullptr);
  for (auto [begin, end] :
       std::vector<std::pair<uint64_t, uint64_t>>{{0, 300},
                                                  {95, 115},
                                                  {190, 210},
                                                  {1, 2},
                                                  {3, 4},
                                                  {50, 50},
                                                  {250, 1000}}) {
    SCOPED_TRACE(std::to_string(begin) + "-" + std::to_string(end));
    auto read = store->ReadJobs(begin, end, size_t{1} << 20);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    const std::vector<v1::JobRecordWithEncodedSpec>& jobs = read->jobs;
    size_t next = 0;
    for (uint64_t id = begin; id < end; ++id) {
      auto one = store->GetJob(id);
      ASSERT_TRUE(one.ok());
      if (!one->has_value()) continue;
      ASSERT_LT(next, jobs.size()) << "id " << id;
      EXPECT_TRUE(jobs[next].has_spec());
      v1::JobRecord decoded;
      ASSERT_TRUE(decoded.ParseFromString(jobs[next++].SerializeAsString()));
      EXPECT_TRUE(MessageDifferencer::Equals(decoded, **one)) << "id " << id;
    }
    EXPECT_EQ(next, jobs.size());
  }
  // Specs of ids 10-99 encode to 22 bytes each ("tenant-1", "payload-<id>",
  // two bytes of tag and length each). Past 50 bytes, the third record is
  // the last; the first comes whatever the budget.
  ASSERT_EQ(MakeJob(10).spec().ByteSizeLong(), 22u);
  auto cut = store->ReadJobs(10, 100, 50);
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  ASSERT_EQ(cut->jobs.size(), 3u);
  EXPECT_EQ(cut->jobs.back().id(), 13u);  // 12 was deleted
  auto one = store->ReadJobs(10, 100, 0);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->jobs.size(), 1u);
}

// The read-ahead's view of a job record must read what JobRecord writes:
// the same fields under the same numbers and names, its spec as bytes
// (both are length-delimited on the wire). A field added to one only would
// be dropped or misread by the other.
TEST(StoreTest, TheEncodedSpecViewHasJobRecordsFields) {
  const auto* record = v1::JobRecord::descriptor();
  const auto* view = v1::JobRecordWithEncodedSpec::descriptor();
  ASSERT_EQ(view->field_count(), record->field_count());
  for (int i = 0; i < view->field_count(); ++i) {
    const auto* field = view->field(i);
    SCOPED_TRACE(field->name());
    const auto* same = record->FindFieldByNumber(field->number());
    ASSERT_NE(same, nullptr);
    EXPECT_EQ(same->name(), field->name());
    EXPECT_EQ(same->is_repeated(), field->is_repeated());
    if (field->name() == "spec") {
      EXPECT_EQ(same->message_type(), v1::JobSpec::descriptor());
      EXPECT_EQ(field->type(), google::protobuf::FieldDescriptor::TYPE_BYTES);
    } else {
      EXPECT_EQ(same->type(), field->type());
    }
  }
}

// The counters stop on the thread that turns them off, and only there.
TEST(StoreTest, PerfCountersStopOnTheThreadThatTurnsThemOff) {
  ScopedTempDir dir;
  auto store = OpenStore(dir.Path("db"));
  ASSERT_NE(store, nullptr);
  WriteBatch batch = store->NewBatch();
  v1::IdReservation reservation;
  reservation.set_next_unreserved(7);
  batch.PutIdReservation(reservation);
  ASSERT_TRUE(CommitOne(*store, std::move(batch)).ok());
  auto memtable_gets = [&] {
    rocksdb::get_perf_context()->Reset();
    auto read = store->GetIdReservation();
    EXPECT_TRUE(read.ok() && read->has_value());
    return rocksdb::get_perf_context()->get_from_memtable_count;
  };
  std::thread([&] {
    EXPECT_GT(memtable_gets(), 0u);
    DisablePerfCountersOnThisThread();
    EXPECT_EQ(memtable_gets(), 0u);
  }).join();
  std::thread([&] { EXPECT_GT(memtable_gets(), 0u); }).join();
}

TEST(StoreTest, ScanIdempotencySkipsExpiredRecords) {
  ScopedTempDir dir;
  auto store = OpenStore(dir.Path("db"));
  ASSERT_NE(store, nullptr);
  WriteBatch batch = store->NewBatch();
  v1::IdempotencyRecord record;
  for (int64_t expires : {999, 1000, 1001}) {
    record.set_job_id(static_cast<uint64_t>(expires));
    record.set_expires_unix_ms(expires);
    batch.PutIdempotency(1, "k" + std::to_string(expires), record);
  }
  ASSERT_TRUE(CommitOne(*store, std::move(batch)).ok());
  std::vector<std::string> keys;
  ASSERT_TRUE(store
                  ->ScanIdempotency(1000,
                                    [&](uint32_t, const std::string& k,
                                        const v1::IdempotencyRecord&) {
                                      keys.push_back(k);
                                      return true;
                                    })
                  .ok());
  EXPECT_EQ(keys, (std::vector<std::string>{"k1000", "k1001"}));
}

TEST(StoreTest, RefusesAnotherFormatVersion) {
  ScopedTempDir dir;
  { ASSERT_NE(OpenStore(dir.Path("db")), nullptr); }
  {
    RawDb raw(dir.Path("db"));
    ASSERT_TRUE(raw.ok());
    SetFormatVersion(raw, kFormatVersion + 1);
  }
  StoreOptions options;
  options.path = dir.Path("db");
  auto store = Store::Open(options);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("format_version " +
                                          std::to_string(kFormatVersion + 1)),
            std::string::npos)
      << store.status().ToString();
}

TEST(StoreTest, RefusesDataWithoutFormatVersion) {
  ScopedTempDir dir;
  {
    auto store = OpenStore(dir.Path("db"));
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(CommitJob(*store, MakeJob(1)).ok());
  }
  {
    RawDb raw(dir.Path("db"));
    raw.Delete(Family::kMeta, std::string(kFormatVersionKey));
  }
  StoreOptions options;
  options.path = dir.Path("db");
  auto store = Store::Open(options);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
}

TEST(StoreTest, EmptyDatabaseWithoutFormatVersionIsInitialized) {
  ScopedTempDir dir;
  {
    RawDb raw(dir.Path("db"));
  }  // as if fairqd crashed right after creating it
  auto store = OpenStore(dir.Path("db"));
  ASSERT_NE(store, nullptr);
}

TEST(StoreTest, RefusesUnknownColumnFamily) {
  ScopedTempDir dir;
  { ASSERT_NE(OpenStore(dir.Path("db")), nullptr); }
  {
    RawDb raw(dir.Path("db"));
    rocksdb::ColumnFamilyHandle* extra = nullptr;
    ASSERT_TRUE(raw.db()
                    ->CreateColumnFamily(rocksdb::ColumnFamilyOptions(),
                                         "from_the_future", &extra)
                    .ok());
    ASSERT_TRUE(raw.db()->DestroyColumnFamilyHandle(extra).ok());
  }
  StoreOptions options;
  options.path = dir.Path("db");
  auto store = Store::Open(options);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("from_the_future"),
            std::string::npos);
}

TEST(StoreTest, UnopenablePathIsUnavailableWithRocksDbReason) {
  ScopedTempDir dir;
  const std::string file = dir.path() + "/not_a_dir";
  std::ofstream(file) << "x";
  StoreOptions options;
  options.path = file + "/db";
  auto store = Store::Open(options);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(store.status().message().find("IO error"), std::string::npos)
      << store.status().ToString();
}

// RocksDB's LOCK file keeps a second fairqd off a data directory in use.
TEST(StoreTest, SecondOpenOfALockedStoreIsUnavailable) {
  ScopedTempDir dir;
  auto first = OpenStore(dir.Path("db"));
  ASSERT_NE(first, nullptr);
  StoreOptions options;
  options.path = dir.Path("db");
  auto second = Store::Open(options);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find("lock"), std::string::npos)
      << second.status().ToString();
}

TEST(StoreTest, CorruptValueIsInternalNamingFamilyAndKey) {
  ScopedTempDir dir;
  { ASSERT_NE(OpenStore(dir.Path("db")), nullptr); }
  {
    RawDb raw(dir.Path("db"));
    raw.Put(Family::kReady, EncodeReadyKey({1, 2, 3, 4}), "\xff\xff\xff");
    raw.Put(Family::kJobs, EncodeJobId(5), "\x0a\xff");
  }
  auto store = OpenStore(dir.Path("db"));
  ASSERT_NE(store, nullptr);
  Status s = store->ScanReady(
      [](const ReadyKey&, const v1::ReadyEntry&) { return true; });
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("family ready"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("key 00000001000000027ffffffc0000000000000004"),
            std::string::npos)
      << s.message();
  auto job = store->GetJob(5);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), StatusCode::kInternal);
  EXPECT_NE(job.status().message().find("family jobs"), std::string::npos);
  auto jobs = store->GetJobs({4, 5});
  EXPECT_EQ(jobs.status().code(), StatusCode::kInternal);
}

TEST(StoreTest, MalformedKeyIsInternal) {
  ScopedTempDir dir;
  { ASSERT_NE(OpenStore(dir.Path("db")), nullptr); }
  {
    RawDb raw(dir.Path("db"));
    raw.Put(Family::kLeases, "short", v1::LeaseRecord().SerializeAsString());
  }
  auto store = OpenStore(dir.Path("db"));
  ASSERT_NE(store, nullptr);
  Status s =
      store->ScanLeases([](uint64_t, const v1::LeaseRecord&) { return true; });
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("corrupt key in family leases"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace fairq::store
