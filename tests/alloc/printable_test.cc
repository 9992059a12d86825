// SPDX-License-Identifier: MIT
// Printable(): text from input, safe for a terminal and bounded, as every
// parser message and the command line show it (swaplab/alloc/printable.h).
#include "swaplab/alloc/printable.h"

#include <gtest/gtest.h>

#include <string>

namespace swaplab {
namespace {

TEST(Printable, PrintableAsciiIsKept) {
  EXPECT_EQ(Printable("swap-01 ~/a b"), "swap-01 ~/a b");
  EXPECT_EQ(Printable(""), "");
}

TEST(Printable, ControlBytesAndTerminalEscapesAreWrittenAsHex) {
  EXPECT_EQ(Printable("\x1b]0;owned\x07\x1b[2J"), "\\x1b]0;owned\\x07\\x1b[2J");
  EXPECT_EQ(Printable(std::string("a\0b\n\t\x7f", 6)), "a\\x00b\\x0a\\x09\\x7f");
}

TEST(Printable, BytesAbove0x7fAreWrittenAsHex) {
  EXPECT_EQ(Printable("\xc3\xa9"), "\\xc3\\xa9");  // é in UTF-8: not passed to the terminal raw
}

// A backslash is doubled, so that "\x1b" in the input cannot pass for an
// escaped ESC.
TEST(Printable, BackslashIsDoubled) { EXPECT_EQ(Printable("\\x1b"), "\\\\x1b"); }

TEST(Printable, LongTextIsCutSayingHowMuchWasLeftOut) {
  const std::string big(10000, 'x');
  EXPECT_EQ(Printable(big, 64), std::string(64, 'x') + "… (9936 more bytes)");
  EXPECT_EQ(Printable(big).size(),
            256 + std::string("… (9744 more bytes)").size());  // default: 256 bytes
  EXPECT_EQ(Printable(std::string(64, 'y'), 64),
            std::string(64, 'y'));  // exactly the limit: not cut
  // The limit counts input bytes; escapes may make the output longer.
  EXPECT_EQ(Printable(std::string(4, '\x01'), 2), "\\x01\\x01… (2 more bytes)");
}

}  // namespace
}  // namespace swaplab
