// ErrorText on its own: what a Fail report's error may carry.
#include "client/sdk/error_text.h"

#include <gtest/gtest.h>

#include <string>

namespace fairq::client::internal {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";

TEST(ErrorTextTest, ValidTextPassesUnchanged) {
  for (std::string text :
       {std::string(), std::string("disk full"),
        std::string("kn\xC3\xB6wn \xE2\x82\xAC \xF0\x9F\x98\x80"),  // ö € 😀
        std::string(kMaxErrorBytes, 'x')}) {
    EXPECT_EQ(ErrorText(text), text);
  }
}

TEST(ErrorTextTest, EachInvalidByteBecomesAReplacementCharacter) {
  struct Case {
    std::string in, out;
  };
  const std::string r = kReplacement;
  for (const Case& c : std::vector<Case>{
           {"a\xFF"
            "b",
            "a" + r + "b"},                      // never valid
           {"\xC0\xAF", r + r},                  // overlong '/'
           {"\xE0\x80\xAF", r + r + r},          // overlong, 3 bytes
           {"\xED\xA0\x80", r + r + r},          // a surrogate
           {"\xF4\x90\x80\x80", r + r + r + r},  // above U+10FFFF
           {"\xC3", r},                          // cut short at the end
           {"\xE2\x82"
            "x",
            r + r + "x"},  // cut short in the middle
           {"\x80"
            "ok",
            r + "ok"},  // a stray continuation
       }) {
    EXPECT_EQ(ErrorText(c.in), c.out) << "input of " << c.in.size() << " bytes";
  }
}

TEST(ErrorTextTest, LongTextIsCutAtACharacterWithAMark) {
  std::string ascii = ErrorText(std::string(5000, 'x'));
  EXPECT_EQ(ascii, std::string(kMaxErrorBytes - 3, 'x') + "...");

  // 2-byte characters from an odd offset: the cut may not split one.
  std::string text = "x";
  while (text.size() < 5000) text += "\xC3\xB6";
  std::string cut = ErrorText(text);
  EXPECT_LE(cut.size(), kMaxErrorBytes);
  EXPECT_GE(cut.size(), kMaxErrorBytes - 4);
  ASSERT_EQ(cut.substr(cut.size() - 3), "...");
  EXPECT_EQ(ErrorText(cut), cut) << "the cut text is valid UTF-8";
  EXPECT_EQ(cut.substr(0, cut.size() - 3), text.substr(0, cut.size() - 3));

  // Invalid bytes grow threefold as replacements; the limit still holds.
  std::string grown = ErrorText(std::string(3000, '\xFF'));
  EXPECT_LE(grown.size(), kMaxErrorBytes);
  EXPECT_EQ(grown.substr(grown.size() - 3), "...");
}

}  // namespace
}  // namespace fairq::client::internal
