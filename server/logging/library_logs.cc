#include "server/logging/library_logs.h"

#include <string>

#include <google/protobuf/stubs/logging.h>
#include <grpc/support/log.h>

#include "server/logging/logging.h"

namespace fairq::logging {
namespace {

void FromGrpc(gpr_log_func_args* args) {
  Level level = args->severity == GPR_LOG_SEVERITY_ERROR ? spdlog::level::err
                : args->severity == GPR_LOG_SEVERITY_INFO
                    ? spdlog::level::info
                    : spdlog::level::debug;
  Log(level, args->message,
      {{"source", "grpc"}, {"file", args->file}, {"line", args->line}});
}

void FromProtobuf(google::protobuf::LogLevel severity, const char* file,
                  int line, const std::string& message) {
  Level level = severity == google::protobuf::LOGLEVEL_FATAL
                    ? spdlog::level::critical
                    : spdlog::level::debug;
  Log(level, message, {{"source", "protobuf"}, {"file", file}, {"line", line}});
}

}  // namespace

void RouteLibraryLogs() {
  gpr_set_log_function(FromGrpc);
  google::protobuf::SetLogHandler(FromProtobuf);
}

}  // namespace fairq::logging
