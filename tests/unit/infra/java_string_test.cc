#include "infra/java_string.h"

#include <gtest/gtest.h>

#include <climits>

namespace elasticjob::infra {
namespace {

TEST(JavaStringTest, HashCodeMatchesJavaForAscii) {
  EXPECT_EQ(JavaStringHashCode(""), 0);
  EXPECT_EQ(JavaStringHashCode("1"), 49);
  EXPECT_EQ(JavaStringHashCode("myJob"), 104343153);               // "myJob".hashCode() on a JVM
  EXPECT_EQ(JavaStringHashCode("polygenelubricants"), INT32_MIN);  // wraps to MIN_VALUE
}

TEST(JavaStringTest, HashCodeRunsOverUtf16CodeUnits) {
  // "订单" is U+8BA2 U+5355: 31 * 0x8BA2 + 0x5355, not a hash over its six UTF-8 bytes.
  EXPECT_EQ(JavaStringHashCode("订单"), 31 * 0x8BA2 + 0x5355);
  // U+1F600 is the surrogate pair D83D DE00.
  EXPECT_EQ(JavaStringHashCode("😀"), 31 * 0xD83D + 0xDE00);
}

TEST(JavaStringTest, InvalidUtf8CountsAsReplacementCharacter) {
  EXPECT_EQ(JavaStringHashCode("\xff"), 0xFFFD);
}

TEST(JavaStringTest, Utf16RoundTrip) {
  std::string s = "a订😀é";
  EXPECT_EQ(Utf16ToUtf8(Utf8ToUtf16(s)), s);
  EXPECT_EQ(Utf8ToUtf16("😀").size(), 2u);
}

TEST(JavaStringTest, CompareToOrdersByUtf16Units) {
  EXPECT_TRUE(JavaStringLess("a", "b"));
  EXPECT_FALSE(JavaStringLess("b", "a"));
  // U+FF21 sorts after the surrogate D83D in UTF-16, before it in UTF-8 byte order.
  EXPECT_TRUE(JavaStringLess("😀", "\xef\xbc\xa1"));
}

TEST(JavaStringTest, AbsModIsDefinedForMinValue) {
  EXPECT_EQ(JavaAbsMod(-7, 3), 1);
  EXPECT_EQ(JavaAbsMod(INT32_MIN, 3), static_cast<int>(2147483648LL % 3));
  EXPECT_EQ(JavaAbsMod(INT32_MIN, 4), 0);  // where Java's own answer (0) is defined
}

}  // namespace
}  // namespace elasticjob::infra
