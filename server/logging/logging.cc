#include "server/logging/logging.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <iterator>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace fairq::logging {
namespace {

// The fields of the Write() call running on this thread, if any.
struct ActiveFields {
  Fields context;
  Fields fields;
};
thread_local const ActiveFields* t_active = nullptr;

template <class Fn>
void ForEachActiveField(Fn fn) {
  if (t_active == nullptr) return;
  for (const Field& field : t_active->context) fn(field);
  for (const Field& field : t_active->fields) fn(field);
}

// Out is spdlog's memory_buf_t or std::string.
template <class Out>
void Append(Out& out, std::string_view text) {
  out.append(text.data(), text.data() + text.size());
}

std::string_view LevelName(Level level) {
  switch (level) {
    case spdlog::level::trace:
      return "trace";
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warn";
    case spdlog::level::err:
      return "error";
    case spdlog::level::critical:
      return "critical";
    default:
      return "off";
  }
}

// The length of the well-formed UTF-8 sequence `s` starts with, or 0
// (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
size_t Utf8Length(std::string_view s) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // allowed second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

// The inside of a JSON string. Also used for quoted text values, so that a
// multi-line message still takes one line.
template <class Out>
void AppendEscaped(std::string_view text, Out& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      size_t length = Utf8Length(text.substr(i));
      Append(out, length == 0 ? "\\ufffd" : text.substr(i, length));
      i += length == 0 ? 1 : length;
      continue;
    }
    switch (c) {
      case '"':
        Append(out, "\\\"");
        break;
      case '\\':
        Append(out, "\\\\");
        break;
      case '\n':
        Append(out, "\\n");
        break;
      case '\r':
        Append(out, "\\r");
        break;
      case '\t':
        Append(out, "\\t");
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          Append(out, "\\u00");
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xf]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
}

template <class Out>
void AppendTime(int64_t unix_ms, Out& out) {
  std::time_t seconds = static_cast<std::time_t>(
      unix_ms >= 0 ? unix_ms / 1000 : (unix_ms - 999) / 1000);
  int64_t millis = unix_ms - static_cast<int64_t>(seconds) * 1000;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  fmt::format_to(std::back_inserter(out),
                 "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                 tm.tm_min, tm.tm_sec, millis);
}

// Numbers, booleans and times; strings are left to the caller, which
// quotes them its own way. Non-finite doubles have no JSON form: null.
template <class Out>
void AppendScalar(const Field& field, Out& out) {
  auto to = std::back_inserter(out);
  switch (field.kind) {
    case Field::Kind::kInt:
      fmt::format_to(to, "{}", field.integer);
      break;
    case Field::Kind::kUint:
      fmt::format_to(to, "{}", field.unsigned_integer);
      break;
    case Field::Kind::kDouble:
      if (std::isfinite(field.real)) {
        fmt::format_to(to, "{}", field.real);
      } else {
        Append(out, "null");
      }
      break;
    case Field::Kind::kBool:
      Append(out, field.boolean ? "true" : "false");
      break;
    case Field::Kind::kTime:
      AppendTime(field.integer, out);
      break;
    case Field::Kind::kString:
      break;
  }
}

void AppendJsonField(const Field& field, spdlog::memory_buf_t& out) {
  Append(out, ",\"");
  AppendEscaped(field.key, out);
  Append(out, "\":");
  bool quoted =
      field.kind == Field::Kind::kString || field.kind == Field::Kind::kTime;
  if (quoted) out.push_back('"');
  if (field.kind == Field::Kind::kString) {
    AppendEscaped(field.str, out);
  } else {
    AppendScalar(field, out);
  }
  if (quoted) out.push_back('"');
}

// logfmt style: bare when unambiguous, else quoted and escaped.
void AppendTextField(const Field& field, spdlog::memory_buf_t& out) {
  out.push_back(' ');
  Append(out, field.key);
  out.push_back('=');
  if (field.kind != Field::Kind::kString) {
    AppendScalar(field, out);
    return;
  }
  bool bare = !field.str.empty();
  for (char c : field.str) {
    auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u == '"' || u == '=' || u == '\\' || u == 0x7f) {
      bare = false;
      break;
    }
  }
  if (!bare) out.push_back('"');
  AppendEscaped(field.str, out);
  if (!bare) out.push_back('"');
}

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg,
              spdlog::memory_buf_t& dest) override {
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    Append(dest, "{\"ts\":\"");
    AppendTime(duration_cast<milliseconds>(msg.time.time_since_epoch()).count(),
               dest);
    Append(dest, "\",\"level\":\"");
    Append(dest, LevelName(msg.level));
    Append(dest, "\",\"msg\":\"");
    AppendEscaped(std::string_view(msg.payload.data(), msg.payload.size()),
                  dest);
    dest.push_back('"');
    ForEachActiveField([&](const Field& f) { AppendJsonField(f, dest); });
    Append(dest, "}\n");
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

// The text format's %& flag: the fields after the message.
class TextFieldsFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    ForEachActiveField([&](const Field& f) { AppendTextField(f, dest); });
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<TextFieldsFlag>();
  }
};

Level ToLevel(config::LogLevel level) {
  switch (level) {
    case config::LogLevel::kTrace:
      return spdlog::level::trace;
    case config::LogLevel::kDebug:
      return spdlog::level::debug;
    case config::LogLevel::kInfo:
      return spdlog::level::info;
    case config::LogLevel::kWarn:
      return spdlog::level::warn;
    case config::LogLevel::kError:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

}  // namespace

void Write(Level level, std::string_view msg, Fields context, Fields fields) {
  ActiveFields active{context, fields};
  const ActiveFields* outer = t_active;
  t_active = &active;
  spdlog::default_logger_raw()->log(
      level, spdlog::string_view_t(msg.data(), msg.size()));
  t_active = outer;
}

std::unique_ptr<spdlog::formatter> MakeFormatter(config::LogFormat format) {
  if (format == config::LogFormat::kJson) {
    return std::make_unique<JsonFormatter>();
  }
  // "%+" is spdlog's default line; the fields follow the message.
  auto text = std::make_unique<spdlog::pattern_formatter>();
  text->add_flag<TextFieldsFlag>('&').set_pattern("%+%&");
  return text;
}

void InstallStderrLogger() {
  auto logger = std::make_shared<spdlog::logger>(
      "", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_formatter(MakeFormatter(config::LogFormat::kText));
  spdlog::set_default_logger(std::move(logger));
}

void ApplyLogConfig(const config::LogConfig& config) {
  spdlog::logger& logger = *spdlog::default_logger_raw();
  logger.set_formatter(MakeFormatter(config.format));
  logger.set_level(ToLevel(config.level));
}

}  // namespace fairq::logging
