#include "fairqctl/job_commands.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>

#include "fairqctl/rpc_command.h"
#include "google/protobuf/util/time_util.h"

namespace fairq::ctl {
namespace {

using google::protobuf::util::TimeUtil;

const char* StateName(v1::JobState state) {
  switch (state) {
    case v1::JOB_STATE_READY:
      return "READY";
    case v1::JOB_STATE_SCHEDULED:
      return "SCHEDULED";
    case v1::JOB_STATE_LEASED:
      return "LEASED";
    case v1::JOB_STATE_SUCCEEDED:
      return "SUCCEEDED";
    case v1::JOB_STATE_DEAD:
      return "DEAD";
    case v1::JOB_STATE_CANCELED:
      return "CANCELED";
    default:
      return "UNKNOWN";
  }
}

void PrintJob(const v1::Job& job, std::ostream& out) {
  out << "id          " << job.id() << "\n"
      << "tenant      " << job.spec().tenant() << "\n"
      << "pool        " << (job.spec().pool().empty() ? "default" : job.spec().pool())
      << "\n"
      << "state       " << StateName(job.state()) << "\n"
      << "priority    " << job.spec().priority() << "\n"
      << "attempts    " << job.attempts() << "\n"
      << "enqueued_at " << TimeUtil::ToString(job.enqueued_at()) << "\n"
      << "payload     " << job.spec().payload().size() << " bytes\n";
  if (!job.last_error().empty()) {
    out << "last_error  " << Printable(job.last_error()) << "\n";
  }
}

class EnqueueCommand final : public RpcCommand {
 public:
  CLI::App* Register(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("enqueue", "queue one job");
    sub->add_option("--tenant", spec_tenant_, "tenant")->required();
    sub->add_option("--pool", pool_, "worker pool (default: default)");
    sub->add_option("--priority", priority_, "-1000..1000, higher first")
        ->check(Decimal(/*negative=*/true));
    sub->add_option("--cost", cost_, "estimated worker-seconds (0-1e9)")
        ->check(Finite())
        ->check(CLI::Range(0.0, 1e9));
    CLI::Option* text = sub->add_option("--payload", payload_, "payload text");
    sub->add_option("--payload-file", payload_file_,
                    "read the payload from a file (-: standard input)")
        ->check(CLI::Validator(
            [](std::string& path) {
              return path == "-" ? std::string() : CLI::ExistingFile(path);
            },
            "FILE or -"))
        ->excludes(text);
    sub->add_option("--key", key_, "idempotency key");
    sub->add_option("--delay", delay_,
                    "seconds before it may run (0-31536000, 365 days)")
        ->check(Finite())
        ->check(CLI::Range(0.0, 365.0 * 86400));
    sub->add_option("--max-attempts", max_attempts_, "attempts before DEAD")
        ->check(Decimal());
    sub->add_option("--label", labels_, "key=value, repeatable");
    AddConnectionFlags(sub);
    return sub;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    v1::EnqueueRequest request;
    if (int code = Build(request.mutable_job(), err); code != kExitOk) return code;
    if (!StringsAreUtf8(request, err)) return kExitUsage;
    v1::EnqueueResponse response;
    auto context = Context();
    grpc::Status status = Producer()->Enqueue(context.get(), request, &response);
    if (!status.ok()) return Fail(status, err, context.get());
    return Print(response, out, [&](std::ostream& o) {
      o << "job " << response.job_id()
        << (response.duplicate() ? " (duplicate: already queued)" : "") << "\n";
    });
  }

 private:
  const char* name() const override { return "enqueue"; }

  int Build(v1::JobSpec* spec, std::ostream& err) const {
    spec->set_tenant(spec_tenant_);
    spec->set_pool(pool_);
    spec->set_priority(priority_);
    if (cost_ >= 0) spec->set_estimated_cost_seconds(cost_);
    spec->set_payload(payload_);
    if (!payload_file_.empty()) {
      std::string why;
      if (!ReadPayload(spec->mutable_payload(), &why)) {
        err << "fairqctl enqueue: --payload-file: cannot read " << payload_file_
            << ": " << why << "\n";
        return kExitUsage;
      }
    }
    spec->set_idempotency_key(key_);
    spec->set_max_attempts(max_attempts_);
    if (delay_ > 0) {
      *spec->mutable_delay() =
          TimeUtil::MillisecondsToDuration(static_cast<int64_t>(delay_ * 1000));
    }
    for (const std::string& label : labels_) {
      size_t eq = label.find('=');
      if (eq == std::string::npos) {
        err << "fairqctl enqueue: --label: expected key=value, got \"" << label
            << "\"\n";
        return kExitUsage;
      }
      (*spec->mutable_labels())[label.substr(0, eq)] = label.substr(eq + 1);
    }
    return kExitOk;
  }

  // The whole file, or standard input for "-"; an empty one is an empty
  // payload. (Streaming rdbuf() into a stringstream fails on no bytes.)
  bool ReadPayload(std::string* bytes, std::string* why) const {
    std::ifstream file;
    std::istream* in = &std::cin;
    if (payload_file_ != "-") {
      file.open(payload_file_, std::ios::binary);
      if (!file) {
        *why = std::strerror(errno);
        return false;
      }
      in = &file;
    }
    bytes->assign(std::istreambuf_iterator<char>(*in), {});
    if (in->bad()) *why = "read error";
    return !in->bad();
  }

  std::string spec_tenant_, pool_, payload_, payload_file_, key_;
  int32_t priority_ = 0;
  double cost_ = -1;
  double delay_ = 0;
  uint32_t max_attempts_ = 0;
  std::vector<std::string> labels_;
};

// `get` and `cancel`: one job id, one RPC, the job printed.
class JobIdCommand final : public RpcCommand {
 public:
  explicit JobIdCommand(bool cancel) : cancel_(cancel) {}

  CLI::App* Register(CLI::App& app) override {
    CLI::App* sub = cancel_
                        ? app.add_subcommand("cancel", "cancel a READY or SCHEDULED job")
                        : app.add_subcommand("get", "show a job");
    sub->add_option("job_id", job_id_, "job id")->required()->check(Decimal());
    AddConnectionFlags(sub);
    return sub;
  }

  int Run(std::ostream& out, std::ostream& err) override {
    v1::Job job;
    auto context = Context();
    grpc::Status status;
    if (cancel_) {
      v1::CancelJobRequest request;
      request.set_job_id(job_id_);
      status = Producer()->CancelJob(context.get(), request, &job);
    } else {
      v1::GetJobRequest request;
      request.set_job_id(job_id_);
      status = Producer()->GetJob(context.get(), request, &job);
    }
    if (!status.ok()) return Fail(status, err, context.get());
    return Print(job, out, [&](std::ostream& o) { PrintJob(job, o); });
  }

 private:
  const char* name() const override { return cancel_ ? "cancel" : "get"; }

  const bool cancel_;
  uint64_t job_id_ = 0;
};

}  // namespace

std::unique_ptr<Command> MakeEnqueueCommand() {
  return std::make_unique<EnqueueCommand>();
}
std::unique_ptr<Command> MakeGetCommand() {
  return std::make_unique<JobIdCommand>(false);
}
std::unique_ptr<Command> MakeCancelCommand() {
  return std::make_unique<JobIdCommand>(true);
}

}  // namespace fairq::ctl
