#include "fairqctl/rpc_command.h"

#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "base/code_name.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"

namespace fairq::ctl {
namespace {

constexpr char kDefaultServer[] = "127.0.0.1:7070";

// What each gRPC code means for someone at a terminal.
const char* Explain(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "the request was refused as invalid";
    case grpc::StatusCode::NOT_FOUND:
      return "not found";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "not possible in the job's current state";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "over a quota or the broker is busy; retry later";
    case grpc::StatusCode::UNAVAILABLE:
      return "the broker is unreachable, shutting down or in a failed state";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "no answer within --timeout";
    default:
      return "the call failed";
  }
}

}  // namespace

void RpcCommand::AddConnectionFlags(CLI::App* sub) {
  const char* env = std::getenv("FAIRQ_SERVER");
  server_ = env != nullptr && *env != '\0' ? env : kDefaultServer;
  sub->add_option("--server", server_,
                  "fairqd address (default $FAIRQ_SERVER or 127.0.0.1:7070)");
  sub->add_flag("--json", json_, "print JSON instead of a table");
  sub->add_option("--timeout", timeout_seconds_,
                  "seconds to wait for fairqd (0.001-86400)")
      ->check(Finite())
      ->check(CLI::Range(0.001, 86400.0));
}

std::shared_ptr<grpc::Channel> RpcCommand::Channel() {
  if (!channel_) {
    channel_ = grpc::CreateChannel(server_, grpc::InsecureChannelCredentials());
  }
  return channel_;
}

std::unique_ptr<v1::Producer::Stub> RpcCommand::Producer() {
  return v1::Producer::NewStub(Channel());
}

std::unique_ptr<v1::Admin::Stub> RpcCommand::Admin() {
  return v1::Admin::NewStub(Channel());
}

std::unique_ptr<grpc::ClientContext> RpcCommand::Context() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(
      std::chrono::system_clock::now() +
      std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds_ * 1000)));
  return context;
}

int RpcCommand::Print(const google::protobuf::Message& message,
                      std::ostream& out,
                      const std::function<void(std::ostream&)>& table) const {
  if (!json_) {
    table(out);
    return kExitOk;
  }
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  // A count of 0 or a false flag is printed, not left out: scripts read
  // the keys they expect.
  options.always_print_primitive_fields = true;
  auto printed =
      google::protobuf::util::MessageToJsonString(message, &text, options);
  if (!printed.ok()) {
    std::cerr << "fairqctl " << name()
              << ": cannot print JSON: " << printed.ToString() << "\n";
    return kExitFailure;
  }
  out << text << "\n";
  return kExitOk;
}

int RpcCommand::Fail(const grpc::Status& status, std::ostream& err,
                     const grpc::ClientContext* context) const {
  err << "fairqctl " << name() << ": " << CanonicalCodeName(static_cast<int>(status.error_code())) << ": "
      << status.error_message() << " (" << Explain(status.error_code())
      << ")\n";
  if (context != nullptr) {
    const auto& trailers = context->GetServerTrailingMetadata();
    auto hint = trailers.find("fairq-retry-after-ms");
    if (hint != trailers.end()) {
      err << "retry after " << std::string(hint->second.data(), hint->second.size())
          << " ms\n";
    }
  }
  return kExitFailure;
}

std::string Pad(const std::string& text, size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

std::string Seconds(const google::protobuf::Duration& d) {
  double seconds = static_cast<double>(
                       google::protobuf::util::TimeUtil::DurationToMilliseconds(d)) /
                   1000;
  std::ostringstream text;
  text << std::fixed << std::setprecision(3) << seconds;
  return text.str();
}

}  // namespace fairq::ctl
