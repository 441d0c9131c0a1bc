// Commands: what the gRPC handlers hand to the dispatcher thread. Each
// carries pointers to the call's request and response (owned by gRPC, valid
// until `done` runs) and `done`, which finishes the call.
//
// Threading: built by a handler (on the dispatcher thread, or on the rpc
// reads thread and moved through the dispatcher's queue), handled on the
// dispatcher thread; `done` runs after the command's turn is
// durable (or failed), on the writer's sync thread; for a Lease that got
// jobs, earlier (a lease may be forgotten by a power loss: the job is
// redelivered): on the dispatcher thread once it hands the turn to the
// writer when every spec came from the payload cache, else on the apply
// thread once the turn is applied. A reload's organisations and
// MetricsSnapshot, which neither write nor report anything stored, run it on
// the dispatcher thread at once. A command never runs `done` twice, and
// every command runs it exactly once, even at shutdown.
#ifndef FAIRQ_SERVER_BROKER_COMMANDS_H_
#define FAIRQ_SERVER_BROKER_COMMANDS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <variant>
#include <vector>

#include "base/status.h"
#include "fairq/v1/fairq.pb.h"
#include "fairq/v1/records.pb.h"
#include "metrics/broker_state.h"
#include "sched/types.h"

namespace fairq::server {

// How far ahead of its enqueue a job may be scheduled, by `delay` or
// `not_before`.
inline constexpr int64_t kMaxScheduleAheadMs = 365LL * 24 * 3600 * 1000;

// Finishes an RPC with the operation's status.
using Done = std::function<void(const Status&)>;

// Identifies one waiting Lease call, so its cancellation can find it.
using WaiterId = uint64_t;

struct EnqueueCommand {
  // Jobs already validated field by field by the handler.
  std::vector<const v1::JobSpec*> jobs;
  // One result per job, in order. For a single Enqueue the handler maps
  // results[0] to the call's status.
  v1::EnqueueBatchResponse* response;
  Done done;
};

struct LeaseCommand {
  WaiterId waiter;
  const v1::LeaseRequest* request;  // validated
  v1::LeaseResponse* response;
  Done done;
};

// The Lease call `waiter` was canceled by its client before it was answered.
struct LeaseCanceledCommand {
  WaiterId waiter;
};

// A Lease reply with jobs was not delivered (the client went away): the
// jobs go back to their queues at once, without using up an attempt.
struct LeaseUndeliveredCommand {
  std::vector<std::pair<uint64_t, uint64_t>> leases;  // job id, token
  // The call was answered with an error (reading the jobs' specs failed):
  // each attempt counts as failed, so that a job that cannot be read goes
  // round with a backoff, and DEAD in the end, rather than at once again.
  bool failed = false;
};

struct HeartbeatCommand {
  const v1::HeartbeatRequest* request;
  v1::HeartbeatResponse* response;
  Done done;
};

struct CompleteCommand {
  const v1::CompleteRequest* request;  // validated
  v1::AckResponse* response;
  Done done;
};

struct FailCommand {
  const v1::FailRequest* request;  // validated
  v1::AckResponse* response;
  Done done;
};

struct ReleaseCommand {
  const v1::ReleaseRequest* request;  // validated
  v1::AckResponse* response;
  Done done;
};

// The handler read the job record; the dispatcher adds live state.
struct GetJobCommand {
  v1::Job* job;  // id and spec filled in by the handler
  Done done;
};

struct CancelJobCommand {
  v1::Job* job;  // id and spec filled in by the handler
  Done done;
};

struct SetTenantCommand {
  const v1::Tenant* tenant;  // validated
  v1::Tenant* response;
  Done done;
  // Listed in the config file (SIGHUP): created whatever max_tenants says,
  // as a start creates it.
  bool from_config = false;
  // Null: `tenant` replaces every setting. Else only the paths named
  // (validated: config::ValidateTenantMask) are taken from it.
  const google::protobuf::FieldMask* mask = nullptr;
};

// Part of a ReloadCommand: the config file's organisations, added or
// reweighted (at start, Broker::Restore applies them; they are not stored).
// An organisation no longer in the file keeps its weight until the next
// start.
struct SetOrgsCommand {
  std::vector<sched::OrgConfig> orgs;  // validated
  Done done;
};

// Part of a ReloadCommand: the pools the config file lists; those not known
// yet are created (as at start, whatever auto_create_pools and max_pools
// say).
struct AddPoolsCommand {
  std::vector<std::string> pools;
  Done done;
};

// SIGHUP: the config file's organisations, pools and listed tenants'
// settings, in one command so that a reload takes one place in the queue
// and applies in one turn, in that order (a tenant moved into a new
// organisation finds it with its weight), or, refused, not at all. Each
// part's `done` hears how it went if it was applied; `done` runs once the
// whole is durable, or with the refusal.
struct ReloadCommand {
  struct Parts {
    SetOrgsCommand orgs;
    AddPoolsCommand pools;
    std::vector<SetTenantCommand> tenants;  // from_config
  };
  // By pointer: held inline, the parts would double every queued Command.
  std::unique_ptr<Parts> parts;
  Done done;
};

struct GetTenantCommand {
  std::string name;
  v1::Tenant* response;
  Done done;
};

struct ListTenantsCommand {
  v1::ListTenantsResponse* response;
  Done done;
};

struct PauseTenantCommand {
  std::string name;
  bool paused;
  v1::Tenant* response;
  Done done;
};

struct QueueStatsCommand {
  const v1::GetQueueStatsRequest* request;
  v1::GetQueueStatsResponse* response;
  Done done;
};

// Dead letters to requeue, read from the store by the handler.
struct RequeueDeadCommand {
  std::vector<v1::JobRecord> jobs;
  v1::RequeueDeadLettersResponse* response;
  Done done;
  // One job named by id: NOT_FOUND if it is no longer a dead letter (another
  // requeue took it since the handler read it), as when it never was.
  bool by_id = false;
};

// A reply the handler built from a store read, released once everything
// applied before it is durable. Writes are readable as soon as they are
// applied, before their fsync: without this, a read could report a job
// finished (NOT_FOUND, DEAD) that a power loss then brings back.
struct SyncBarrierCommand {
  Status status;
  Done done;
};

struct PurgeTenantCommand {
  const v1::PurgeTenantRequest* request;
  v1::PurgeTenantResponse* response;
  Done done;
};

// A metrics scrape: `visit` gets the broker's state on the dispatcher
// thread, then `done` runs there too (it writes nothing, so it need not
// wait for the writer).
struct MetricsSnapshotCommand {
  metrics::SnapshotVisitor visit;
  Done done;
};

using Command =
    std::variant<EnqueueCommand, LeaseCommand, LeaseCanceledCommand,
                 LeaseUndeliveredCommand, HeartbeatCommand, CompleteCommand,
                 FailCommand, ReleaseCommand, GetJobCommand, CancelJobCommand,
                 SetTenantCommand, ReloadCommand, GetTenantCommand,
                 ListTenantsCommand, PauseTenantCommand, QueueStatsCommand,
                 RequeueDeadCommand, SyncBarrierCommand, PurgeTenantCommand,
                 MetricsSnapshotCommand>;

// Runs a command's `done` with `status` (for commands that carry one).
void FinishCommand(Command& command, const Status& status);

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_COMMANDS_H_
