#include "fairqctl/rpc_command.h"

#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <vector>

#include "base/code_name.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"
#include "sdk/utf8.h"

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
      return "not possible in the current state";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      // max_tenants refuses a new tenant until one is removed: a retry
      // alone helps only with a quota or a busy broker.
      return "over a quota or a limit, or the broker is busy";
    case grpc::StatusCode::UNAVAILABLE:
      return "the broker is unreachable, shutting down or in a failed state";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "no answer within --timeout";
    default:
      return "the call failed";
  }
}

// The path of the first `string` field in `message` that is not UTF-8
// ("job.labels" for a map's key or value).
std::optional<std::string> NotUtf8(const google::protobuf::Message& message,
                                   const std::string& prefix) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    const std::string path = prefix + field->name();
    const int n =
        field->is_repeated() ? reflection->FieldSize(message, field) : 1;
    for (int i = 0; i < n; ++i) {
      if (field->type() == FieldDescriptor::TYPE_STRING) {
        std::string scratch;
        const std::string& value =
            field->is_repeated()
                ? reflection->GetRepeatedStringReference(message, field, i,
                                                         &scratch)
                : reflection->GetStringReference(message, field, &scratch);
        if (!client::internal::IsValidUtf8(value)) return path;
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        const google::protobuf::Message& inner =
            field->is_repeated()
                ? reflection->GetRepeatedMessage(message, field, i)
                : reflection->GetMessage(message, field);
        if (auto bad = NotUtf8(inner, path + ".")) {
          return field->is_map() ? path : *bad;
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace

bool RpcCommand::StringsAreUtf8(const google::protobuf::Message& request,
                                std::ostream& err) const {
  std::optional<std::string> bad = NotUtf8(request, "");
  if (!bad) return true;
  err << "fairqctl " << name() << ": " << *bad << ": not valid UTF-8\n";
  return false;
}

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
    // gRPC's default 4 MiB would refuse a job with a larger payload (up to
    // 64 MiB) or a long tenant list, as RESOURCE_EXHAUSTED.
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    channel_ = grpc::CreateCustomChannel(
        server_, grpc::InsecureChannelCredentials(), args);
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
    return Written(out);
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
  return Written(out);
}

// A full disk or a closed pipe must not pass for success in a script.
int RpcCommand::Written(std::ostream& out) const {
  if (out.flush()) return kExitOk;
  std::cerr << "fairqctl " << name() << ": cannot write the output\n";
  return kExitFailure;
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

// Hand-written: absl::Utf8SafeCHexEscape leaves every byte >= 0x80 alone,
// C1 controls (CSI, U+009B, starts an escape sequence) included, and
// escapes quotes and backslashes that need no escaping on a terminal.
std::string Printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next =
        i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += {'\\', 'x', kHex[c >> 4], kHex[c & 0xf]};
    } else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {  // C1: U+0080-9F
      out += {'\\', 'u', '0', '0', kHex[next >> 4], kHex[next & 0xf]};
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
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
