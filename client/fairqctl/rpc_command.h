// RpcCommand: what every fairqctl subcommand that talks to fairqd shares:
// --server (else $FAIRQ_SERVER, else 127.0.0.1:7070), --json, --timeout,
// the gRPC stubs, and how results and errors are printed. An error prints
// the gRPC status in plain words and the command exits 1.
//
// Not thread-safe; one command runs once on main's thread.
#ifndef FAIRQ_CLIENT_FAIRQCTL_RPC_COMMAND_H_
#define FAIRQ_CLIENT_FAIRQCTL_RPC_COMMAND_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "fairq/v1/fairq.grpc.pb.h"
#include "fairqctl/command.h"

namespace fairq::ctl {

class RpcCommand : public Command {
 protected:
  // Adds --server, --json and --timeout to `sub`.
  void AddConnectionFlags(CLI::App* sub);
  std::unique_ptr<v1::Producer::Stub> Producer();
  std::unique_ptr<v1::Admin::Stub> Admin();
  // A context with the --timeout deadline.
  std::unique_ptr<grpc::ClientContext> Context() const;

  // Prints `message` as JSON (--json) or calls `table` to print it for
  // people. Returns kExitOk, or kExitFailure if `out` could not be written.
  int Print(const google::protobuf::Message& message, std::ostream& out,
            const std::function<void(std::ostream&)>& table) const;
  // "fairqctl NAME: NOT_FOUND: tenant: unknown tenant \"x\" (not found)",
  // plus the broker's retry hint when `context` carries one.
  int Fail(const grpc::Status& status, std::ostream& err,
           const grpc::ClientContext* context = nullptr) const;

  // False, with the field named on `err`, if a `string` field of `request`
  // is not UTF-8: the broker's parser would refuse the call as INTERNAL,
  // naming no field. Call before sending; exit with kExitUsage on false.
  bool StringsAreUtf8(const google::protobuf::Message& request,
                      std::ostream& err) const;

  bool json() const { return json_; }

 private:
  int Written(std::ostream& out) const;
  std::shared_ptr<grpc::Channel> Channel();
  virtual const char* name() const = 0;

  std::string server_;
  bool json_ = false;
  double timeout_seconds_ = 10;
  std::shared_ptr<grpc::Channel> channel_;
};

// Column formatting for the human tables.
std::string Pad(const std::string& text, size_t width);
// `text` with control characters escaped (\n, \t, \xNN; C1 as \u0080),
// for text from workers (errors) printed to a terminal: one line, and no
// escape sequence reaches the operator's terminal.
std::string Printable(std::string_view text);
std::string Seconds(const google::protobuf::Duration& d);

}  // namespace fairq::ctl

#endif  // FAIRQ_CLIENT_FAIRQCTL_RPC_COMMAND_H_
