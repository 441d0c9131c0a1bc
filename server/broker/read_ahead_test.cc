#include "server/broker/read_ahead.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "store/store_test_util.h"

namespace fairq::server {
namespace {

TEST(ReadAheadTest, ReadsTheRequestedRangesInOrder) {
  testing::ScopedTempDir dir;
  auto store = store::OpenStore(dir.Path("db"));
  ASSERT_NE(store, nullptr);
  {
    store::WriteBatch batch = store->NewBatch();
    for (uint64_t id = 1; id <= 50; ++id)
      store::PutJob(batch, store::MakeJob(id));
    ASSERT_TRUE(store::CommitOne(*store, std::move(batch)).ok());

    std::mutex mu;
    std::condition_variable read;
    int ranges_done = 0;
    ReadAhead ahead(store.get(), [&] {
      std::lock_guard<std::mutex> lock(mu);
      ++ranges_done;
      read.notify_all();
    });
    ahead.Request({10, 15});
    ahead.Request({40, 60});  // past the last job: what there is
    {
      std::unique_lock<std::mutex> lock(mu);
      ASSERT_TRUE(read.wait_for(lock, std::chrono::seconds(10),
                                [&] { return ranges_done == 2; }));
    }
    ReadAhead::Taken taken = ahead.Take();
    EXPECT_TRUE(taken.unread.empty());
    std::vector<uint64_t> ids;
    for (const v1::JobRecordWithEncodedSpec& record : taken.records) {
      ids.push_back(record.id());
      EXPECT_EQ(record.spec(),
                store::MakeJob(record.id()).spec().SerializeAsString());
    }
    EXPECT_EQ(ids, (std::vector<uint64_t>{10, 11, 12, 13, 14, 40, 41, 42, 43,
                                          44, 45, 46, 47, 48, 49, 50}));
    EXPECT_TRUE(ahead.Take().records.empty());
  }
}

// A read stops once its specs pass kMaxRangeBytes; the rest of its range
// is handed back unread, for the planner to ask for again.
TEST(ReadAheadTest, ARangePastItsByteBudgetIsHandedBackUnreadFromThere) {
  testing::ScopedTempDir dir;
  auto store = store::OpenStore(dir.Path("db"));
  ASSERT_NE(store, nullptr);
  store::WriteBatch batch = store->NewBatch();
  for (uint64_t id = 1; id <= 3; ++id) {
    v1::JobRecord job = store::MakeJob(id);
    job.mutable_spec()->set_payload(
        std::string(ReadAhead::kMaxRangeBytes / 2 + 1, 'x'));
    store::PutJob(batch, job);
  }
  ASSERT_TRUE(store::CommitOne(*store, std::move(batch)).ok());
  std::mutex mu;
  std::condition_variable read;
  bool done = false;
  ReadAhead ahead(store.get(), [&] {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    read.notify_all();
  });
  ASSERT_TRUE(ahead.Request({1, 10}));
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(
        read.wait_for(lock, std::chrono::seconds(10), [&] { return done; }));
  }
  ReadAhead::Taken taken = ahead.Take();
  ASSERT_EQ(taken.records.size(), 2u);
  ASSERT_EQ(taken.unread.size(), 1u);
  EXPECT_EQ(taken.unread[0].begin, 3u);
  EXPECT_EQ(taken.unread[0].end, 10u);
}

}  // namespace
}  // namespace fairq::server
