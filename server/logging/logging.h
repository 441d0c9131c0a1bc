// fairqd's logs: spdlog's default logger writing to stderr, as text for
// people or as JSON (one object per line) for collectors, with structured
// fields (tenant, job_id, pool, ...) that a call site attaches to a line:
//
//   logging::Log(spdlog::level::debug, "job leased",
//                {{"tenant", name}, {"job_id", id}, {"worker", worker}});
//
// text: [2024-05-01 12:00:00.123] [debug] job leased tenant=acme job_id=7 ...
// json: {"ts":"2024-05-01T10:00:00.123Z","level":"debug","msg":"job leased",
//        "tenant":"acme","job_id":7,...}
//
// How fields reach the formatter: Log() points a thread-local at them for
// the duration of one synchronous spdlog call, and the formatters (which
// spdlog runs on the calling thread, under the sink's lock) render them.
// That keeps each call site one line, costs nothing when the level is off,
// and needs no parsing of the message. It requires synchronous loggers,
// which is all fairqd uses; lines logged through spdlog directly simply
// have no fields.
//
// Thread-safety: Log() from any thread. ApplyLogConfig() may run while
// other threads log: the level is atomic and spdlog swaps a sink's
// formatter under the sink's lock.
#ifndef FAIRQ_SERVER_LOGGING_LOGGING_H_
#define FAIRQ_SERVER_LOGGING_LOGGING_H_

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

#include "server/config/daemon_config.h"

namespace fairq::logging {

using Level = spdlog::level::level_enum;

// One key and value. Holds views only: it lives for one Log() call, while
// the strings it points at are alive. Keys are plain identifiers; "ts",
// "level" and "msg" are taken.
struct Field {
  enum class Kind : uint8_t { kString, kInt, kUint, kDouble, kBool, kTime };

  Field(std::string_view k, std::string_view v)
      : key(k), kind(Kind::kString), str(v) {}
  Field(std::string_view k, const std::string& v)
      : Field(k, std::string_view(v)) {}
  Field(std::string_view k, const char* v) : Field(k, std::string_view(v)) {}
  template <std::integral T>
  Field(std::string_view k, T v) : key(k) {
    if constexpr (std::same_as<T, bool>) {
      kind = Kind::kBool;
      boolean = v;
    } else if constexpr (std::signed_integral<T>) {
      kind = Kind::kInt;
      integer = v;
    } else {
      kind = Kind::kUint;
      unsigned_integer = v;
    }
  }
  Field(std::string_view k, double v) : key(k), kind(Kind::kDouble), real(v) {}
  // A point in time, rendered as RFC 3339 UTC with milliseconds.
  static Field Time(std::string_view k, int64_t unix_ms) {
    Field f(k, unix_ms);
    f.kind = Kind::kTime;
    return f;
  }

  std::string_view key;
  Kind kind;
  std::string_view str;  // kString
  union {
    int64_t integer = 0;  // kInt, kTime (unix milliseconds)
    uint64_t unsigned_integer;
    double real;
    bool boolean;
  };
};

using Fields = std::span<const Field>;

// Logs `msg` with `context` then `fields` through the default logger,
// whatever its level. Call sites use Log(), which checks the level first.
void Write(Level level, std::string_view msg, Fields context, Fields fields);

inline void Log(Level level, std::string_view msg,
                std::initializer_list<Field> fields = {}) {
  if (spdlog::should_log(level)) {
    Write(level, msg, {}, Fields(fields.begin(), fields.size()));
  }
}

// The formatter for `format`. Text is spdlog's usual line (local time)
// followed by " key=value" per field, values quoted and escaped when they
// hold spaces, quotes or control characters. JSON is one object per line:
// "ts" (RFC 3339, UTC, milliseconds), "level" (trace, debug, info, warn,
// error, critical), "msg", then the fields; strings are escaped, and bytes
// that are not UTF-8 become U+FFFD, so every line is valid JSON.
std::unique_ptr<spdlog::formatter> MakeFormatter(config::LogFormat format);

// Makes the default logger write to stderr, as text at info, until
// ApplyLogConfig. stdout is not used: see server/main.cc.
void InstallStderrLogger();

// Sets the default logger's level and format (startup and SIGHUP).
void ApplyLogConfig(const config::LogConfig& config);

}  // namespace fairq::logging

#endif  // FAIRQ_SERVER_LOGGING_LOGGING_H_
