#include "fairqctl/admin_commands.h"

#include <iomanip>
#include <optional>
#include <sstream>

#include "base/format_number.h"
#include "fairqctl/rpc_command.h"
#include "sched/slot_limit.h"

namespace fairq::ctl {
namespace {

std::string LimitText(const v1::SlotLimit& limit) {
  if (limit.has_share()) return sched::SlotLimit::Share(limit.share()).ToString();
  if (limit.has_slots()) return std::to_string(limit.slots());
  return "-";
}

// "queued<=1000, 5/s burst 10", or "-" for a tenant without quotas.
std::string QuotasText(const v1::Quotas& q) {
  std::string text;
  auto add = [&](const std::string& part) {
    text += (text.empty() ? "" : ", ") + part;
  };
  if (q.max_queued() > 0) add("queued<=" + std::to_string(q.max_queued()));
  if (q.enqueue_rate() > 0) {
    add(FormatNumber(q.enqueue_rate()) + "/s" +
        (q.enqueue_burst() > 0 ? " burst " + std::to_string(q.enqueue_burst())
                               : ""));
  }
  return text.empty() ? "-" : text;
}

std::string CapMode(v1::CapMode mode) {
  return mode == v1::CAP_MODE_HARD ? "hard" : "work-conserving";
}

void PrintTenantRow(const v1::Tenant& t, std::ostream& out) {
  out << Pad(t.name(), 20) << Pad(t.org().empty() ? "-" : t.org(), 12)
      << Pad(FormatNumber(t.weight()), 8) << Pad(LimitText(t.cap()), 8)
      << Pad(CapMode(t.cap_mode()), 17) << Pad(LimitText(t.floor()), 8)
      << Pad(QuotasText(t.quotas()), 28) << (t.paused() ? "paused" : "")
      << "\n";
}

void PrintTenantHeader(std::ostream& out) {
  out << Pad("TENANT", 20) << Pad("ORG", 12) << Pad("WEIGHT", 8)
      << Pad("CAP", 8) << Pad("CAP MODE", 17) << Pad("FLOOR", 8)
      << Pad("QUOTAS", 28) << "STATE\n";
}

class TenantsCommand final : public RpcCommand {
 public:
  CLI::App* Register(CLI::App& app) override {
    CLI::App* tenants = app.add_subcommand("tenants", "list, show or set tenants");
    tenants->require_subcommand(1);
    list_ = tenants->add_subcommand("list", "every tenant");
    get_ = tenants->add_subcommand("get", "one tenant");
    get_->add_option("name", name_)->required();
    set_ = tenants->add_subcommand("set", "create or change a tenant");
    set_->add_option("name", name_)->required();
    set_->add_option("--org", org_, "organisation (\"\" for none)");
    set_->add_option("--weight", weight_, "share weight, > 0");
    set_->add_option("--cap", cap_, "running-job cap: 4, 50% or none");
    set_->add_option("--cap-mode", cap_mode_, "hard or work-conserving")
        ->check(CLI::IsMember({"hard", "work-conserving"}));
    set_->add_option("--floor", floor_, "reserved slots: 2, 25% or none");
    set_->add_option("--max-queued", max_queued_, "backlog quota (0: none)")
        ->check(Decimal());
    set_->add_option("--rate", rate_, "enqueue rate quota, jobs/s (0: none)");
    set_->add_option("--burst", burst_, "enqueue burst (0: max(1, rate))")
        ->check(Decimal());
    for (CLI::App* sub : {list_, get_, set_}) AddConnectionFlags(sub);
    return tenants;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    if (list_->parsed()) return List(out, err);
    v1::GetTenantRequest get;
    get.set_name(name_);
    if (!StringsAreUtf8(get, err)) return kExitUsage;
    v1::Tenant tenant;
    auto get_context = Context();
    grpc::Status status = Admin()->GetTenant(get_context.get(), get, &tenant);
    if (set_->parsed() &&
        (status.ok() || status.error_code() == grpc::StatusCode::NOT_FOUND)) {
      v1::SetTenantRequest request;
      *request.mutable_tenant() = tenant;
      if (int code = Apply(&request, err); code != kExitOk) return code;
      if (!StringsAreUtf8(request, err)) return kExitUsage;
      auto context = Context();
      status = Admin()->SetTenant(context.get(), request, &tenant);
    }
    if (!status.ok()) return Fail(status, err);
    return Print(tenant, out, [&](std::ostream& o) {
      PrintTenantHeader(o);
      PrintTenantRow(tenant, o);
    });
  }

 private:
  const char* name() const override { return "tenants"; }

  int List(std::ostream& out, std::ostream& err) {
    v1::ListTenantsResponse response;
    auto context = Context();
    grpc::Status status = Admin()->ListTenants(context.get(), {}, &response);
    if (!status.ok()) return Fail(status, err);
    return Print(response, out, [&](std::ostream& o) {
      PrintTenantHeader(o);
      for (const v1::Tenant& t : response.tenants()) PrintTenantRow(t, o);
    });
  }

  // "none" clears; otherwise the scheduler's own parser decides.
  static int SetLimit(const std::string& text, const char* field,
                      v1::SlotLimit* limit, std::ostream& err) {
    limit->Clear();
    if (text == "none") return kExitOk;
    auto parsed = sched::SlotLimit::Parse(text, field);
    if (!parsed.ok()) {
      err << "fairqctl tenants set: " << parsed.status().message() << "\n";
      return kExitUsage;
    }
    if (parsed->is_share()) {
      limit->set_share(parsed->value());
    } else {
      limit->set_slots(static_cast<uint32_t>(parsed->value()));
    }
    return kExitOk;
  }

  // The flags given, over the tenant as read, with those flags as the
  // update mask: the broker changes them in one step and keeps the rest
  // (with no flags, a new tenant gets the config's tenant_defaults and a
  // known one is left as it is). A daemon older than update_mask takes the
  // whole tenant instead, which keeps the rest as read.
  int Apply(v1::SetTenantRequest* request, std::ostream& err) const {
    v1::Tenant* t = request->mutable_tenant();
    t->set_name(name_);
    if (org_) t->set_org(*org_);
    if (weight_) t->set_weight(*weight_);
    if (cap_mode_) {
      t->set_cap_mode(*cap_mode_ == "hard" ? v1::CAP_MODE_HARD
                                           : v1::CAP_MODE_WORK_CONSERVING);
    }
    if (cap_ && SetLimit(*cap_, "--cap", t->mutable_cap(), err) != kExitOk) {
      return kExitUsage;
    }
    if (floor_ &&
        SetLimit(*floor_, "--floor", t->mutable_floor(), err) != kExitOk) {
      return kExitUsage;
    }
    if (max_queued_) t->mutable_quotas()->set_max_queued(*max_queued_);
    if (rate_) t->mutable_quotas()->set_enqueue_rate(*rate_);
    if (burst_) t->mutable_quotas()->set_enqueue_burst(*burst_);
    const std::pair<bool, const char*> flags[] = {
        {org_.has_value(), "org"},
        {weight_.has_value(), "weight"},
        {cap_mode_.has_value(), "cap_mode"},
        {cap_.has_value(), "cap"},
        {floor_.has_value(), "floor"},
        {max_queued_.has_value(), "quotas.max_queued"},
        {rate_.has_value(), "quotas.enqueue_rate"},
        {burst_.has_value(), "quotas.enqueue_burst"}};
    google::protobuf::FieldMask* mask = request->mutable_update_mask();
    for (const auto& [given, path] : flags) {
      if (given) mask->add_paths(path);
    }
    return kExitOk;
  }

  CLI::App* list_ = nullptr;
  CLI::App* get_ = nullptr;
  CLI::App* set_ = nullptr;
  std::string name_;
  std::optional<std::string> org_, cap_, cap_mode_, floor_;
  std::optional<double> weight_, rate_;
  std::optional<uint64_t> max_queued_;
  std::optional<uint32_t> burst_;
};

class PauseCommand final : public RpcCommand {
 public:
  explicit PauseCommand(bool pause) : pause_(pause) {}

  CLI::App* Register(CLI::App& app) override {
    CLI::App* sub = pause_ ? app.add_subcommand("pause", "stop leasing a tenant's jobs")
                           : app.add_subcommand("resume", "lease a paused tenant's jobs again");
    sub->add_option("tenant", tenant_)->required();
    AddConnectionFlags(sub);
    return sub;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    v1::PauseTenantRequest request;
    request.set_name(tenant_);
    if (!StringsAreUtf8(request, err)) return kExitUsage;
    v1::Tenant tenant;
    auto context = Context();
    grpc::Status status =
        pause_ ? Admin()->PauseTenant(context.get(), request, &tenant)
               : Admin()->ResumeTenant(context.get(), request, &tenant);
    if (!status.ok()) return Fail(status, err);
    return Print(tenant, out, [&](std::ostream& o) {
      o << tenant.name() << (tenant.paused() ? " paused" : " resumed") << "\n";
    });
  }

 private:
  const char* name() const override { return pause_ ? "pause" : "resume"; }
  const bool pause_;
  std::string tenant_;
};

class StatsCommand final : public RpcCommand {
 public:
  CLI::App* Register(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("stats", "per-tenant queue depth, waits and usage");
    sub->add_option("--tenant", request_tenant_, "only this tenant");
    sub->add_option("--pool", request_pool_, "only this pool");
    AddConnectionFlags(sub);
    return sub;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    v1::GetQueueStatsRequest request;
    request.set_tenant(request_tenant_);
    request.set_pool(request_pool_);
    if (!StringsAreUtf8(request, err)) return kExitUsage;
    v1::GetQueueStatsResponse response;
    auto context = Context();
    grpc::Status status = Admin()->GetQueueStats(context.get(), request, &response);
    if (!status.ok()) return Fail(status, err);
    return Print(response, out, [&](std::ostream& o) { Table(response, o); });
  }

 private:
  const char* name() const override { return "stats"; }

  static void Table(const v1::GetQueueStatsResponse& r, std::ostream& o) {
    o << Pad("TENANT", 20) << Pad("POOL", 10) << Pad("READY", 9) << Pad("SCHED", 7)
      << Pad("LEASED", 8) << Pad("DEAD", 6) << Pad("WAIT P99 S", 11)
      << Pad("OLDEST S", 10) << Pad("WORKER-S", 11) << "SHARE\n";
    for (const v1::TenantStats& s : r.tenants()) {
      // Fixed, not the stream's default 6 digits: 1.4e+06 worker-seconds
      // or a 1e-05% share read badly in a table.
      std::ostringstream share, worker;
      share << std::fixed << std::setprecision(1) << s.share() * 100 << "%";
      worker << std::fixed << std::setprecision(1) << s.worker_seconds();
      o << Pad(s.tenant(), 20) << Pad(s.pool(), 10) << Pad(std::to_string(s.ready()), 9)
        << Pad(std::to_string(s.scheduled()), 7) << Pad(std::to_string(s.leased()), 8)
        << Pad(std::to_string(s.dead()), 6) << Pad(Seconds(s.wait_p99()), 11)
        << Pad(Seconds(s.oldest_ready_age()), 10) << Pad(worker.str(), 11)
        << share.str() << "\n";
    }
  }

  std::string request_tenant_, request_pool_;
};

class DeadCommand final : public RpcCommand {
 public:
  CLI::App* Register(CLI::App& app) override {
    CLI::App* dead = app.add_subcommand("dead", "list or requeue dead letters");
    dead->require_subcommand(1);
    list_ = dead->add_subcommand("list", "dead jobs, oldest first");
    list_->add_option("--tenant", tenant_, "only this tenant");
    list_->add_option("--limit", limit_, "at most this many (1-1000)")
        ->check(Decimal())
        ->check(CLI::Range(1u, 1000u));
    list_->add_option("--after", after_, "only jobs after this job id")
        ->check(Decimal());
    requeue_ = dead->add_subcommand("requeue", "back to READY with fresh attempts");
    requeue_->add_option("job_id", job_id_, "one dead job")->check(Decimal());
    CLI::Option* tenant =
        requeue_->add_option("--tenant", tenant_, "every dead job of a tenant");
    requeue_->add_option("--pool", pool_, "with --tenant: only this pool")
        ->needs(tenant);
    for (CLI::App* sub : {list_, requeue_}) AddConnectionFlags(sub);
    return dead;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    return list_->parsed() ? List(out, err) : Requeue(out, err);
  }

 private:
  const char* name() const override { return "dead"; }

  int List(std::ostream& out, std::ostream& err) {
    v1::ListDeadLettersRequest request;
    request.set_tenant(tenant_);
    request.set_page_size(limit_);
    request.set_after_job_id(after_);
    if (!StringsAreUtf8(request, err)) return kExitUsage;
    v1::ListDeadLettersResponse response;
    auto context = Context();
    grpc::Status status = Admin()->ListDeadLetters(context.get(), request, &response);
    if (!status.ok()) return Fail(status, err);
    return Print(response, out, [&](std::ostream& o) {
      o << Pad("JOB", 12) << Pad("TENANT", 20) << Pad("ATTEMPTS", 10) << "LAST ERROR\n";
      for (const v1::Job& job : response.jobs()) {
        o << Pad(std::to_string(job.id()), 12) << Pad(job.spec().tenant(), 20)
          << Pad(std::to_string(job.attempts()), 10)
          << Printable(job.last_error()) << "\n";
      }
      if (response.more()) {
        o << "(more: list again with --after " << response.jobs().rbegin()->id()
          << ")\n";
      }
    });
  }

  int Requeue(std::ostream& out, std::ostream& err) {
    if ((job_id_ == 0) == tenant_.empty()) {
      err << "fairqctl dead requeue: give a job id or --tenant (one of "
             "them)\n";
      return kExitUsage;
    }
    v1::RequeueDeadLettersRequest request;
    if (job_id_ != 0) {
      request.set_job_id(job_id_);
    } else {
      request.mutable_filter()->set_tenant(tenant_);
      request.mutable_filter()->set_pool(pool_);
    }
    if (!StringsAreUtf8(request, err)) return kExitUsage;
    // The broker moves a filter's matches a call's worth at a time, each
    // call going on after the last id the one before read. A call may move
    // none of a page (another requeue took them first) and still go on; it
    // stops when there is no more, or when the last id stands still.
    v1::RequeueDeadLettersResponse total;
    bool again = false;
    do {
      v1::RequeueDeadLettersResponse response;
      auto context = Context();
      grpc::Status status =
          Admin()->RequeueDeadLetters(context.get(), request, &response);
      if (!status.ok()) {
        if (total.requeued() > 0) {
          err << "fairqctl dead requeue: requeued " << total.requeued()
              << " before this error\n";
        }
        return Fail(status, err);
      }
      total.set_requeued(total.requeued() + response.requeued());
      total.set_more(response.more());
      total.set_last_job_id(response.last_job_id());
      uint64_t after = request.filter().after_job_id();
      again = response.more() && response.last_job_id() > after;
      request.mutable_filter()->set_after_job_id(response.last_job_id());
    } while (again);
    int printed = Print(total, out, [&](std::ostream& o) {
      o << "requeued " << total.requeued() << "\n";
    });
    if (total.more()) {
      err << "fairqctl dead requeue: more remain, but the broker's answers "
             "stopped advancing\n";
      return kExitFailure;
    }
    return printed;
  }

  CLI::App* list_ = nullptr;
  CLI::App* requeue_ = nullptr;
  std::string tenant_, pool_;
  uint32_t limit_ = 100;
  uint64_t after_ = 0;
  uint64_t job_id_ = 0;
};

}  // namespace

std::unique_ptr<Command> MakeTenantsCommand() { return std::make_unique<TenantsCommand>(); }
std::unique_ptr<Command> MakePauseCommand() { return std::make_unique<PauseCommand>(true); }
std::unique_ptr<Command> MakeResumeCommand() { return std::make_unique<PauseCommand>(false); }
std::unique_ptr<Command> MakeStatsCommand() { return std::make_unique<StatsCommand>(); }
std::unique_ptr<Command> MakeDeadCommand() { return std::make_unique<DeadCommand>(); }

}  // namespace fairq::ctl
