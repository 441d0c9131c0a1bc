// The writer's promise: replies before the sync see the apply's result,
// every other reply waits for a successful sync.
#include "server/broker/writer.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "store/fault_injection_env.h"

namespace fairq::server {
namespace {

class WriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "writer_test_XXXXXX").string();
    dir_ = mkdtemp(pattern.data());
    store_ = std::move(store::Store::Open({dir_, true, faults_.env()})).value();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

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

  std::string dir_;
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
