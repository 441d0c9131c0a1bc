// JobTable's index holds slot numbers and hashes them through the id in
// each slot: lookups, overwrites, erasure with slot reuse, growth past
// several rehashes, and iteration must all see the right job.
#include "server/broker/job_table.h"

#include <map>

#include <gtest/gtest.h>

namespace fairq::server {
namespace {

JobMeta Meta(uint64_t id) {
  JobMeta meta;
  meta.seq = id * 10;
  meta.tenant = static_cast<uint32_t>(id % 7);
  return meta;
}

TEST(JobTableTest, FindsEachJobThroughGrowthErasureAndSlotReuse) {
  JobTable table;
  std::map<uint64_t, uint64_t> live;  // id -> seq
  for (uint64_t id = 1; id <= 50'000; ++id) {  // several rehashes
    table.Insert(id, Meta(id));
    live[id] = id * 10;
  }
  for (uint64_t id = 1; id <= 50'000; id += 3) {
    table.Erase(id);
    live.erase(id);
  }
  for (uint64_t id = 100'001; id <= 110'000; ++id) {  // reuses freed slots
    table.Insert(id, Meta(id));
    live[id] = id * 10;
  }
  table.Insert(2, Meta(999));  // an overwrite keeps one entry
  live[2] = 9990;

  EXPECT_EQ(table.size(), live.size());
  for (const auto& [id, seq] : live) {
    const JobMeta* found = table.Find(id);
    ASSERT_NE(found, nullptr) << id;
    EXPECT_EQ(found->seq, seq) << id;
  }
  EXPECT_EQ(table.Find(1), nullptr);
  EXPECT_EQ(table.Find(50'001), nullptr);

  std::map<uint64_t, uint64_t> visited;
  table.ForEach([&](uint64_t id, JobMeta& meta) { visited[id] = meta.seq; });
  EXPECT_EQ(visited, live);
}

TEST(JobTableTest, ErasingDropsTheLastError) {
  JobTable table;
  table.Insert(5, Meta(5));
  table.SetLastError(5, "boom");
  EXPECT_EQ(table.LastError(5), "boom");
  table.Erase(5);
  table.Insert(5, Meta(5));
  EXPECT_EQ(table.LastError(5), "");
}

}  // namespace
}  // namespace fairq::server
