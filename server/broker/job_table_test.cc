// JobTable keeps most jobs in a window of consecutive ids and the rest in
// a hash map: lookups, overwrites, erasure, gaps, ids behind and far ahead
// of the window, compaction and iteration must all see the right job.
#include "server/broker/job_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace fairq::server {
namespace {

JobMeta Meta(uint64_t id) {
  JobMeta meta;
  meta.seq = id * 10;
  meta.tenant = static_cast<uint32_t>(id % 7);
  return meta;
}

// Every job in `live`, and no other, is found and visited with its data.
void ExpectHolds(JobTable& table, const std::map<uint64_t, uint64_t>& live) {
  ASSERT_EQ(table.size(), live.size());
  for (const auto& [id, seq] : live) {
    const JobMeta* found = table.Find(id);
    ASSERT_NE(found, nullptr) << id;
    EXPECT_EQ(found->seq, seq) << id;
  }
  std::map<uint64_t, uint64_t> visited;
  table.ForEach([&](uint64_t id, JobMeta& meta) { visited[id] = meta.seq; });
  EXPECT_EQ(visited, live);
}

// The id of the i-th job kept aside: far ahead of job 1 and of each other,
// so that each goes to the hash map.
uint64_t AsideId(uint64_t i) { return 1'000'000'000 + i * 10'000; }

// A table holding job 1 in its window and `n` jobs aside in its map.
void FillAside(JobTable& table, uint64_t n) {
  table.Insert(1, Meta(1));
  for (uint64_t i = 0; i < n; ++i) table.Insert(AsideId(i), Meta(2));
}

TEST(JobTableTest, FindsEachJobThroughGrowthErasureAndGaps) {
  JobTable table;
  std::map<uint64_t, uint64_t> live;  // id -> seq
  for (uint64_t id = 1; id <= 50'000; ++id) {
    table.Insert(id, Meta(id));
    live[id] = id * 10;
  }
  for (uint64_t id = 1; id <= 50'000; id += 3) {
    table.Erase(id);
    live.erase(id);
  }
  for (uint64_t id = 100'001; id <= 110'000; ++id) {  // after a gap
    table.Insert(id, Meta(id));
    live[id] = id * 10;
  }
  table.Insert(2, Meta(999));  // an overwrite keeps one entry
  live[2] = 9990;

  ExpectHolds(table, live);
  EXPECT_EQ(table.Find(1), nullptr);
  EXPECT_EQ(table.Find(50'001), nullptr);
  EXPECT_EQ(table.Find(0), nullptr);
}

// Random inserts near the newest id, behind the window and far ahead of
// it, erasures and compactions, against a map.
TEST(JobTableTest, AgreesWithAMapUnderRandomUse) {
  JobTable table;
  std::map<uint64_t, uint64_t> live;
  std::mt19937_64 random(11);
  uint64_t next = 1'000;
  for (int step = 0; step < 400'000; ++step) {
    const uint64_t roll = random() % 100;
    uint64_t id;
    if (roll < 45) {
      id = next++;
    } else if (roll < 47) {
      id = random() % 1'000;  // behind everything
    } else if (roll < 48) {
      // Far ahead; the nearer ones end up inside the window as it grows.
      id = next + (uint64_t{1} << (random() % 2 == 0 ? 17 : 20)) +
           random() % 1'000;
    } else if (roll < 50) {
      table.Compact();
      ASSERT_LE(table.window_entries(), 2 * table.size() + 4096);
      continue;
    } else if (roll < 55) {
      auto it = live.lower_bound(random() % (next + (uint64_t{1} << 20)));
      if (it == live.end()) continue;
      id = it->first;  // an overwrite, wherever the job is kept
    } else {
      if (live.empty()) continue;
      // Mostly the oldest jobs, as a queue drains; sometimes any.
      auto it =
          random() % 4 == 0 ? live.lower_bound(random() % next) : live.begin();
      if (it == live.end()) continue;
      table.Erase(it->first);
      live.erase(it);
      continue;
    }
    const uint64_t seq = random();
    table.Insert(id, Meta(id)).seq = seq;
    live[id] = seq;
  }
  ExpectHolds(table, live);
  table.Compact();
  ExpectHolds(table, live);
}

// References stay valid while other jobs come and go (the broker holds one
// across a handler); only Compact may move a job.
TEST(JobTableTest, AReferenceSurvivesOtherInsertsAndErasures) {
  JobTable table;
  JobMeta& first = table.Insert(1, Meta(1));
  for (uint64_t id = 2; id <= 100'000; ++id) table.Insert(id, Meta(id));
  for (uint64_t id = 2; id <= 50'000; ++id) table.Erase(id);
  table.Insert(uint64_t{1} << 40, Meta(7));  // to the hash map
  EXPECT_EQ(&first, table.Find(1));
  EXPECT_EQ(first.seq, 10u);
}

// A job that stays while later ones come and go does not keep the window
// open behind it: compaction moves it aside and the window shrinks.
TEST(JobTableTest, CompactBoundsTheWindowBehindALongLivedJob) {
  JobTable table;
  table.Insert(1, Meta(1));
  for (uint64_t id = 2; id <= 100'000; ++id) {
    table.Insert(id, Meta(id));
    if (id > 11) table.Erase(id - 10);  // all but 1 and the newest 10
    table.Compact();
  }
  EXPECT_EQ(table.size(), 11u);
  EXPECT_LE(table.window_entries(), 4096u + 1);
  ASSERT_NE(table.Find(1), nullptr);
  EXPECT_EQ(table.Find(1)->seq, 10u);
  table.Erase(1);
  EXPECT_EQ(table.Find(1), nullptr);
  EXPECT_EQ(table.size(), 10u);
}

// An id too far ahead for the window is kept aside, and stays the one
// entry for its job once the window grows past it.
TEST(JobTableTest, AnIdFarAheadIsKeptAsideUntilTheWindowReachesIt) {
  JobTable table;
  const uint64_t far = (uint64_t{1} << 17) + 1'000;
  table.Insert(1, Meta(1));
  table.Insert(far, Meta(far));
  EXPECT_EQ(table.window_entries(), 1u);
  for (uint64_t id = 2; id < far + 10; ++id) {
    if (id != far) table.Insert(id, Meta(id));
  }
  EXPECT_EQ(table.window_entries(), far + 9);
  table.Insert(far, Meta(5));  // an overwrite
  EXPECT_EQ(table.size(), far + 9);
  ASSERT_NE(table.Find(far), nullptr);
  EXPECT_EQ(table.Find(far)->seq, 50u);
  table.Erase(far);
  EXPECT_EQ(table.Find(far), nullptr);
  EXPECT_EQ(table.size(), far + 8);
}

// A window started at an odd id, while newer jobs went past it to the hash
// map, is emptied so that the next new job starts it afresh.
TEST(JobTableTest, CompactRestartsAWindowStartedAtAnOddId) {
  JobTable table;
  table.Insert(5, Meta(5));  // say, a requeued dead job, on an idle table
  for (uint64_t id = 1'000'000; id < 1'010'000; ++id) {
    table.Insert(id, Meta(id));
  }
  EXPECT_EQ(table.window_entries(), 1u);
  table.Compact();
  EXPECT_EQ(table.window_entries(), 0u);
  for (uint64_t id = 1'010'000; id < 1'020'000; ++id) {
    table.Insert(id, Meta(id));
  }
  EXPECT_EQ(table.window_entries(), 10'000u);
  EXPECT_EQ(table.size(), 20'001u);
  ASSERT_NE(table.Find(5), nullptr);
  EXPECT_EQ(table.Find(5)->seq, 50u);
}

// Restore compacts between records: a job far behind the rest, read
// first, leaves the window once the jobs after the gap outnumber it.
TEST(JobTableTest, CompactBetweenInsertsMovesTheWindowPastAGap) {
  JobTable table;
  table.Insert(5, Meta(5));
  for (uint64_t id = 1'000'000; id < 1'100'000; ++id) {
    table.Compact();
    table.Insert(id, Meta(id));
  }
  EXPECT_EQ(table.size(), 100'001u);
  EXPECT_GE(table.window_entries(), 99'000u);
  ASSERT_NE(table.Find(5), nullptr);
  ASSERT_NE(table.Find(1'000'000), nullptr);
}

// A restart after the newest jobs finished: the ids jump past a dense
// window. Once more new jobs went past it than it holds, the window
// restarts at the new ids.
TEST(JobTableTest, ADenseWindowTheIdsJumpedPastRestarts) {
  JobTable table;
  for (uint64_t id = 1; id <= 5'000; ++id) table.Insert(id, Meta(id));
  uint64_t id = 1'000'000;
  for (; id <= 1'005'000; ++id) {
    table.Insert(id, Meta(id));
    table.Compact();
  }
  EXPECT_EQ(table.window_entries(), 0u);
  for (; id < 1'100'000; ++id) table.Insert(id, Meta(id));
  EXPECT_EQ(table.window_entries(), 1'100'000u - 1'005'001u);
  EXPECT_EQ(table.size(), 5'000u + 100'000u);
  ASSERT_NE(table.Find(2'500), nullptr);
  EXPECT_EQ(table.Find(2'500)->seq, 25'000u);
  ASSERT_NE(table.Find(1'000'000), nullptr);
}

// Inserts far apart with no Compact between them (a tenant's dead letters
// requeued in one command) cannot stretch the window past twice its live
// jobs plus 4,096 entries.
TEST(JobTableTest, InsertsFarApartDoNotStretchTheWindow) {
  JobTable table;
  for (uint64_t i = 0; i < 100'000; ++i) {
    table.Insert(1 + i * 1'000, Meta(i));
    ASSERT_LE(table.window_entries(), 2 * table.size() + 4096) << i;
  }
  EXPECT_EQ(table.size(), 100'000u);
  ASSERT_NE(table.Find(1 + 99'999 * 1'000), nullptr);
}

// An overwrite stays in the window however sparse it is: the bound on the
// window applies only to inserts that would open free entries.
TEST(JobTableTest, AnOverwriteInASparseWindowKeepsOneEntry) {
  JobTable table;
  for (uint64_t id = 1; id <= 10'000; ++id) table.Insert(id, Meta(id));
  for (uint64_t id = 2; id <= 9'000; ++id) table.Erase(id);
  table.Insert(9'500, Meta(7));
  EXPECT_EQ(table.size(), 1'001u);
  ASSERT_NE(table.Find(9'500), nullptr);
  EXPECT_EQ(table.Find(9'500)->seq, 70u);
  table.Erase(9'500);
  EXPECT_EQ(table.Find(9'500), nullptr);
  EXPECT_EQ(table.size(), 1'000u);
  // And the next new id joins the window's end, not the map.
  table.Insert(10'001, Meta(10'001));
  EXPECT_EQ(table.window_entries(), 10'001u);
}

// Jobs in the hash map keep their address while it grows (the contract on
// Insert's reference).
TEST(JobTableTest, AReferenceIntoTheMapSurvivesItsGrowth) {
  JobTable table;
  FillAside(table, 0);
  JobMeta& aside = table.Insert(AsideId(0), Meta(2));
  for (uint64_t i = 1; i <= 100'000; ++i) table.Insert(AsideId(i), Meta(3));
  EXPECT_EQ(&aside, table.Find(AsideId(0)));
  EXPECT_EQ(aside.seq, 20u);
}

// A dense backlog needs no compaction: every entry stays in the window.
TEST(JobTableTest, CompactLeavesADenseWindowAlone) {
  JobTable table;
  for (uint64_t id = 1; id <= 100'000; ++id) table.Insert(id, Meta(id));
  for (uint64_t id = 1; id <= 1'000; ++id) table.Erase(id * 7);
  table.Compact();
  EXPECT_EQ(table.window_entries(), 100'000u);
  EXPECT_EQ(table.size(), 99'000u);
}

// A burst of jobs kept aside (scheduled far ahead, say) leaves; the map's
// table, 9 bytes a slot, must not stay sized for the burst.
TEST(JobTableTest, CompactShrinksTheMapAfterABurstLeaves) {
  JobTable table;
  FillAside(table, 200'000);
  table.Compact();
  const size_t burst = table.overflow_capacity();
  EXPECT_GE(burst, 200'000u);
  for (uint64_t i = 0; i < 190'000; ++i) table.Erase(AsideId(i));
  table.Compact();
  EXPECT_LT(table.overflow_capacity(), burst / 8);
  std::map<uint64_t, uint64_t> live = {{1, 10}};
  for (uint64_t i = 190'000; i < 200'000; ++i) live[AsideId(i)] = 20;
  ExpectHolds(table, live);
}

// The map keeps its table while it is more than a quarter full, so that a
// steady number of jobs aside is not rebuilt every turn.
TEST(JobTableTest, CompactKeepsTheMapWhileItIsBusy) {
  JobTable table;
  FillAside(table, 100'000);
  const size_t before = table.overflow_capacity();
  for (uint64_t i = 0; i < 50'000; ++i) table.Erase(AsideId(i));
  table.Compact();
  EXPECT_EQ(table.overflow_capacity(), before);
}

// A burst of failing jobs (a bad deploy) finishes; the failure texts'
// table must not stay sized for it.
TEST(JobTableTest, CompactShrinksTheErrorsAfterABurstOfFailuresLeaves) {
  JobTable table;
  for (uint64_t id = 1; id <= 100'000; ++id) {
    table.Insert(id, Meta(id));
    table.SetLastError(id, "worker crashed");
  }
  table.Compact();
  const size_t burst = table.errors_capacity();
  EXPECT_GE(burst, 100'000u);
  for (uint64_t id = 1; id <= 99'000; ++id) table.Erase(id);
  table.Compact();
  EXPECT_LT(table.errors_capacity(), burst / 8);
  EXPECT_EQ(table.LastError(100'000), "worker crashed");
  EXPECT_EQ(table.LastError(1), "");
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
