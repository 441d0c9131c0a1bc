#include "server/service/admin_service.h"

#include <string>
#include <vector>

#include "server/config/names.h"
#include "server/config/tenant_settings.h"

namespace fairq::server {
namespace {

constexpr uint32_t kDefaultPage = 100;
constexpr uint32_t kMaxPage = 1000;
// The dead letters read for one call, payloads included, stop at a size
// (but take at least one), so that a tenant with many large dead jobs
// cannot make one call hold them all in memory. A listing goes back to the
// client, so its page also stays under gRPC's default 4 MiB limit on
// received messages.
constexpr size_t kMaxDeadPageBytes = 3u << 20;
constexpr size_t kMaxRequeueBytes = 32u << 20;
// Dead letters one RequeueDeadLetters by filter moves; `more` says to call
// again.
constexpr size_t kMaxRequeuePerCall = 1000;

// A filter's name: empty means any; otherwise one that breaks the naming
// rule is an error, not a filter that quietly matches nothing.
Status ValidateFilterName(const std::string& name, std::string_view field) {
  return name.empty() ? Status::Ok() : config::ValidateName(name, field);
}

bool InPool(const v1::JobRecord& record, const std::string& pool) {
  const std::string& job_pool =
      record.spec().pool().empty() ? std::string("default")
                                   : record.spec().pool();
  return pool.empty() || job_pool == pool;
}

// Whether a dead letter's own record rules it out of the filter, before its
// job record is read (records from before DeadRecord.tenant never do).
bool FilteredOut(const v1::DeadRecord& dead, const std::string& tenant,
                 const std::string& pool) {
  return (!tenant.empty() && !dead.tenant().empty() &&
          dead.tenant() != tenant) ||
         (!pool.empty() && !dead.pool().empty() && dead.pool() != pool);
}

struct DeadLetters {
  std::vector<std::pair<v1::JobRecord, v1::DeadRecord>> letters;
  bool more = false;  // more match than were read
};

// Dead letters of `tenant` (every tenant when empty) in `pool`, after
// `after_id`: at most `limit`, and no more than `max_bytes` of records.
StatusOr<DeadLetters> ReadDead(const store::Store& store,
                               const std::string& tenant,
                               const std::string& pool, uint64_t after_id,
                               size_t limit, size_t max_bytes) {
  DeadLetters found;
  size_t bytes = 0;
  Status read_error;
  Status scan = store.ScanDead(after_id, [&](const uint64_t& id,
                                             const v1::DeadRecord& dead) {
    if (FilteredOut(dead, tenant, pool)) return true;
    auto record = store.GetJob(id);
    if (!record.ok()) {
      read_error = record.status();
      return false;
    }
    if (!*record || (!tenant.empty() && (*record)->spec().tenant() != tenant) ||
        !InPool(**record, pool)) {
      return true;
    }
    bytes += (*record)->ByteSizeLong() + dead.ByteSizeLong();  // + last_error
    if (found.letters.size() == limit ||
        (bytes > max_bytes && !found.letters.empty())) {
      found.more = true;
      return false;
    }
    found.letters.emplace_back(std::move(**record), dead);
    return true;
  });
  if (!scan.ok()) return scan;
  if (!read_error.ok()) return read_error;
  return found;
}

}  // namespace

void AdminService::GetTenant(Call& call, const v1::GetTenantRequest* request,
                             v1::Tenant* response) {
  Status valid = config::ValidateName(request->name(), "name");
  if (!valid.ok()) return FinishNow(call, valid);
  context_.dispatcher->Post(
      GetTenantCommand{request->name(), response, FinishLater(call)});
}

void AdminService::ListTenants(Call& call, const v1::ListTenantsRequest*,
                               v1::ListTenantsResponse* response) {
  context_.dispatcher->Post(ListTenantsCommand{response, FinishLater(call)});
}

void AdminService::SetTenant(Call& call, const v1::SetTenantRequest* request,
                             v1::Tenant* response) {
  Status valid = ValidateSetTenant(*request);
  if (!valid.ok()) return FinishNow(call, valid);
  context_.dispatcher->Post(SetTenantCommand{
      .tenant = &request->tenant(),
      .response = response,
      .done = FinishLater(call),
      .mask = request->has_update_mask() ? &request->update_mask() : nullptr});
}

void AdminService::SetPaused(Call& call, const std::string& name, bool paused,
                             v1::Tenant* response) {
  Status valid = config::ValidateName(name, "name");
  if (!valid.ok()) return FinishNow(call, valid);
  context_.dispatcher->Post(
      PauseTenantCommand{name, paused, response, FinishLater(call)});
}

void AdminService::PauseTenant(Call& call,
                               const v1::PauseTenantRequest* request,
                               v1::Tenant* response) {
  SetPaused(call, request->name(), true, response);
}

void AdminService::ResumeTenant(Call& call,
                                const v1::PauseTenantRequest* request,
                                v1::Tenant* response) {
  SetPaused(call, request->name(), false, response);
}

void AdminService::GetQueueStats(Call& call,
                                 const v1::GetQueueStatsRequest* request,
                                 v1::GetQueueStatsResponse* response) {
  Status valid = ValidateFilterName(request->tenant(), "tenant");
  if (valid.ok()) valid = ValidateFilterName(request->pool(), "pool");
  if (!valid.ok()) return FinishNow(call, valid);
  context_.dispatcher->Post(
      QueueStatsCommand{request, response, FinishLater(call)});
}

void AdminService::ListDeadLetters(Call& call,
                                   const v1::ListDeadLettersRequest* request,
                                   v1::ListDeadLettersResponse* response) {
  uint32_t page = request->page_size() == 0 ? kDefaultPage : request->page_size();
  if (page > kMaxPage) {
    return FinishNow(call, InvalidArgument("page_size: at most 1000, got " +
                                           std::to_string(page)));
  }
  Status valid = ValidateFilterName(request->tenant(), "tenant");
  if (!valid.ok()) return FinishNow(call, valid);
  auto dead = ReadDead(*context_.store, request->tenant(), "",
                       request->after_job_id(), page, kMaxDeadPageBytes);
  if (!dead.ok()) return FinishNow(call, dead.status());
  response->set_more(dead->more);
  for (const auto& [record, letter] : dead->letters) {
    v1::Job* job = response->add_jobs();
    job->set_id(record.id());
    *job->mutable_spec() = record.spec();
    job->set_state(v1::JOB_STATE_DEAD);
    job->set_attempts(letter.attempts());
    job->set_last_error(letter.last_error());
  }
  return FinishWhenDurable(call, *context_.dispatcher, Status::Ok());
}

void AdminService::RequeueDeadLetters(
    Call& call, const v1::RequeueDeadLettersRequest* request,
    v1::RequeueDeadLettersResponse* response) {
  RequeueDeadCommand command{{}, response, {}};
  if (request->target_case() == v1::RequeueDeadLettersRequest::TARGET_NOT_SET) {
    return FinishNow(call,
                     InvalidArgument("job_id or filter: one must be set"));
  }
  if (request->has_filter()) {
    const v1::DeadLetterFilter& filter = request->filter();
    Status valid = config::ValidateName(filter.tenant(), "filter.tenant");
    if (valid.ok()) valid = ValidateFilterName(filter.pool(), "filter.pool");
    if (!valid.ok()) return FinishNow(call, valid);
    auto dead =
        ReadDead(*context_.store, filter.tenant(), filter.pool(),
                 filter.after_job_id(), kMaxRequeuePerCall, kMaxRequeueBytes);
    if (!dead.ok()) return FinishNow(call, dead.status());
    response->set_more(dead->more);
    if (!dead->letters.empty()) {
      response->set_last_job_id(dead->letters.back().first.id());
    }
    for (auto& [record, letter] : dead->letters) {
      command.jobs.push_back(std::move(record));
    }
  } else {
    auto letter = context_.store->GetDead(request->job_id());
    auto record = context_.store->GetJob(request->job_id());
    if (!letter.ok()) return FinishNow(call, letter.status());
    if (!record.ok()) return FinishNow(call, record.status());
    if (!*letter || !*record) {
      return FinishNow(call,
                       NotFound("job_id: " + std::to_string(request->job_id()) +
                                " is not a dead letter"));
    }
    command.jobs.push_back(**record);
    command.by_id = true;
  }
  command.done = FinishLater(call);
  context_.dispatcher->Post(std::move(command));
}

void AdminService::PurgeTenant(Call& call,
                               const v1::PurgeTenantRequest* request,
                               v1::PurgeTenantResponse* response) {
  Status valid = config::ValidateName(request->tenant(), "tenant");
  if (valid.ok() && !request->pool().empty()) {
    valid = config::ValidateName(request->pool(), "pool");
  }
  if (!valid.ok()) return FinishNow(call, valid);
  context_.dispatcher->Post(
      PurgeTenantCommand{request, response, FinishLater(call)});
}

void AdminService::ServeOn(CallLoop& loop) {
  using Async = v1::Admin::AsyncService;
  loop.Serve(&async_, &Async::RequestGetTenant,
             Bind(this, &AdminService::GetTenant));
  loop.Serve(&async_, &Async::RequestListTenants,
             Bind(this, &AdminService::ListTenants));
  loop.Serve(&async_, &Async::RequestSetTenant,
             Bind(this, &AdminService::SetTenant));
  loop.Serve(&async_, &Async::RequestPauseTenant,
             Bind(this, &AdminService::PauseTenant));
  loop.Serve(&async_, &Async::RequestResumeTenant,
             Bind(this, &AdminService::ResumeTenant));
  loop.Serve(&async_, &Async::RequestGetQueueStats,
             Bind(this, &AdminService::GetQueueStats));
  loop.Serve(&async_, &Async::RequestListDeadLetters,
             Bind(this, &AdminService::ListDeadLetters), {.reads_store = true});
  loop.Serve(&async_, &Async::RequestRequeueDeadLetters,
             Bind(this, &AdminService::RequeueDeadLetters),
             {.reads_store = true});
  loop.Serve(&async_, &Async::RequestPurgeTenant,
             Bind(this, &AdminService::PurgeTenant));
}

}  // namespace fairq::server
