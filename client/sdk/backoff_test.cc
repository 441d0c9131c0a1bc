// Backoff and CallWithRetry on their own: no broker, no clock.
#include "client/sdk/backoff.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "client/sdk/grpc_util.h"

namespace fairq::client::internal {
namespace {

using std::chrono::milliseconds;

TEST(BackoffTest, DoublesUpToTheCapWithoutJitter) {
  RetryOptions options{10, milliseconds(100), milliseconds(500), 0};
  Backoff backoff(options);
  for (int expected : {100, 200, 400, 500, 500}) {
    EXPECT_EQ(backoff.Next(), milliseconds(expected));
  }
  backoff.Reset();
  EXPECT_EQ(backoff.Next(), milliseconds(100));
}

// Within +-20%, and spread over that range: clients that failed together
// must not come back together. (Uniform draws: 200 of them all missing the
// lowest or highest quarter of the range has odds of about 1e-25.)
TEST(BackoffTest, JitterSpreadsDelaysWithinItsBounds) {
  RetryOptions options{10, milliseconds(1000), milliseconds(1000), 0.2};
  Backoff backoff(options);
  std::set<milliseconds> seen;
  for (int i = 0; i < 200; ++i) {
    milliseconds delay = backoff.Next();
    EXPECT_GE(delay, milliseconds(800));
    EXPECT_LE(delay, milliseconds(1200));
    seen.insert(delay);
  }
  EXPECT_LT(*seen.begin(), milliseconds(900));
  EXPECT_GT(*seen.rbegin(), milliseconds(1100));
}

// Attempts made at a call that always fails with `code`, within 3.
int AttemptsAt(Code code, RetryOn retry_on) {
  RetryOptions options{3, milliseconds(0), milliseconds(0), 0};
  int calls = 0;
  Status status = CallWithRetry(
      options, [&] { return ++calls, Status(code, "x"); },
      [](const Status&, int, milliseconds) { return true; }, retry_on);
  EXPECT_EQ(status.code(), code);
  return calls;
}

TEST(CallWithRetryTest, RetriesOnlyUnavailableAndStopsAtMaxAttempts) {
  EXPECT_EQ(AttemptsAt(Code::kUnavailable, RetryOn::kUnavailable), 3);
  EXPECT_EQ(AttemptsAt(Code::kResourceExhausted, RetryOn::kUnavailable), 1);
  EXPECT_EQ(AttemptsAt(Code::kDeadlineExceeded, RetryOn::kUnavailable), 1);
}

TEST(CallWithRetryTest, ReportsAlsoRetryExhaustedAndDeadlineExceeded) {
  for (Code code : {Code::kUnavailable, Code::kResourceExhausted,
                    Code::kDeadlineExceeded}) {
    EXPECT_EQ(AttemptsAt(code, RetryOn::kReport), 3);
  }
  EXPECT_EQ(AttemptsAt(Code::kNotFound, RetryOn::kReport), 1);
}

TEST(CallWithRetryTest, SucceedsOnALaterAttemptAndReportsEachRetry) {
  RetryOptions options{5, milliseconds(10), milliseconds(10), 0};
  int calls = 0;
  std::vector<int> retried;
  Status status = CallWithRetry(
      options,
      [&] { return ++calls < 3 ? Status(Code::kUnavailable, "down") : Status(); },
      [&](const Status& failure, int attempt, milliseconds delay) {
        EXPECT_EQ(failure.code(), Code::kUnavailable);
        EXPECT_EQ(delay, milliseconds(10));
        retried.push_back(attempt);
        return true;
      });
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(retried, (std::vector<int>{1, 2}));
}

TEST(CallWithRetryTest, WaitCanGiveUp) {
  RetryOptions options{5, milliseconds(0), milliseconds(0), 0};
  int calls = 0;
  Status status = CallWithRetry(
      options, [&] { return ++calls, Status(Code::kUnavailable, "down"); },
      [](const Status&, int, milliseconds) { return false; });
  EXPECT_EQ(status.code(), Code::kUnavailable);
  EXPECT_EQ(calls, 1);
}

TEST(CallWithRetryTest, RetriesResourceExhaustedWhenAskedAfterItsRetryAfter) {
  RetryOptions options{3, milliseconds(10), milliseconds(10), 0};
  int calls = 0;
  std::vector<milliseconds> delays;
  auto wait = [&](const Status&, int, milliseconds delay) {
    delays.push_back(delay);
    return true;
  };
  Status status = CallWithRetry(
      options,
      [&] {
        ++calls;
        if (calls == 1) return Status(Code::kResourceExhausted, "busy");
        if (calls == 2) {
          return Status(Code::kResourceExhausted, "quota", milliseconds(250));
        }
        return Status();
      },
      wait, RetryOn::kReport);
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(calls, 3);
  // The backoff's 10 ms, then the broker's longer retry_after.
  EXPECT_EQ(delays,
            (std::vector<milliseconds>{milliseconds(10), milliseconds(250)}));
}

TEST(ValidateRetryTest, NamesTheField) {
  RetryOptions options;
  options.max_backoff = milliseconds(1);
  Status status = ValidateRetry(options, "P.retry.");
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(status.message(), "P.retry.max_backoff: must be >= initial_backoff");
}

// "Forever" as milliseconds::max() would overflow the clock once added to
// now (and its jittered llround): refused, as is anything past a day.
TEST(ValidateRetryTest, BackoffsAreAtMostADay) {
  RetryOptions options;
  options.max_backoff = milliseconds::max();
  EXPECT_EQ(ValidateRetry(options, "P.retry.").message(),
            "P.retry.max_backoff: must be at most 24 h");
  options.max_backoff = std::chrono::hours(24);
  EXPECT_TRUE(ValidateRetry(options, "P.retry.").ok());
  options.initial_backoff = std::chrono::hours(25);
  options.max_backoff = std::chrono::hours(25);
  EXPECT_EQ(ValidateRetry(options, "P.retry.").message(),
            "P.retry.initial_backoff: must be between 0 and 24 h");
}

// A broker's retry delay is taken up to a day, whatever it says.
TEST(FromEnqueueResultTest, ARetryDelayIsAtMostADay) {
  v1::EnqueueResult result;
  result.set_code(static_cast<int32_t>(Code::kResourceExhausted));
  result.mutable_retry_after()->set_seconds(315'576'000'000);  // 10,000 years
  Status status = FromEnqueueResult(result);
  ASSERT_TRUE(status.retry_after().has_value());
  EXPECT_EQ(*status.retry_after(), std::chrono::hours(24));
  // Past what seconds * 1000 holds in 64 bits: no overflow, the same day.
  result.mutable_retry_after()->set_seconds(INT64_MAX);
  status = FromEnqueueResult(result);
  ASSERT_TRUE(status.retry_after().has_value());
  EXPECT_EQ(*status.retry_after(), std::chrono::hours(24));
}

}  // namespace
}  // namespace fairq::client::internal
