#include "bench/bench_context.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>

#include "base/code_name.h"
#include "bench/report.h"

namespace fairq::bench {
namespace {

constexpr char kDefaultServer[] = "127.0.0.1:7070";
// Purging a large backlog is one long dispatcher turn plus a big write.
constexpr double kPurgeExtraSeconds = 120;

// "fb-<unix ms in hex>-<pid>": unique per run on one machine, and a valid
// tenant and pool name ([A-Za-z0-9._-]).
std::string NewRunId() {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  char text[64];
  std::snprintf(text, sizeof(text), "fb-%llx-%d",
                static_cast<unsigned long long>(ms),
                static_cast<int>(getpid()));
  return text;
}

// The run id becomes a pool name and the prefix of tenant names, so it
// must be a valid name with room for a suffix (names are at most 128).
std::string ValidRunId(const std::string& id) {
  if (id.empty() || id.size() > 100) return "must be 1-100 characters";
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
        c != '-') {
      return "may hold only A-Z a-z 0-9 . _ -";
    }
  }
  return "";
}

}  // namespace

void BenchContext::AddFlags(CLI::App* sub) {
  const char* env = std::getenv("FAIRQ_SERVER");
  server_ = env != nullptr && *env != '\0' ? env : kDefaultServer;
  host_at_start_ = ReadHostCpu();
  run_id_ = NewRunId();
  sub->add_option("--server", server_,
                  "fairqd address (default $FAIRQ_SERVER or 127.0.0.1:7070)");
  sub->add_flag("--json", json_, "print one JSON line instead of a table");
  run_id_option_ =
      sub->add_option("--run-id", run_id_,
                      "prefix of this run's tenants and name of its pool "
                      "(default: fb-<time>-<pid>)")
          ->check(ValidRunId);
  sub->add_option(
         "--rpc-timeout", rpc_timeout_seconds_,
         "deadline of each RPC, in seconds (long polls add their wait)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--channels", channel_count_,
                  "gRPC connections shared by the load threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  sub->add_option("--note", note_,
                  "free text kept with the results, e.g. the fairqd config");
  sub->add_flag("--keep", keep_,
                "leave the run's queued jobs in the broker (default: purge)");
}

Status BenchContext::Connect() const {
  auto deadline = std::chrono::system_clock::now() +
                  std::chrono::milliseconds(
                      static_cast<int64_t>(rpc_timeout_seconds_ * 1000));
  Channel(0);  // opens them all
  for (const auto& channel : channels_) {
    if (!channel->WaitForConnected(deadline)) {
      char text[160];
      std::snprintf(text, sizeof(text), "cannot reach fairqd at %s within %g s",
                    server_.c_str(), rpc_timeout_seconds_);
      return Unavailable(text);
    }
  }
  return Status::Ok();
}

void BenchContext::Describe(Report& report) const {
  report.Fact("server", server_);
  report.Fact("run_id", run_id_);
  if (!note_.empty()) report.Fact("note", note_);
}

void BenchContext::Print(Report& report, std::ostream& out) const {
  std::optional<CpuTimes> now = ReadHostCpu();
  if (host_at_start_ && now) {
    if (auto share = ShareBetween(*host_at_start_, *now)) {
      report.Fact("host_busy_pct", share->busy_pct);
      report.Fact("host_steal_pct", share->steal_pct);
    }
  }
  report.Print(out, json_);
}

std::string BenchContext::Tenant(std::string_view name) const {
  return run_id_ + "-" + std::string(name);
}

std::shared_ptr<grpc::Channel> BenchContext::Channel(size_t i) const {
  std::call_once(opened_, [this] {
    for (size_t c = 0; c < channel_count_; ++c) {
      channels_.push_back(MakeChannel(server_));
    }
  });
  return channels_[i % channels_.size()];
}

std::unique_ptr<v1::Producer::Stub> BenchContext::Producer(size_t i) const {
  return v1::Producer::NewStub(Channel(i));
}

std::unique_ptr<v1::Worker::Stub> BenchContext::Worker(size_t i) const {
  return v1::Worker::NewStub(Channel(i));
}

std::unique_ptr<v1::Admin::Stub> BenchContext::Admin() const {
  return v1::Admin::NewStub(Channel(0));
}

void BenchContext::SetDeadline(grpc::ClientContext& context,
                               double extra_seconds) const {
  auto budget =
      std::chrono::duration<double>(rpc_timeout_seconds_ + extra_seconds);
  context.set_deadline(
      std::chrono::system_clock::now() +
      std::chrono::duration_cast<std::chrono::system_clock::duration>(budget));
}

void BenchContext::Cleanup(const std::vector<std::string>& tenants,
                           std::ostream& err) const {
  if (keep_) return;
  std::unique_ptr<v1::Admin::Stub> admin = Admin();
  for (const std::string& tenant : tenants) {
    grpc::ClientContext context;
    SetDeadline(context, kPurgeExtraSeconds);
    v1::PurgeTenantRequest request;
    request.set_tenant(tenant);
    request.set_pool(pool());
    v1::PurgeTenantResponse response;
    grpc::Status status = admin->PurgeTenant(&context, request, &response);
    // NOT_FOUND: the tenant never got a job (e.g. a run cut short).
    if (!status.ok() && status.error_code() != grpc::StatusCode::NOT_FOUND) {
      err << "fairq-bench: clean-up: "
          << FromGrpc(status, "PurgeTenant").ToString() << "\n";
      return;
    }
  }
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& server) {
  grpc::ChannelArguments args;
  // A private subchannel pool gives each channel its own connection.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // A broker that comes back (recovery) is reached within ~0.1 s rather
  // than after gRPC's default backoff of up to 2 min.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 20);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 20);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 100);
  return grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(),
                                   args);
}

Status FromGrpc(const grpc::Status& status, std::string_view rpc) {
  if (status.ok()) return Status::Ok();
  std::string message = std::string(rpc) + ": " +
                        std::string(CanonicalCodeName(static_cast<int>(status.error_code()))) + ": " +
                        status.error_message();
  switch (status.error_code()) {
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::CANCELLED:
      return Status(static_cast<StatusCode>(status.error_code()), message);
    default:
      return Unavailable(message);
  }
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

double MillisSince(std::chrono::steady_clock::time_point start) {
  return SecondsSince(start) * 1000;
}

std::chrono::steady_clock::time_point SecondsFromNow(double seconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(seconds));
}

}  // namespace fairq::bench
