#include "server/service/producer_service.h"

#include <memory>
#include <string>

#include "google/protobuf/util/time_util.h"

namespace fairq::server {
namespace {

using google::protobuf::util::TimeUtil;

// Reads the job record for GetJob and CancelJob, on the rpc reads thread
// (CallLoop): a point lookup may reach the disk, and it keeps payload I/O
// off the dispatcher.
Status ReadJob(const store::Store& store, uint64_t id, v1::Job* job) {
  auto record = store.GetJob(id);
  if (!record.ok()) return record.status();
  if (!*record) {
    return NotFound("job: no job " + std::to_string(id) +
                    " (unknown, or finished and removed)");
  }
  job->set_id(id);
  *job->mutable_spec() = (*record)->spec();
  *job->mutable_enqueued_at() =
      TimeUtil::MillisecondsToTimestamp((*record)->enqueued_unix_ms());
  return Status::Ok();
}

// Fills in the job's dead letter, if it has one; false if not.
StatusOr<bool> ReadDead(const store::Store& store, v1::Job* job) {
  auto dead = store.GetDead(job->id());
  if (!dead.ok()) return dead.status();
  if (!*dead) return false;
  job->set_state(v1::JOB_STATE_DEAD);
  job->set_attempts((*dead)->attempts());
  job->set_last_error((*dead)->last_error());
  return true;
}

// ReadDead for a job the dispatcher knows to be dead.
Status ReadLetter(const store::Store& store, v1::Job* job) {
  StatusOr<bool> letter = ReadDead(store, job);
  if (!letter.ok()) return letter.status();
  if (*letter) return Status::Ok();
  return Internal("job: " + std::to_string(job->id()) +
                  " is dead but has no dead letter");
}

// The broker names a job's field bare ("not_before: ...", "tenant: unknown
// tenant ..."): its INVALID_ARGUMENT and NOT_FOUND results are about one
// of the job's fields, so they are placed as validation's errors are
// ("job.not_before", "jobs[3].tenant"). Quota rejections name no field.
std::string PlacedMessage(const v1::EnqueueResult& result,
                          const std::string& place) {
  auto code = static_cast<StatusCode>(result.code());
  if (code != StatusCode::kInvalidArgument && code != StatusCode::kNotFound) {
    return result.message();
  }
  return place + "." + result.message();
}

}  // namespace

void ProducerService::Enqueue(Call& call, const v1::EnqueueRequest* request,
                              v1::EnqueueResponse* response) {
  Status valid = ValidateJobSpec(request->job(), context_.limits, "job");
  if (!valid.ok()) return FinishNow(call, valid);
  auto results = std::make_shared<v1::EnqueueBatchResponse>();
  Done done = [&call, response, results](const Status& status) {
    if (!status.ok()) {
      call.Finish(ToGrpcStatus(status));
      return;
    }
    const v1::EnqueueResult& result = results->results(0);
    if (result.code() != 0) {
      std::optional<int64_t> retry;
      if (result.has_retry_after()) {
        retry = TimeUtil::DurationToMilliseconds(result.retry_after());
      }
      Status failed(static_cast<StatusCode>(result.code()),
                    PlacedMessage(result, "job"));
      call.Finish(ToGrpcStatus(failed, retry, &call.context()));
      return;
    }
    response->set_job_id(result.job_id());
    response->set_duplicate(result.duplicate());
    call.Finish(grpc::Status::OK);
  };
  context_.dispatcher->Post(
      EnqueueCommand{{&request->job()}, results.get(), std::move(done)});
}

void ProducerService::EnqueueBatch(Call& call,
                                   const v1::EnqueueBatchRequest* request,
                                   v1::EnqueueBatchResponse* response) {
  Status valid =
      ValidateBatchSize(request->jobs_size(), context_.limits, "jobs");
  if (!valid.ok()) return FinishNow(call, valid);
  // Per-job problems become per-job results; valid jobs still go in.
  std::vector<Status> problems = ValidateBatchJobs(*request, context_.limits);
  std::vector<const v1::JobSpec*> jobs;
  for (int i = 0; i < request->jobs_size(); ++i) {
    if (problems[static_cast<size_t>(i)].ok())
      jobs.push_back(&request->jobs(i));
  }
  auto accepted = std::make_shared<v1::EnqueueBatchResponse>();
  Done done = [&call, response, accepted,
               problems = std::move(problems)](const Status& status) {
    if (!status.ok()) {
      call.Finish(ToGrpcStatus(status));
      return;
    }
    int next = 0;
    for (const Status& problem : problems) {
      int index = response->results_size();
      v1::EnqueueResult* result = response->add_results();
      if (problem.ok()) {
        *result = accepted->results(next++);
        if (result->code() != 0) {
          result->set_message(
              PlacedMessage(*result, "jobs[" + std::to_string(index) + "]"));
        }
      } else {
        result->set_code(static_cast<int32_t>(problem.code()));
        result->set_message(problem.message());
      }
    }
    call.Finish(grpc::Status::OK);
  };
  context_.dispatcher->Post(
      EnqueueCommand{std::move(jobs), accepted.get(), std::move(done)});
}

void ProducerService::GetJob(Call& call, const v1::GetJobRequest* request,
                             v1::Job* response) {
  Status read = ReadJob(*context_.store, request->job_id(), response);
  if (!read.ok()) return FinishWhenDurable(call, *context_.dispatcher, read);
  StatusOr<bool> dead = ReadDead(*context_.store, response);
  if (!dead.ok()) return FinishNow(call, dead.status());
  if (*dead) return FinishWhenDurable(call, *context_.dispatcher, Status::Ok());
  // A job that died since the read above, its dead letter not applied then,
  // is DEAD to the dispatcher; it replies after that letter's turn is
  // committed, so the letter can be read now. That read runs on the
  // writer's sync thread, which runs the replies; only in this race.
  const store::Store* store = context_.store;
  context_.dispatcher->Post(GetJobCommand{
      response, [&call, store, response](const Status& status) {
        bool died = status.ok() && response->state() == v1::JOB_STATE_DEAD;
        FinishNow(call, died ? ReadLetter(*store, response) : status);
      }});
}

void ProducerService::CancelJob(Call& call, const v1::CancelJobRequest* request,
                                v1::Job* response) {
  Status read = ReadJob(*context_.store, request->job_id(), response);
  if (!read.ok()) return FinishWhenDurable(call, *context_.dispatcher, read);
  context_.dispatcher->Post(CancelJobCommand{response, FinishLater(call)});
}

void ProducerService::ServeOn(CallLoop& loop) {
  using Async = v1::Producer::AsyncService;
  loop.Serve(&async_, &Async::RequestEnqueue,
             Bind(this, &ProducerService::Enqueue));
  loop.Serve(&async_, &Async::RequestEnqueueBatch,
             Bind(this, &ProducerService::EnqueueBatch));
  loop.Serve(&async_, &Async::RequestGetJob,
             Bind(this, &ProducerService::GetJob), {.reads_store = true});
  loop.Serve(&async_, &Async::RequestCancelJob,
             Bind(this, &ProducerService::CancelJob), {.reads_store = true});
}

}  // namespace fairq::server
