#include "client/sdk/reporter.h"

#include <algorithm>
#include <functional>

#include "client/sdk/backoff.h"
#include "client/sdk/error_text.h"
#include "client/sdk/grpc_util.h"

namespace fairq::client::internal {
namespace {

// What the broker answers an item whose report of `kind` it took but no
// longer remembers (it restarted since, or its memory of reports moved on;
// a remembered one is answered OK): a completed job, or one failed for
// good, is no longer live (NOT_FOUND); a job failed to be retried, or
// released, is live with a new lease or none, so the old token is stale
// (FAILED_PRECONDITION), or it has no attempts left and is dead, or it was
// finished since (NOT_FOUND). A lease that lapsed meanwhile gets the same
// answers, so they stay errors; the message says which it may be.
bool RepeatOfATakenReport(Reporter::Kind kind, Code code) {
  if (code == Code::kNotFound) return true;
  return code == Code::kFailedPrecondition &&
         (kind == Reporter::Kind::kRetry || kind == Reporter::Kind::kGiveBack ||
          kind == Reporter::Kind::kRelease);
}

// Failures after which the call may still have been carried out.
bool MayHaveLanded(Code code) {
  return code == Code::kUnavailable || code == Code::kDeadlineExceeded;
}

}  // namespace

Reporter::Reporter(grpc::Channel* channel, v1::Worker::Stub* stub,
                   const WorkerOptions* options, Counters* counters,
                   Reported reported)
    : channel_(channel),
      stub_(stub),
      options_(options),
      counters_(counters),
      reported_(std::move(reported)),
      thread_([this] {
        worker_of_this_thread = options_;
        Loop();
      }) {}

Reporter::~Reporter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  queued_.notify_one();
  thread_.join();
}

void Reporter::Report(std::shared_ptr<RunningJob> job, Kind kind,
                      std::string_view error,
                      std::chrono::nanoseconds runtime) {
  std::string text = ErrorText(error);
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(Item{kind, std::move(job), std::move(text), runtime});
  }
  queued_.notify_one();
}

void Reporter::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    queued_.wait(lock, [this] { return closing_ || !queue_.empty(); });
    if (queue_.empty()) return;  // closing, and all sent
    std::vector<Item> items;
    items.swap(queue_);
    lock.unlock();
    Send(items);
    lock.lock();
  }
}

void Reporter::Send(const std::vector<Item>& items) {
  std::vector<const Item*> completions, failures, releases;
  for (const Item& item : items) {
    switch (item.kind) {
      case Kind::kSuccess:
        completions.push_back(&item);
        break;
      case Kind::kRetry:
      case Kind::kFail:
      case Kind::kGiveBack:
        failures.push_back(&item);
        break;
      case Kind::kRelease:
        releases.push_back(&item);
        break;
    }
  }
  InBatches(completions, [this](const auto& batch) { SendCompletions(batch); });
  InBatches(failures, [this](const auto& batch) { SendFailures(batch); });
  InBatches(releases, [this](const auto& batch) { SendReleases(batch); });
}

void Reporter::InBatches(
    const std::vector<const Item*>& items,
    const std::function<void(const std::vector<const Item*>&)>& send) {
  const size_t most = options_->max_report_batch;
  for (size_t at = 0; at < items.size(); at += most) {
    size_t end = std::min(items.size(), at + most);
    send({items.begin() + at, items.begin() + end});
  }
}

void Reporter::SendCompletions(const std::vector<const Item*>& items) {
  v1::CompleteRequest request;
  for (const Item* item : items) {
    v1::Completion* done = request.add_completions();
    done->set_job_id(item->job->context.id());
    done->set_lease_token(item->job->token);
    *done->mutable_runtime() = ToDuration(item->runtime);
  }
  SendAndTally(items,
               [&](grpc::ClientContext& context, v1::AckResponse& response) {
                 return stub_->Complete(&context, request, &response);
               });
}

void Reporter::SendFailures(const std::vector<const Item*>& items) {
  v1::FailRequest request;
  for (const Item* item : items) {
    v1::Failure* failure = request.add_failures();
    failure->set_job_id(item->job->context.id());
    failure->set_lease_token(item->job->token);
    failure->set_error(item->error);
    failure->set_retryable(item->kind != Kind::kFail);
    *failure->mutable_runtime() = ToDuration(item->runtime);
  }
  SendAndTally(items,
               [&](grpc::ClientContext& context, v1::AckResponse& response) {
                 return stub_->Fail(&context, request, &response);
               });
}

// A broker older than Release answers UNIMPLEMENTED: its jobs then go back
// as retryable failures, their attempts counted, as they did before it had
// Release, rather than lapse with their attempts counted all the same.
void Reporter::SendReleases(const std::vector<const Item*>& items) {
  if (broker_has_release_) {
    v1::ReleaseRequest request;
    for (const Item* item : items) {
      v1::ReleasedLease* lease = request.add_leases();
      lease->set_job_id(item->job->context.id());
      lease->set_lease_token(item->job->token);
    }
    v1::AckResponse response;
    bool repeated = false;
    Status status = Send(
        [&](grpc::ClientContext& context, v1::AckResponse& answer) {
          return stub_->Release(&context, request, &answer);
        },
        response, repeated);
    if (status.code() != Code::kUnimplemented) {
      Tally(items, status, response, repeated);
      return;
    }
    broker_has_release_ = false;
  }
  SendFailures(items);
}

void Reporter::SendAndTally(const std::vector<const Item*>& items,
                            const Call& call) {
  v1::AckResponse response;
  bool repeated = false;
  Status status = Send(call, response, repeated);
  Tally(items, status, response, repeated);
}

Status Reporter::Send(const Call& call, v1::AckResponse& response,
                      bool& repeated) {
  return WithRetry(
      [&] {
        grpc::ClientContext context;
        // A broker that restarts is waited for, as heartbeats and Lease
        // wait, up to the deadline; failing at once spent the retry budget
        // in a second or two, and the finished jobs ran again.
        context.set_wait_for_ready(true);
        context.set_deadline(DeadlineIn(options_->rpc_timeout));
        response.Clear();
        return FromGrpc(call(context, response), context);
      },
      repeated);
}

void Reporter::Tally(const std::vector<const Item*>& items,
                     const Status& status, const v1::AckResponse& response,
                     bool repeated) {
  for (size_t i = 0; i < items.size(); ++i) {
    Status result = status;
    if (result.ok()) {
      result = i < static_cast<size_t>(response.results_size())
                   ? FromAckResult(response.results(static_cast<int>(i)))
                   : Status(Code::kInternal, "no result for this item");
      if (repeated && RepeatOfATakenReport(items[i]->kind, result.code())) {
        result = Status(result.code(),
                        result.message() +
                            " (an earlier attempt of this report failed in "
                            "a way that may have reached the broker: it may "
                            "have taken the report then)");
      }
    }
    if (!result.ok()) {
      ++counters_->report_errors;
      ReportError(*options_,
                  Status(result.code(),
                         "reporting job " +
                             std::to_string(items[i]->job->context.id()) +
                             ": " + result.message()));
      continue;
    }
    switch (items[i]->kind) {
      case Kind::kSuccess:
        ++counters_->succeeded;
        break;
      case Kind::kRetry:
        ++counters_->retried;
        break;
      case Kind::kFail:
        ++counters_->failed;
        break;
      case Kind::kGiveBack:
      case Kind::kRelease:
        break;  // counted when given back
    }
  }
  // After the counts, so that a worker whose beats stopped sees them.
  for (const Item* item : items) {
    if (reported_) reported_(item->job.get());
  }
}

Status Reporter::WithRetry(const std::function<Status()>& attempt,
                           bool& repeated) {
  // Reports queued during the pause join the next call. A report given up
  // on lets its lease lapse, which costs the job an attempt and a rerun.
  return CallWithRetry(
      options_->retry, attempt,
      [this, &repeated](const Status& failure, int,
                        std::chrono::milliseconds delay) {
        repeated = repeated || MayHaveLanded(failure.code());
        PauseReconnecting(*channel_, delay);
        return true;
      },
      RetryOn::kReport);
}

}  // namespace fairq::client::internal
