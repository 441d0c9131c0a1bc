// The broker against a model of every job's state, under long random runs
// of enqueues, leases, reports, heartbeats, cancels, requeues, lapsing
// leases, restarts, and crashes that lose a lease already answered (whose
// worker's first report after the restart adopts it). The model does not
// schedule: it accepts whichever waiting job the broker leases, checking
// that the job was waiting, in that pool, past its enqueue's delay (not a
// retry's backoff, which has jitter), on its next attempt and with its own
// lease length; then, after every step, it checks every count the broker
// reports against its own. Each seed replays one run: the broker's tokens
// and jitter are seeded too. Where a case in broker_test.cc shows one rule,
// this shows the rules together keep every acknowledged job in the state it
// should be in.
#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <random>
#include <sstream>
#include <utility>

#include "server/broker/broker_fixture.h"
#include "server/logging/captured_log.h"

namespace fairq::server {
namespace {

using google::protobuf::util::TimeUtil;

const char* const kTenants[] = {"a", "b", "c"};
// "" is the default pool, as named in stats.
const char* const kPools[] = {"", "gpu"};
std::string PoolName(const std::string& pool) {
  return pool.empty() ? "default" : pool;
}

struct ModelJob {
  enum State { kWaiting, kLeased, kDead };  // waiting: READY or SCHEDULED
  std::string tenant;
  std::string pool;
  uint32_t max_attempts = 0;
  int64_t spec_lease_ms = 0;  // the lease length the job asks for
  int64_t not_before_ms = 0;  // the end of its enqueue's delay, if any
  State state = kWaiting;
  // READY since its enqueue, never leased as far as the store knows: after
  // a restart, a lease of it may have gone out unwritten.
  bool fresh = false;
  uint32_t attempts = 0;
  uint64_t token = 0;       // while leased
  int64_t leased_ms = 0;    // while leased: when it was granted
  int64_t deadline_ms = 0;  // while leased
  // While leased: the deadline the store holds. Heartbeats extend leases
  // in memory only.
  int64_t stored_deadline_ms = 0;
  int64_t lease_ms = 0;  // while leased: its length
};

// Jobs of one tenant in one pool, by state, as GetQueueStats counts them.
struct Counts {
  uint64_t waiting = 0, leased = 0, dead = 0;
  bool operator==(const Counts&) const = default;
};
using TenantPool = std::pair<std::string, std::string>;  // tenant, pool

class BrokerModelTest : public BrokerFixture,
                        public ::testing::WithParamInterface<uint64_t> {
 protected:
  void SetUp() override {
    seed_ = GetParam();
    BrokerFixture::SetUp();
    random_.seed(GetParam());
  }

  template <typename T>
  const T& Pick(const std::vector<T>& from) {
    return from[std::uniform_int_distribution<size_t>(
        0, from.size() - 1)(random_)];
  }
  int64_t Between(int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random_);
  }
  std::vector<uint64_t> JobsIn(ModelJob::State state) const {
    std::vector<uint64_t> ids;
    for (const auto& [id, job] : model_) {
      if (job.state == state) ids.push_back(id);
    }
    return ids;
  }

  // One to four jobs in one EnqueueBatch, so that they share a stored page
  // and finish, die and come back in any order across restarts.
  void EnqueueSome() {
    std::vector<v1::JobSpec> specs(static_cast<size_t>(Between(1, 4)));
    std::vector<ModelJob> jobs;
    for (v1::JobSpec& spec : specs) jobs.push_back(RandomJob(spec));
    std::vector<uint64_t> ids = EnqueueBatch(specs);
    ASSERT_EQ(ids.size(), jobs.size());
    for (size_t i = 0; i < ids.size(); ++i) model_[ids[i]] = jobs[i];
  }

  ModelJob RandomJob(v1::JobSpec& spec) {
    ModelJob job;
    job.tenant = kTenants[Between(0, 2)];
    spec.set_pool(kPools[Between(0, 1)]);
    job.pool = PoolName(spec.pool());
    job.max_attempts = static_cast<uint32_t>(Between(1, 3));
    spec.set_tenant(job.tenant);
    spec.set_priority(static_cast<int32_t>(Between(-1, 1)));
    spec.set_max_attempts(job.max_attempts);
    job.spec_lease_ms = Between(1, 5) * 1000;
    *spec.mutable_lease_duration() =
        TimeUtil::MillisecondsToDuration(job.spec_lease_ms);
    job.fresh = Between(0, 3) != 0;
    if (!job.fresh) {
      int64_t delay_ms = Between(1, 3000);
      *spec.mutable_delay() = TimeUtil::MillisecondsToDuration(delay_ms);
      job.not_before_ms = now_ + delay_ms;
    }
    spec.set_payload("job");
    return job;
  }

  void LeaseSome() {
    std::string pool = kPools[Between(0, 1)];
    auto call = Lease(0, static_cast<uint32_t>(Between(1, 3)), {pool});
    ASSERT_TRUE(call->done && call->done->ok());
    for (const v1::LeasedJob& leased : call->response.jobs()) {
      uint64_t id = leased.job().id();
      auto found = model_.find(id);
      ASSERT_TRUE(found != model_.end()) << "leased an unknown job " << id;
      ModelJob& job = found->second;
      ASSERT_EQ(job.state, ModelJob::kWaiting) << "job " << id;
      ASSERT_EQ(job.pool, PoolName(pool)) << "job " << id;
      ASSERT_EQ(leased.job().attempts(), job.attempts + 1) << "job " << id;
      ASSERT_GE(now_, job.not_before_ms) << "job " << id << " leased early";
      ASSERT_EQ(TimeUtil::DurationToMilliseconds(leased.lease_duration()),
                job.spec_lease_ms)
          << "job " << id;
      ASSERT_NE(leased.lease_token(), 0u);
      Leased(job, leased.lease_token(), leased.lease_duration(),
             leased.deadline());
      ASSERT_EQ(job.deadline_ms, now_ + job.lease_ms) << "job " << id;
    }
  }

  // The model's side of a lease granted or adopted now.
  void Leased(ModelJob& job, uint64_t token,
              const google::protobuf::Duration& length,
              const google::protobuf::Timestamp& deadline) {
    job.state = ModelJob::kLeased;
    job.fresh = false;
    ++job.attempts;
    job.token = token;
    job.leased_ms = now_;
    job.lease_ms = TimeUtil::DurationToMilliseconds(length);
    job.deadline_ms = TimeUtil::TimestampToMilliseconds(deadline);
    job.stored_deadline_ms = job.deadline_ms;
  }

  void CompleteOne() {
    std::vector<uint64_t> leased = JobsIn(ModelJob::kLeased);
    if (leased.empty()) return;
    uint64_t id = Pick(leased);
    uint64_t token = model_[id].token;
    if (Between(0, 4) == 0) {  // a worker whose lease is not this one
      EXPECT_EQ(CompleteCode(id, token + 1),
                static_cast<int32_t>(StatusCode::kFailedPrecondition));
      return;
    }
    EXPECT_EQ(CompleteCode(id, token), 0) << "job " << id;
    model_.erase(id);
    Took(id);
    completed_.emplace_back(id, token);
  }

  // The broker remembers a taken report in a slot by job id, until a report
  // of another job with the same slot takes it (TakenReports).
  void Took(uint64_t id) {
    uint64_t mask = std::bit_ceil(config_.repeat_window_reports) - 1;
    std::erase_if(completed_, [&](const std::pair<uint64_t, uint64_t>& c) {
      return c.first != id && (c.first & mask) == (id & mask);
    });
  }

  // A report sent again (its answer was lost) gets OK and changes nothing.
  void RepeatACompletion() {
    if (completed_.empty()) return;
    auto [id, token] = Pick(completed_);
    EXPECT_EQ(CompleteCode(id, token), 0) << "job " << id;
  }

  void FailOne() {
    std::vector<uint64_t> leased = JobsIn(ModelJob::kLeased);
    if (leased.empty()) return;
    uint64_t id = Pick(leased);
    bool retryable = Between(0, 3) != 0;
    ASSERT_EQ(FailCode(id, model_[id].token, retryable), 0) << "job " << id;
    Took(id);
    EndAttempt(model_[id], retryable);
  }

  void HeartbeatOne() {
    std::vector<uint64_t> leased = JobsIn(ModelJob::kLeased);
    if (leased.empty()) return;
    uint64_t id = Pick(leased);
    ModelJob& job = model_[id];
    v1::HeartbeatResponse response;
    ASSERT_TRUE(Heartbeat(id, job.token, &response).ok()) << "job " << id;
    job.lease_ms = TimeUtil::DurationToMilliseconds(response.lease_duration());
    job.deadline_ms = TimeUtil::TimestampToMilliseconds(response.deadline());
    EXPECT_EQ(job.lease_ms, job.spec_lease_ms) << "job " << id;
    EXPECT_EQ(job.deadline_ms, now_ + job.lease_ms) << "job " << id;
  }

  void CancelOne() {
    if (model_.empty()) return;
    std::vector<uint64_t> ids;
    for (const auto& entry : model_) ids.push_back(entry.first);
    uint64_t id = Pick(ids);
    std::optional<Status> done = Cancel(id);
    ASSERT_TRUE(done);
    if (model_[id].state == ModelJob::kWaiting) {
      EXPECT_TRUE(done->ok()) << "job " << id << ": " << done->ToString();
      model_.erase(id);
    } else {
      EXPECT_EQ(done->code(), StatusCode::kFailedPrecondition) << "job " << id;
    }
  }

  // As the admin handler does: the dead letters' records read from the
  // store, then handed to the dispatcher.
  void RequeueDead() {
    std::vector<v1::JobRecord> records;
    for (uint64_t id : JobsIn(ModelJob::kDead)) {
      if (Between(0, 1) == 0) continue;
      auto record = store_->GetJob(id);
      ASSERT_TRUE(record.ok() && record->has_value()) << "dead job " << id;
      records.push_back(**record);
    }
    if (records.empty()) return;
    v1::RequeueDeadLettersResponse response;
    std::optional<Status> done;
    Command command = RequeueDeadCommand{records, &response,
                                         [&](const Status& s) { done = s; }};
    Turn1(&command);
    ASSERT_TRUE(done && done->ok());
    EXPECT_EQ(response.requeued(), records.size());
    for (const v1::JobRecord& record : records) {
      ModelJob& job = model_[record.id()];
      job.state = ModelJob::kWaiting;
      job.attempts = 0;
    }
  }

  void AdvanceClock() {
    Advance(Between(0, 3000));
    for (auto& [id, job] : model_) {
      if (job.state == ModelJob::kLeased && job.deadline_ms <= now_) {
        EndAttempt(job, /*retryable=*/true);
      }
    }
  }

  // A restart restores each lease from its stored record to at least the
  // length it was granted with, from now (Broker::RestoreLease), and
  // forgets the reports it took.
  void Restart() {
    Reopen();
    restarted_ms_ = now_;
    completed_.clear();
    for (auto& [id, job] : model_) {
      if (job.state != ModelJob::kLeased) continue;
      int64_t granted = job.stored_deadline_ms - job.leased_ms;
      job.deadline_ms = std::max(job.stored_deadline_ms,
                                 now_ + std::max(job.lease_ms, granted));
    }
  }

  // A lease answered before its write, then a crash: after the restart
  // its job is READY as if never leased, and the worker still holds it.
  void CrashAfterAnUnwrittenLease() {
    v1::LeaseResponse answered = LeaseNotWritten(kPools[Between(0, 1)]);
    Restart();
    for (const v1::LeasedJob& leased : answered.jobs()) {
      auto it = model_.find(leased.job().id());
      ASSERT_TRUE(it != model_.end() && it->second.state == ModelJob::kWaiting)
          << "job " << leased.job().id();
      lost_leases_.emplace_back(leased.job().id(), leased.lease_token());
    }
  }

  // A worker's first report of a lease a crash lost: taken as the lease
  // while its job is still fresh, within a lease length of the restart;
  // refused otherwise, as any stale lease is.
  void ReportALostLease() {
    if (lost_leases_.empty()) return;
    auto pick = static_cast<size_t>(
        Between(0, static_cast<int64_t>(lost_leases_.size()) - 1));
    auto [id, token] = lost_leases_[pick];
    auto it = model_.find(id);
    bool adopts = it != model_.end() &&
                  it->second.state == ModelJob::kWaiting && it->second.fresh &&
                  now_ <= restarted_ms_ + it->second.spec_lease_ms;
    int64_t kind = Between(0, 2);
    if (kind == 0) {
      v1::HeartbeatResponse response;
      Status status = Heartbeat(id, token, &response);
      ASSERT_EQ(status.ok(), adopts)
          << "job " << id << ": " << status.ToString();
      if (adopts) {
        Leased(it->second, token, response.lease_duration(),
               response.deadline());
      }
    } else if (kind == 1) {
      int32_t code = CompleteCode(id, token);
      ASSERT_EQ(code == 0, adopts) << "job " << id << ": code " << code;
      if (adopts) {
        model_.erase(it);
        Took(id);
        completed_.emplace_back(id, token);
      }
    } else {
      bool retryable = Between(0, 1) == 0;
      int32_t code = FailCode(id, token, retryable);
      ASSERT_EQ(code == 0, adopts) << "job " << id << ": code " << code;
      if (adopts) {
        ++it->second.attempts;
        it->second.fresh = false;
        Took(id);
        EndAttempt(it->second, retryable);
      }
    }
    if (adopts) lost_leases_.erase(lost_leases_.begin() + pick);
  }

  static void EndAttempt(ModelJob& job, bool retryable) {
    job.state = !retryable || job.attempts >= job.max_attempts
                    ? ModelJob::kDead
                    : ModelJob::kWaiting;
    job.token = 0;
  }

  // One step of a kind drawn by weight; restarts, the slowest, are rare.
  void Step() {
    using Kind = std::pair<int64_t, void (BrokerModelTest::*)()>;
    static const Kind kKinds[] = {
        {10, &BrokerModelTest::EnqueueSome},
        {8, &BrokerModelTest::LeaseSome},
        {6, &BrokerModelTest::CompleteOne},
        {4, &BrokerModelTest::FailOne},
        {2, &BrokerModelTest::HeartbeatOne},
        {2, &BrokerModelTest::CancelOne},
        {1, &BrokerModelTest::RepeatACompletion},
        {3, &BrokerModelTest::ReportALostLease},
        {2, &BrokerModelTest::RequeueDead},
        {3, &BrokerModelTest::AdvanceClock},
        {1, &BrokerModelTest::Restart},
        {2, &BrokerModelTest::CrashAfterAnUnwrittenLease}};
    int64_t total = 0;
    for (const Kind& kind : kKinds) total += kind.first;
    int64_t draw = Between(0, total - 1);
    for (size_t i = 0;; ++i) {
      draw -= kKinds[i].first;
      if (draw < 0) {
        trace_ += " " + std::to_string(i);
        return (this->*kKinds[i].second)();
      }
    }
  }

  std::map<TenantPool, Counts> ModelCounts() const {
    std::map<TenantPool, Counts> counts;
    for (const auto& [id, job] : model_) {
      Counts& c = counts[{job.tenant, job.pool}];
      if (job.state == ModelJob::kWaiting) ++c.waiting;
      if (job.state == ModelJob::kLeased) ++c.leased;
      if (job.state == ModelJob::kDead) ++c.dead;
    }
    return counts;
  }
  std::map<TenantPool, Counts> BrokerCounts() {
    v1::GetQueueStatsRequest request;
    v1::GetQueueStatsResponse response;
    Command command =
        QueueStatsCommand{&request, &response, [](const Status&) {}};
    Turn1(&command);
    std::map<TenantPool, Counts> counts;
    for (const v1::TenantStats& row : response.tenants()) {
      Counts c{row.ready() + row.scheduled(), row.leased(), row.dead()};
      if (c != Counts{}) counts[{row.tenant(), row.pool()}] = c;
    }
    return counts;
  }
  ::testing::AssertionResult Agrees() {
    std::map<TenantPool, Counts> want = ModelCounts(), got = BrokerCounts();
    if (want == got) return ::testing::AssertionSuccess();
    std::ostringstream out;
    for (const auto* side : {&want, &got}) {
      out << (side == &want ? "\n  model: " : "\n  broker:");
      for (const auto& [key, c] : *side) {
        out << " " << key.first << "/" << key.second << " w" << c.waiting
            << " l" << c.leased << " d" << c.dead;
      }
    }
    return ::testing::AssertionFailure() << out.str();
  }

  std::string trace_;  // the kinds of step taken (kKinds' indices)
  std::mt19937_64 random_;
  std::map<uint64_t, ModelJob> model_;
  std::vector<std::pair<uint64_t, uint64_t>> completed_;  // id, token
  // Leases a crash lost after their reply went out: id, token.
  std::vector<std::pair<uint64_t, uint64_t>> lost_leases_;
  int64_t restarted_ms_ = 0;
  logging::CapturedLog errors_{spdlog::level::err};
};

TEST_P(BrokerModelTest, EveryJobIsWhereTheModelSaysAfterEveryStep) {
  constexpr int kSteps = 600;
  for (int step = 0; step < kSteps; ++step) {
    Step();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(Agrees()) << "after step " << step << ":" << trace_;
    ASSERT_EQ(errors_.text(), "") << "after step " << step;
  }
  // Drained: every job not dead is leased and completed in the end.
  for (int round = 0; round < 100 && !JobsIn(ModelJob::kWaiting).empty();
       ++round) {
    Advance(3000);
    for (const char* pool : kPools) {
      auto call = Lease(0, 100, {pool});
      for (const v1::LeasedJob& leased : call->response.jobs()) {
        ASSERT_EQ(CompleteCode(leased.job().id(), leased.lease_token()), 0);
        model_.erase(leased.job().id());
      }
    }
    AdvanceClock();
  }
  EXPECT_TRUE(JobsIn(ModelJob::kWaiting).empty());
  EXPECT_TRUE(Agrees());
  EXPECT_EQ(broker_->live_jobs(), JobsIn(ModelJob::kLeased).size());
}

INSTANTIATE_TEST_SUITE_P(Seeds, BrokerModelTest,
                         ::testing::Range<uint64_t>(1, 13));

}  // namespace
}  // namespace fairq::server
