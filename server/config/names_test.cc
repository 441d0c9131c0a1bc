#include "server/config/names.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace fairq::config {
namespace {

using ::testing::HasSubstr;

std::string ErrorOf(std::string_view name) {
  Status status = ValidateName(name, "tenant");
  EXPECT_FALSE(status.ok()) << name;
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  return status.message();
}

TEST(ValidateNameTest, AcceptsTheWholeCharset) {
  EXPECT_TRUE(ValidateName("a", "tenant").ok());
  EXPECT_TRUE(ValidateName("Team-7_batch.v2", "tenant").ok());
  EXPECT_TRUE(
      ValidateName("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                   "0123456789._-",
                   "pool")
          .ok());
  EXPECT_TRUE(ValidateName(std::string(kMaxNameLength, 'x'), "tenant").ok());
}

// The hot paths use NameProblem and name the field themselves.
TEST(ValidateNameTest, NameProblemSaysWhatIsWrongWithoutAField) {
  EXPECT_EQ(NameProblem("Team-7_batch.v2"), std::nullopt);
  EXPECT_EQ(NameProblem(""), "must not be empty");
  EXPECT_EQ(NameProblem("x/y"),
            "character '/' at position 2 is not allowed (use A-Z, a-z, 0-9, "
            "'.', '_', '-')");
  EXPECT_EQ(NameProblem(std::string(kMaxNameLength + 1, 'x')),
            "must be at most 128 characters, got 129");
}

TEST(ValidateNameTest, RejectsEmptyAndTooLong) {
  EXPECT_EQ(ErrorOf(""), "tenant: must not be empty");
  EXPECT_EQ(ErrorOf(std::string(kMaxNameLength + 1, 'x')),
            "tenant: must be at most 128 characters, got 129");
}

TEST(ValidateNameTest, RejectsOtherCharactersByPosition) {
  EXPECT_EQ(ErrorOf("a b"),
            "tenant: character ' ' at position 2 is not allowed (use A-Z, "
            "a-z, 0-9, '.', '_', '-')");
  EXPECT_THAT(ErrorOf("a/b"), HasSubstr("character '/' at position 2"));
  EXPECT_THAT(ErrorOf("ab:"), HasSubstr("character ':' at position 3"));
  EXPECT_THAT(ErrorOf("\xc3\xa9t\xc3\xa9"),
              HasSubstr("character 0xc3 at position 1"));
  EXPECT_THAT(ErrorOf("x\n"), HasSubstr("character 0x0a at position 2"));
  EXPECT_THAT(ErrorOf(std::string("a\0b", 3)),
              HasSubstr("character 0x00 at position 2"));
}

TEST(ValidateNameTest, NamesTheGivenField) {
  EXPECT_EQ(ValidateName("", "tenants[3].name").message(),
            "tenants[3].name: must not be empty");
  EXPECT_EQ(ValidateName("", "pool").message(), "pool: must not be empty");
}

}  // namespace
}  // namespace fairq::config
