// The log formats: every JSON line parses back (with protobuf's JSON reader)
// to what was logged, whatever the message holds; text lines carry the
// fields as key=value; the level and format follow the config.
#include "server/logging/logging.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/sinks/ostream_sink.h>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace fairq::logging {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;

class LoggingTest : public ::testing::Test {
 protected:
  // The default logger, writing to `out_`, as ApplyLogConfig sets it.
  void Use(config::LogFormat format,
           config::LogLevel level = config::LogLevel::kTrace) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("", sink));
    ApplyLogConfig({level, format});
  }

  void TearDown() override { InstallStderrLogger(); }

  std::vector<std::string> Lines() const {
    std::vector<std::string> lines;
    std::istringstream in(out_.str());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  // The one line logged so far, parsed; fails the test otherwise.
  google::protobuf::Struct OnlyObject() const {
    std::vector<std::string> lines = Lines();
    EXPECT_EQ(lines.size(), 1u) << out_.str();
    EXPECT_THAT(out_.str(), EndsWith("}\n"));
    return lines.empty() ? google::protobuf::Struct() : Parse(lines[0]);
  }

  static google::protobuf::Struct Parse(const std::string& line) {
    google::protobuf::Struct object;
    auto status = google::protobuf::util::JsonStringToMessage(line, &object);
    EXPECT_TRUE(status.ok()) << status.ToString() << "\nline: " << line;
    return object;
  }

  static const google::protobuf::Value& Get(
      const google::protobuf::Struct& object, const std::string& key) {
    static const google::protobuf::Value kMissing;
    auto it = object.fields().find(key);
    EXPECT_NE(it, object.fields().end()) << "no \"" << key << "\"";
    return it == object.fields().end() ? kMissing : it->second;
  }

  std::ostringstream out_;
};

TEST_F(LoggingTest, JsonLineHasTimeLevelMessageAndTypedFields) {
  Use(config::LogFormat::kJson);
  uint64_t job_id = 7;
  Log(spdlog::level::info, "job leased",
      {{"tenant", "acme"},
       {"job_id", job_id},
       {"attempt", uint16_t{2}},
       {"delta", -3},
       {"runtime_s", 0.25},
       {"retryable", true},
       Field::Time("due", 1714557600123)});
  google::protobuf::Struct line = OnlyObject();
  EXPECT_THAT(Get(line, "ts").string_value(),
              MatchesRegex(R"(20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:)"
                           R"([0-5][0-9]:[0-6][0-9]\.[0-9][0-9][0-9]Z)"));
  EXPECT_EQ(Get(line, "level").string_value(), "info");
  EXPECT_EQ(Get(line, "msg").string_value(), "job leased");
  EXPECT_EQ(Get(line, "tenant").string_value(), "acme");
  EXPECT_EQ(Get(line, "job_id").number_value(), 7);
  EXPECT_EQ(Get(line, "attempt").number_value(), 2);
  EXPECT_EQ(Get(line, "delta").number_value(), -3);
  EXPECT_EQ(Get(line, "runtime_s").number_value(), 0.25);
  EXPECT_TRUE(Get(line, "retryable").bool_value());
  EXPECT_EQ(Get(line, "due").string_value(), "2024-05-01T10:00:00.123Z");
  EXPECT_EQ(line.fields_size(), 10);
}

TEST_F(LoggingTest, JsonTimestampIsUtcWithMilliseconds) {
  Use(config::LogFormat::kJson);
  Log(spdlog::level::info, "t",
      {Field::Time("epoch", 0), Field::Time("before_epoch", -1),
       Field::Time("leap_day", 951782400999)});
  google::protobuf::Struct line = OnlyObject();
  EXPECT_EQ(Get(line, "epoch").string_value(), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(Get(line, "before_epoch").string_value(),
            "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(Get(line, "leap_day").string_value(), "2000-02-29T00:00:00.999Z");
}

TEST_F(LoggingTest, JsonEscapesMessageAndValuesIntoOneLine) {
  Use(config::LogFormat::kJson);
  const std::string nasty =
      "quote \" backslash \\ slash / newline \n tab \t cr \r bell \a "
      "nul-free \x01\x1f del \x7f caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 "
      "{\"json\": [1]}";
  // A multi-line message, like the effective configuration at startup.
  Log(spdlog::level::warn, "effective configuration:\nlisten: x\nlog: y",
      {{"error", nasty}, {"odd key \"\n", "v"}});
  google::protobuf::Struct line = OnlyObject();
  EXPECT_EQ(Get(line, "level").string_value(), "warn");
  EXPECT_EQ(Get(line, "msg").string_value(),
            "effective configuration:\nlisten: x\nlog: y");
  EXPECT_EQ(Get(line, "error").string_value(), nasty);
  EXPECT_EQ(Get(line, "odd key \"\n").string_value(), "v");
  EXPECT_THAT(out_.str(), Not(HasSubstr("\t")));
}

TEST_F(LoggingTest, JsonReplacesBytesThatAreNotUtf8) {
  Use(config::LogFormat::kJson);
  // A lone continuation byte, a truncated sequence, an overlong '/', a
  // surrogate, a code point past U+10FFFF; the good sequences survive.
  const std::string bad =
      "a\x80" "b\xc3" "c\xc0\xaf" "d\xed\xa0\x80" "e\xf4\x90\x80\x80" "f\xc3";
  Log(spdlog::level::info, bad, {{"error", "ok \xc3\xa9 \xff"}});
  google::protobuf::Struct line = OnlyObject();
  const std::string r = "\xef\xbf\xbd";  // U+FFFD
  EXPECT_EQ(Get(line, "msg").string_value(),
            "a" + r + "b" + r + "c" + r + r + "d" + r + r + r + "e" + r + r +
                r + r + "f" + r);
  EXPECT_EQ(Get(line, "error").string_value(), "ok \xc3\xa9 " + r);
}

TEST_F(LoggingTest, NonFiniteNumbersBecomeNull) {
  Use(config::LogFormat::kJson);
  Log(spdlog::level::info, "n", {{"nan", std::nan("")}, {"inf", HUGE_VAL}});
  google::protobuf::Struct line = OnlyObject();
  EXPECT_TRUE(Get(line, "nan").has_null_value());
  EXPECT_TRUE(Get(line, "inf").has_null_value());
}

TEST_F(LoggingTest, PlainSpdlogLinesAreJsonWithoutFields) {
  Use(config::LogFormat::kJson);
  Log(spdlog::level::err, "with", {{"tenant", "acme"}});
  spdlog::critical("plain {} \"{}\"", 1, "two");
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  google::protobuf::Struct first = Parse(lines[0]);
  EXPECT_EQ(Get(first, "level").string_value(), "error");
  google::protobuf::Struct second = Parse(lines[1]);
  EXPECT_EQ(Get(second, "level").string_value(), "critical");
  EXPECT_EQ(Get(second, "msg").string_value(), "plain 1 \"two\"");
  EXPECT_EQ(second.fields_size(), 3);  // the tenant did not leak
}

TEST_F(LoggingTest, TextKeepsTheMessageAndAppendsKeyValues) {
  Use(config::LogFormat::kText);
  Log(spdlog::level::info, "job failed",
      {{"tenant", "acme"},
       {"job_id", uint64_t{42}},
       {"retryable", false},
       {"error", "disk \"full\"\nagain"},
       {"empty", ""},
       Field::Time("due", 0)});
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u) << out_.str();
  EXPECT_THAT(lines[0], StartsWith("["));
  EXPECT_THAT(lines[0], HasSubstr("[info] job failed tenant=acme job_id=42 "
                                  "retryable=false "
                                  "error=\"disk \\\"full\\\"\\nagain\" "
                                  "empty=\"\" "
                                  "due=1970-01-01T00:00:00.000Z"));
  EXPECT_THAT(lines[0], EndsWith("Z"));
}

TEST_F(LoggingTest, LevelFiltersBeforeAnythingIsWritten) {
  Use(config::LogFormat::kJson, config::LogLevel::kWarn);
  Log(spdlog::level::debug, "hidden", {{"tenant", "acme"}});
  Log(spdlog::level::info, "hidden too");
  EXPECT_FALSE(spdlog::should_log(spdlog::level::info));
  EXPECT_EQ(out_.str(), "");
  Log(spdlog::level::warn, "shown");
  EXPECT_EQ(Get(OnlyObject(), "msg").string_value(), "shown");
}

TEST_F(LoggingTest, ApplyLogConfigSwitchesFormatAndLevel) {
  Use(config::LogFormat::kText, config::LogLevel::kInfo);
  Log(spdlog::level::debug, "not yet");
  Log(spdlog::level::info, "as text", {{"k", 1}});
  ApplyLogConfig({config::LogLevel::kDebug, config::LogFormat::kJson});
  Log(spdlog::level::debug, "as json", {{"k", 2}});
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 2u) << out_.str();
  EXPECT_THAT(lines[0], HasSubstr("[info] as text k=1"));
  google::protobuf::Struct json = Parse(lines[1]);
  EXPECT_EQ(Get(json, "level").string_value(), "debug");
  EXPECT_EQ(Get(json, "k").number_value(), 2);
}

// Fields travel by a thread-local: lines logged concurrently keep their own.
TEST_F(LoggingTest, ConcurrentLinesKeepTheirOwnFields) {
  Use(config::LogFormat::kJson);
  constexpr int kThreads = 4, kLines = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      std::string name = "thread-" + std::to_string(t);
      for (int i = 0; i < kLines; ++i) {
        Log(spdlog::level::info, name, {{"thread", name}, {"i", i}});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kLines));
  std::vector<int> next(kThreads, 0);
  for (const std::string& text : lines) {
    google::protobuf::Struct line = Parse(text);
    const std::string& name = Get(line, "thread").string_value();
    ASSERT_EQ(Get(line, "msg").string_value(), name);
    int t = name.back() - '0';
    ASSERT_EQ(Get(line, "i").number_value(), next[t]++);
  }
}

}  // namespace
}  // namespace fairq::logging
