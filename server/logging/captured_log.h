// CapturedLog, for tests: while it lives, spdlog's default logger writes
// fairqd's text format (ApplyLogConfig's default) into a string, lines at
// `level` and above; the previous logger comes back when it goes. Swaps the
// process-wide logger, so one at a time, on the test's thread.
#ifndef FAIRQ_SERVER_LOGGING_CAPTURED_LOG_H_
#define FAIRQ_SERVER_LOGGING_CAPTURED_LOG_H_

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>
#include <string>

#include "server/logging/logging.h"

namespace fairq::logging {

class CapturedLog {
 public:
  explicit CapturedLog(spdlog::level::level_enum level = spdlog::level::info) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    sink->set_level(level);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("", sink));
    ApplyLogConfig({});
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  std::string text() const { return out_.str(); }

 private:
  std::shared_ptr<spdlog::logger> previous_ = spdlog::default_logger();
  std::ostringstream out_;
};

}  // namespace fairq::logging

#endif  // FAIRQ_SERVER_LOGGING_CAPTURED_LOG_H_
