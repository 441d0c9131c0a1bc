// IsValidUtf8 on its own (ErrorText's tests cover the replacement side).
#include "client/sdk/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace fairq::client::internal {
namespace {

TEST(Utf8Test, TellsValidFromInvalid) {
  for (std::string valid :
       {std::string(), std::string("plain"), std::string("\xC3\xB6"),
        std::string("\xE2\x82\xAC"), std::string("\xF0\x9F\x98\x80"),
        std::string("\xF4\x8F\xBF\xBF"), std::string(1, '\0')}) {
    EXPECT_TRUE(IsValidUtf8(valid)) << valid.size() << " bytes";
  }
  for (std::string invalid :
       {std::string("\xFF"), std::string("\xC0\xAF"),
        std::string("\xED\xA0\x80"), std::string("\xF4\x90\x80\x80"),
        std::string("ok\xC3"), std::string("\x80")}) {
    EXPECT_FALSE(IsValidUtf8(invalid)) << invalid.size() << " bytes";
  }
}

}  // namespace
}  // namespace fairq::client::internal
