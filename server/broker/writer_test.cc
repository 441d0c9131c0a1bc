// The writer's promise: replies before the sync see the apply's result,
// every other reply waits for a successful sync.
#include "server/broker/writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "store/fault_injection_env.h"
#include "tests/util/scoped_temp_dir.h"

namespace fairq::server {
namespace {

class WriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(store::Store::Open({dir_.path(), true, faults_.env()}))
                 .value();
  }
  void TearDown() override { store_.reset(); }

  // A turn that writes (unless `write` is false) and records, in order,
  // which of its replies ran and with what code.
  Turn MakeTurn(bool write, const std::string& name) {
    Turn turn(store_->NewBatch());
    if (write) {
      v1::PoolRecord pool;
      pool.set_id(7);
      turn.batch.PutPool(name, pool);
    }
    turn.replies_before_sync.push_back([this, name](const Status& s) {
      log_.push_back(name + " lease " + std::string(StatusCodeName(s.code())));
    });
    turn.replies.push_back([this, name](const Status& s) {
      log_.push_back(name + " ack " + std::string(StatusCodeName(s.code())));
    });
    return turn;
  }

  // A writing turn whose lease reply and ack can be waited for.
  struct Submitted {
    std::future<void> lease;
    std::future<void> ack;
  };
  Submitted SubmitWatched(Writer& writer, const std::string& name) {
    auto leased = std::make_shared<std::promise<void>>();
    auto acked = std::make_shared<std::promise<void>>();
    Submitted watched{leased->get_future(), acked->get_future()};
    Turn turn(store_->NewBatch());
    turn.batch.PutPool(name, v1::PoolRecord());
    turn.replies_before_sync.push_back(
        [leased](const Status&) { leased->set_value(); });
    turn.replies.push_back([acked](const Status& s) {
      EXPECT_TRUE(s.ok()) << s.ToString();
      acked->set_value();
    });
    writer.Submit(std::move(turn));
    return watched;
  }
  // Bounds waits so that a regression fails, not waits for the interval.
  static constexpr auto kBound = std::chrono::seconds(30);

  testing::ScopedTempDir dir_{"writer_test"};
  store::FaultInjectionEnv faults_;
  std::unique_ptr<store::Store> store_;
  std::vector<std::string> log_;  // written by the writer's threads, read
                                  // after Stop joined them
};

TEST_F(WriterTest, RepliesRunInTurnOrderLeasesFirst) {
  Writer writer(store_.get(), 4);
  writer.Start();
  writer.Submit(MakeTurn(true, "t1"));
  writer.Submit(MakeTurn(false, "t2"));
  writer.Stop();
  // Each turn's lease runs before its ack; acks keep the turns' order.
  auto pos = [&](const std::string& line) {
    return std::find(log_.begin(), log_.end(), line) - log_.begin();
  };
  ASSERT_EQ(log_.size(), 4u);
  EXPECT_LT(pos("t1 lease OK"), pos("t1 ack OK"));
  EXPECT_LT(pos("t2 lease OK"), pos("t2 ack OK"));
  EXPECT_LT(pos("t1 ack OK"), pos("t2 ack OK"));
  EXPECT_EQ(store_->failed(), false);
}

// The point of the two threads: a lease reply does not wait for the fsync.
TEST_F(WriterTest, ALeaseIsAnsweredWhileItsSyncIsStillRunning) {
  faults_.HoldSyncs(true);
  Writer writer(store_.get(), 4);
  writer.Start();
  std::promise<void> leased;
  std::atomic<int> acks{0};
  Turn turn(store_->NewBatch());
  v1::PoolRecord pool;
  turn.batch.PutPool("p", pool);
  turn.replies_before_sync.push_back([&](const Status&) { leased.set_value(); });
  turn.replies.push_back([&](const Status&) { ++acks; });
  writer.Submit(std::move(turn));
  // Bounded only so that a regression fails instead of hanging the suite.
  ASSERT_EQ(leased.get_future().wait_for(std::chrono::seconds(30)),
            std::future_status::ready);
  EXPECT_EQ(acks.load(), 0);  // its sync is held: the ack must wait
  faults_.HoldSyncs(false);
  writer.Stop();
  EXPECT_EQ(acks.load(), 1);
}

TEST_F(WriterTest, AFailedSyncFailsTheAcksButNotTheLeases) {
  faults_.FailSyncs(true);
  Writer writer(store_.get(), 4);
  writer.Start();
  writer.Submit(MakeTurn(true, "t1"));
  writer.Stop();
  EXPECT_EQ(log_, (std::vector<std::string>{"t1 lease OK", "t1 ack UNAVAILABLE"}));
  EXPECT_TRUE(store_->failed());
}

TEST_F(WriterTest, ATurnThatWroteNothingNeedsNoSync) {
  faults_.FailSyncs(true);
  Writer writer(store_.get(), 4);
  writer.Start();
  writer.Submit(MakeTurn(false, "read"));
  writer.Stop();
  EXPECT_EQ(log_, (std::vector<std::string>{"read lease OK", "read ack OK"}));
  EXPECT_EQ(faults_.injected_failures(), 0u);
}

// With paced syncs, turns applied while a sync runs share the next one, an
// interval after it; the first sync is not delayed, and Stop does not wait
// the interval out. The interval is an hour, so a delay anywhere shows as a
// bounded wait running out (ctest's timeout ends the run that a regression
// would leave waiting).
TEST_F(WriterTest, PacedSyncsAreSharedByTheTurnsInTheirInterval) {
  Writer writer(store_.get(), 16, std::chrono::hours(1));
  writer.Start();
  const uint64_t syncs_before = faults_.sync_calls();
  faults_.HoldSyncs(true);
  Submitted first = SubmitWatched(writer, "t1");
  ASSERT_TRUE(faults_.WaitForHeldSync(kBound));
  // Each turn is applied (its lease answered) before the next is sent, so
  // an unpaced sync thread would sync them in several groups.
  std::vector<std::future<void>> acks;
  for (int i = 2; i <= 10; ++i) {
    Submitted next = SubmitWatched(writer, "t" + std::to_string(i));
    ASSERT_EQ(next.lease.wait_for(kBound), std::future_status::ready);
    acks.push_back(std::move(next.ack));
  }
  faults_.HoldSyncs(false);
  ASSERT_EQ(first.ack.wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(faults_.sync_calls(), syncs_before + 1);  // they all wait
  auto stopped = std::async(std::launch::async, [&] { writer.Stop(); });
  ASSERT_EQ(stopped.wait_for(kBound), std::future_status::ready);
  for (auto& ack : acks) {
    EXPECT_EQ(ack.wait_for(kBound), std::future_status::ready);
  }
  EXPECT_EQ(faults_.sync_calls(), syncs_before + 2);  // one for them all
}

// A lone producer, which sends its next write only on the acknowledgement
// of the last, has nobody to share a sync with: each of its writes is
// synced at once, not an interval after the previous sync.
TEST_F(WriterTest, PacingDoesNotDelayAWriteThatComesAlone) {
  Writer writer(store_.get(), 16, std::chrono::hours(1));
  writer.Start();
  const uint64_t syncs_before = faults_.sync_calls();
  for (int i = 1; i <= 3; ++i) {
    Submitted next = SubmitWatched(writer, "t" + std::to_string(i));
    ASSERT_EQ(next.ack.wait_for(kBound), std::future_status::ready);
  }
  EXPECT_EQ(faults_.sync_calls(), syncs_before + 3);
  writer.Stop();
}

// The sync thread is idle again once its sync is done, before it runs the
// replies: a producer that writes again on its acknowledgement (here while
// the test holds that reply) has no company, and is synced at once.
TEST_F(WriterTest, AWriteDuringTheRepliesOfASyncIsSyncedAtOnce) {
  Writer writer(store_.get(), 16, std::chrono::hours(1));
  writer.Start();
  std::promise<void> replying;
  std::promise<void> release;
  Turn first(store_->NewBatch());
  first.batch.PutPool("t1", v1::PoolRecord());
  first.replies.push_back([&](const Status&) {
    replying.set_value();
    release.get_future().wait();
  });
  writer.Submit(std::move(first));
  ASSERT_EQ(replying.get_future().wait_for(kBound), std::future_status::ready);
  Submitted second = SubmitWatched(writer, "t2");
  ASSERT_EQ(second.lease.wait_for(kBound), std::future_status::ready);
  release.set_value();
  EXPECT_EQ(second.ack.wait_for(kBound), std::future_status::ready);
  writer.Stop();
}

// Pacing never holds the dispatcher for the interval: once
// max_turns_in_flight wait for their sync, it starts at once, which makes
// room for the next Submit.
TEST_F(WriterTest, PacingDoesNotBlockSubmitForTheInterval) {
  Writer writer(store_.get(), 2, std::chrono::hours(1));
  writer.Start();
  faults_.HoldSyncs(true);
  Submitted first = SubmitWatched(writer, "t1");
  ASSERT_TRUE(faults_.WaitForHeldSync(kBound));
  Submitted second = SubmitWatched(writer, "t2");  // company: it waits
  ASSERT_EQ(second.lease.wait_for(kBound), std::future_status::ready);
  faults_.HoldSyncs(false);
  ASSERT_EQ(first.ack.wait_for(kBound), std::future_status::ready);
  Submitted third = SubmitWatched(writer, "t3");
  // Two in flight: the sync is forced, so this Submit returns.
  auto fourth = std::async(std::launch::async,
                           [&] { return SubmitWatched(writer, "t4"); });
  ASSERT_EQ(fourth.wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(second.ack.wait_for(kBound), std::future_status::ready);
  auto stopped = std::async(std::launch::async, [&] { writer.Stop(); });
  ASSERT_EQ(stopped.wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(third.ack.wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(fourth.get().ack.wait_for(kBound), std::future_status::ready);
}

// After a failed write, a turn that writes nothing (a duplicate enqueue
// answered from memory, a read) may describe state that never reached the
// disk: it is failed too, not answered OK.
TEST_F(WriterTest, AfterAFailedApplyATurnThatWritesNothingFailsToo) {
  faults_.FailAppends(true);
  Writer writer(store_.get(), 4);
  writer.Start();
  // The read goes in once t1 is answered: a group of its own, and no
  // writer thread appends to log_ while another does.
  std::promise<void> answered;
  Turn first = MakeTurn(true, "t1");
  first.replies.push_back([&](const Status&) { answered.set_value(); });
  writer.Submit(std::move(first));
  ASSERT_EQ(answered.get_future().wait_for(kBound), std::future_status::ready);
  writer.Submit(MakeTurn(false, "read"));
  writer.Stop();
  EXPECT_EQ(log_, (std::vector<std::string>{
                      "t1 lease UNAVAILABLE", "t1 ack UNAVAILABLE",
                      "read lease UNAVAILABLE", "read ack UNAVAILABLE"}));
}

TEST_F(WriterTest, AFailedApplyFailsEveryReply) {
  faults_.FailAppends(true);
  Writer writer(store_.get(), 4);
  writer.Start();
  writer.Submit(MakeTurn(true, "t1"));
  writer.Stop();
  EXPECT_EQ(log_, (std::vector<std::string>{"t1 lease UNAVAILABLE",
                                            "t1 ack UNAVAILABLE"}));
}

}  // namespace
}  // namespace fairq::server
