// Routes what gRPC and protobuf would print to stderr themselves through
// fairqd's logger, so that every stderr line has the configured format
// (one JSON object per line stays true) and library messages that a
// client's bad request triggers are not logged per request.
//
// Thread-safety: call once at startup, before any gRPC or protobuf use
// (protobuf's SetLogHandler is not thread-safe).
#ifndef FAIRQ_SERVER_LOGGING_LIBRARY_LOGS_H_
#define FAIRQ_SERVER_LOGGING_LIBRARY_LOGS_H_

namespace fairq::logging {

// gRPC's lines keep their severity (debug, info, error; gRPC's own
// GRPC_VERBOSITY still filters first). protobuf's non-fatal lines go to
// debug: in a server they are about peers' messages, e.g. one ERROR per
// request with invalid UTF-8 in a string field, which gRPC already answers
// with an error status. FATAL stays critical.
void RouteLibraryLogs();

}  // namespace fairq::logging

#endif  // FAIRQ_SERVER_LOGGING_LIBRARY_LOGS_H_
