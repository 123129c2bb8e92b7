#include "infra/printable.h"

#include <gtest/gtest.h>

namespace elasticjob::infra {
namespace {

TEST(PrintableTest, EscapesControlCharactersAsHex) {
  EXPECT_EQ(Printable("a\nb\x7f", 100), "a\\x0Ab\\x7F");
}

TEST(PrintableTest, EscapesTheBytesOfABinaryFileThatAreNotUtf8) {
  // The start of an ELF file, and bytes no UTF-8 text holds.
  EXPECT_EQ(Printable(std::string_view("\x7f"
                                       "ELF\x02\x01\x00\xfe\xff",
                                       9),
                      100),
            "\\x7FELF\\x02\\x01\\x00\\xFE\\xFF");
}

TEST(PrintableTest, KeepsWellFormedUtf8) {
  EXPECT_EQ(Printable("北京 café 😀", 100), "北京 café 😀");
}

TEST(PrintableTest, EscapesMalformedUtf8SequencesByteByByte) {
  EXPECT_EQ(Printable("\xc3", 100), "\\xC3");                    // cut short
  EXPECT_EQ(Printable("\xc0\xaf", 100), "\\xC0\\xAF");           // overlong '/'
  EXPECT_EQ(Printable("\xed\xa0\x80", 100), "\\xED\\xA0\\x80");  // a surrogate
  EXPECT_EQ(Printable("\x80x", 100), "\\x80x");                  // a lone continuation byte
}

TEST(PrintableTest, CutsLongTextWithAnEllipsis) {
  EXPECT_EQ(Printable("abcdef", 3), "abc...");
  EXPECT_EQ(OneLine(std::string(2000, 'a')).size(), 1003u);
}

}  // namespace
}  // namespace elasticjob::infra
