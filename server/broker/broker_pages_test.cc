// Jobs enqueued together share a stored page (docs/storage.md, "Job
// pages"): a finished job is marked done while its page lives, the page
// goes with its last job, and a restart brings back exactly the jobs that
// had not finished.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "server/broker/broker.h"
#include "server/broker/broker_fixture.h"

namespace fairq::server {
namespace {

class BrokerPagesTest : public BrokerFixture {
 protected:
  // `count` jobs of tenant "a" in one EnqueueBatch: their ids.
  std::vector<uint64_t> EnqueueJobs(int count, uint32_t max_attempts = 0) {
    std::vector<v1::JobSpec> specs(count);
    for (v1::JobSpec& spec : specs) {
      spec.set_tenant("a");
      spec.set_payload("p");
      spec.set_max_attempts(max_attempts);
    }
    return EnqueueBatch(specs);
  }

  // Leases the next job and completes it: its id.
  uint64_t LeaseAndComplete() {
    auto lease = Lease();
    if (lease->response.jobs_size() != 1) {
      ADD_FAILURE() << "leased " << lease->response.jobs_size() << " jobs";
      return 0;
    }
    const v1::LeasedJob& leased = lease->response.jobs(0);
    EXPECT_EQ(CompleteCode(leased.job().id(), leased.lease_token()), 0);
    return leased.job().id();
  }

  // The ids of the stored jobs that have not finished (as a restart reads).
  std::vector<uint64_t> StoredLiveIds() {
    std::vector<uint64_t> ids;
    EXPECT_TRUE(store_
                    ->ScanJobs([&](const v1::JobRecord& record) {
                      ids.push_back(record.id());
                      return true;
                    })
                    .ok());
    return ids;
  }
};

TEST_F(BrokerPagesTest, ARestartBringsBackOnlyTheUnfinishedJobsOfAPage) {
  std::vector<uint64_t> ids = EnqueueJobs(4);
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_EQ(LeaseAndComplete(), ids[0]);
  EXPECT_EQ(LeaseAndComplete(), ids[1]);
  EXPECT_EQ(StoredLiveIds(), (std::vector<uint64_t>{ids[2], ids[3]}));
  Reopen();
  EXPECT_EQ(Stats("a").ready(), 2u);
  EXPECT_EQ(LeaseAndComplete(), ids[2]);
  Reopen();  // the page is counted again at recovery: one job left
  EXPECT_EQ(LeaseAndComplete(), ids[3]);
  EXPECT_TRUE(StoredLiveIds().empty());
  auto records = store_->GetJobs(ids);
  ASSERT_TRUE(records.ok());
  for (const auto& record : *records) EXPECT_FALSE(record.has_value());
}

TEST_F(BrokerPagesTest, ACanceledJobOfAPageStaysCanceled) {
  std::vector<uint64_t> ids = EnqueueJobs(3);
  std::optional<Status> canceled = Cancel(ids[1]);
  ASSERT_TRUE(canceled && canceled->ok());
  Reopen();
  EXPECT_EQ(Stats("a").ready(), 2u);
  EXPECT_EQ(LeaseAndComplete(), ids[0]);
  EXPECT_EQ(LeaseAndComplete(), ids[2]);
  EXPECT_TRUE(StoredLiveIds().empty());
}

// A dead letter keeps its record, and so its page, after the page's other
// jobs are done.
TEST_F(BrokerPagesTest, ADeadLetterKeepsItsPage) {
  std::vector<uint64_t> ids = EnqueueJobs(2, /*max_attempts=*/1);
  auto lease = Lease();
  ASSERT_EQ(lease->response.jobs(0).job().id(), ids[0]);
  EXPECT_EQ(FailCode(ids[0], lease->response.jobs(0).lease_token(),
                     /*retryable=*/false),
            0);
  EXPECT_EQ(LeaseAndComplete(), ids[1]);
  EXPECT_EQ(StoredLiveIds(), (std::vector<uint64_t>{ids[0]}));
  Reopen();
  EXPECT_EQ(Stats("a").dead(), 1u);
  EXPECT_EQ(Stats("a").ready(), 0u);
  auto record = store_->GetJob(ids[0]);
  ASSERT_TRUE(record.ok());
  EXPECT_TRUE(record->has_value());
}

}  // namespace
}  // namespace fairq::server
