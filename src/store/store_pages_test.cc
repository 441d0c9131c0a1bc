// Job pages in the store: reads by id and by range across pages in table
// files and memtables, done marks at recovery, and format-1 records.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/store.h"
#include "store/store_test_util.h"

namespace fairq::store {
namespace {

void PutPage(WriteBatch& batch, uint64_t first, uint64_t last) {
  JobPageEncoder page;
  for (uint64_t id = first; id <= last; ++id) page.Add(MakeJob(id));
  batch.PutJobPage(page);
}

// Pages 1-5 (in a table file), 6-8 and 10 alone (in the memtable).
std::unique_ptr<Store> StoreWithPages(const ScopedTempDir& dir) {
  {
    auto store = OpenStore(dir.Path("db"));
    if (store == nullptr) return nullptr;
    WriteBatch batch = store->NewBatch();
    PutPage(batch, 1, 5);
    if (!CommitOne(*store, std::move(batch)).ok()) return nullptr;
  }
  auto store = OpenStore(dir.Path("db"));  // flushes the first page
  if (store == nullptr) return nullptr;
  WriteBatch batch = store->NewBatch();
  PutPage(batch, 6, 8);
  PutJob(batch, MakeJob(10));
  if (!CommitOne(*store, std::move(batch)).ok()) return nullptr;
  return store;
}

struct Scanned {
  std::vector<uint64_t> ids;
  std::vector<std::vector<uint64_t>> pages;  // first, end, live
};

Scanned ScanAll(const Store& store) {
  Scanned scanned;
  Status s = store.ScanJobs(
      [&](const v1::JobRecord& job) {
        scanned.ids.push_back(job.id());
        EXPECT_EQ(job.spec().payload(), "payload-" + std::to_string(job.id()));
        return true;
      },
      [&](const Store::StoredPage& page) {
        scanned.pages.push_back({page.first_id, page.end_id, page.live});
      });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return scanned;
}

std::vector<uint64_t> Ids(const Store::JobsRead& read) {
  std::vector<uint64_t> ids;
  for (const auto& job : read.jobs) ids.push_back(job.id());
  return ids;
}

TEST(StorePagesTest, ReadsEachRecordByIdOutOfItsPage) {
  ScopedTempDir dir;
  auto store = StoreWithPages(dir);
  ASSERT_NE(store, nullptr);
  auto jobs = store->GetJobs({3, 6, 8, 9, 10, 0, 11, 1, 5});
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  std::vector<uint64_t> found;
  for (const auto& job : *jobs) found.push_back(job ? job->id() : 0);
  EXPECT_EQ(found, (std::vector<uint64_t>{3, 6, 8, 0, 10, 0, 0, 1, 5}));
  auto one = store->GetJob(4);
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ((*one)->spec().payload(), "payload-4");
}

TEST(StorePagesTest, ReadJobsTakesPartsOfPages) {
  ScopedTempDir dir;
  auto store = StoreWithPages(dir);
  ASSERT_NE(store, nullptr);
  auto read = store->ReadJobs(3, 7, 1 << 20);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(Ids(*read), (std::vector<uint64_t>{3, 4, 5, 6}));
  EXPECT_EQ(read->next_id, 7u);
  read = store->ReadJobs(7, 100, 1 << 20);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(Ids(*read), (std::vector<uint64_t>{7, 8, 10}));
  // Each spec is 21 bytes ("tenant-1", "payload-N", tags): the second
  // passes 40, and the read stops after it.
  read = store->ReadJobs(2, 100, 40);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(Ids(*read), (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(read->next_id, 4u);
}

TEST(StorePagesTest, ScanSkipsJobsMarkedDoneAndCountsEachPage) {
  ScopedTempDir dir;
  auto store = StoreWithPages(dir);
  ASSERT_NE(store, nullptr);
  WriteBatch batch = store->NewBatch();
  for (uint64_t id : {2u, 4u, 7u}) batch.PutJobDone(id);
  ASSERT_TRUE(CommitOne(*store, std::move(batch)).ok());
  Scanned scanned = ScanAll(*store);
  EXPECT_EQ(scanned.ids, (std::vector<uint64_t>{1, 3, 5, 6, 8, 10}));
  EXPECT_EQ(scanned.pages,
            (std::vector<std::vector<uint64_t>>{{1, 6, 3}, {6, 9, 2}}));
}

TEST(StorePagesTest, APageGoesWithItsMarks) {
  ScopedTempDir dir;
  auto store = StoreWithPages(dir);
  ASSERT_NE(store, nullptr);
  WriteBatch marks = store->NewBatch();
  for (uint64_t id : {6u, 7u}) marks.PutJobDone(id);
  ASSERT_TRUE(CommitOne(*store, std::move(marks)).ok());
  WriteBatch last = store->NewBatch();
  last.DeleteJobPage(6);
  last.DeleteJobsDone(6, 9);
  ASSERT_TRUE(CommitOne(*store, std::move(last)).ok());
  EXPECT_EQ(ScanAll(*store).ids, (std::vector<uint64_t>{1, 2, 3, 4, 5, 10}));
  // The marks are gone: records stored under those ids again are seen.
  WriteBatch again = store->NewBatch();
  PutPage(again, 6, 7);
  ASSERT_TRUE(CommitOne(*store, std::move(again)).ok());
  EXPECT_EQ(ScanAll(*store).ids,
            (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7, 10}));
}

TEST(StorePagesTest, AFormat1StoreIsReadAsItIsAndMarkedFormat2) {
  ScopedTempDir dir;
  { ASSERT_NE(OpenStore(dir.Path("db")), nullptr); }
  {
    RawDb raw(dir.Path("db"));
    ASSERT_TRUE(raw.ok());
    SetFormatVersion(raw, 1);
    for (uint64_t id : {7u, 9u}) {
      raw.Put(Family::kJobs, EncodeJobId(id), MakeJob(id).SerializeAsString());
    }
  }
  auto store = OpenStore(dir.Path("db"));
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(ScanAll(*store).ids, (std::vector<uint64_t>{7, 9}));
  EXPECT_TRUE(ScanAll(*store).pages.empty());
  auto job = store->GetJob(9);
  ASSERT_TRUE(job.ok() && job->has_value());
  EXPECT_EQ((*job)->spec().payload(), "payload-9");
  store.reset();
  RawDb raw(dir.Path("db"));
  v1::MetaFormat format;
  ASSERT_TRUE(format.ParseFromString(
      raw.Get(Family::kMeta, std::string(kFormatVersionKey)).value_or("")));
  EXPECT_EQ(format.format_version(), kFormatVersion);
}

TEST(StorePagesTest, APageOutOfIdOrderIsCorruption) {
  ScopedTempDir dir;
  JobPageEncoder page;
  page.Add(MakeJob(5));
  page.Add(MakeJob(4));
  auto store = StoreWithJobsValue(dir, 5, std::string(page.bytes()));
  ASSERT_NE(store, nullptr);
  ExpectCorruptJobs(*store);
}

// Protobuf keeps the last of two id fields; the page reader reads the
// first. The store refuses the record rather than file it under either.
TEST(StorePagesTest, ARecordWithTwoIdsIsCorruption) {
  ScopedTempDir dir;
  v1::JobRecord other;
  other.set_id(9);
  auto store = StoreWithJobsValue(
      dir, 5, MakeJob(5).SerializeAsString() + other.SerializeAsString());
  ASSERT_NE(store, nullptr);
  ExpectCorruptJobs(*store);
  EXPECT_EQ(store->GetJob(5).status().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace fairq::store
