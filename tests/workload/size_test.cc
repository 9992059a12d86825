// SPDX-License-Identifier: MIT
// The one size parser (size.h): every form the command line and the
// scenario files accept, and every error.
#include "swaplab/workload/size.h"

#include <gtest/gtest.h>

namespace swaplab::workload {
namespace {

constexpr uint64_t kK = 1024, kM = kK * 1024, kG = kM * 1024, kT = kG * 1024;

TEST(ParseSize, EveryUnitInEveryCaseWithAndWithoutBOrIB) {
  EXPECT_EQ(*ParseSize("0"), 0u);
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("4096B"), 4096u);
  EXPECT_EQ(*ParseSize("4096b"), 4096u);
  const std::pair<const char*, uint64_t> units[] = {{"K", kK}, {"M", kM}, {"G", kG}, {"T", kT}};
  for (auto [u, mul] : units) {
    const std::string up = u, low(1, static_cast<char>(std::tolower(u[0])));
    for (const std::string& unit :
         {up, low, up + "B", low + "b", up + "iB", low + "ib", up + "IB", low + "iB"}) {
      auto r = ParseSize("3" + unit);
      ASSERT_TRUE(r.ok()) << unit << ": " << r.status().ToString();
      EXPECT_EQ(*r, 3 * mul) << unit;
    }
  }
  EXPECT_EQ(*ParseSize("5530M"), 5530 * kM);
  EXPECT_EQ(*ParseSize("16383T"), 16383 * kT);
  EXPECT_EQ(*ParseSize("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(*ParseSize("00064K"), 64 * kK);
}

TEST(ParseSize, FractionsRoundToWholePagesWholeOnesAsWritten) {
  EXPECT_EQ(*ParseSize("7.5G"), 7 * kG + kG / 2);
  EXPECT_EQ(*ParseSize("5.4G"),
            (static_cast<uint64_t>(5.4 * static_cast<double>(kG) + 0.5) + 2048) / 4096 * 4096);
  EXPECT_EQ(*ParseSize("0.5K"), 0u);     // 512 bytes: to the nearest page
  EXPECT_EQ(*ParseSize("2.5K"), 4096u);  // 2560 bytes
  EXPECT_EQ(*ParseSize(".5M"), kM / 2);
  EXPECT_EQ(*ParseSize("6.0K"), 6 * kK);  // whole: as written, not a page multiple
  EXPECT_EQ(*ParseSize("6.K"), 6 * kK);
  EXPECT_EQ(*ParseSize("1.5"), 0u);
}

TEST(ParseSize, ErrorsNameWhatIsWrong) {
  for (const char* bad : {"", "K", ".", ".K", "-1K", "+1K", " 1K", "abc", "1e3"}) {
    auto r = ParseSize(bad);
    EXPECT_EQ(r.status().code(), -EINVAL) << bad;
  }
  EXPECT_NE(ParseSize("abc").status().message().find("is not a size"), std::string::npos);
  for (const char* bad :
       {"1P", "1KK", "1Kx", "1KiBB", "1 K", "1k b", "1Bi", "1iB", "1e3", "4K\n"}) {
    auto r = ParseSize(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("unknown unit"), std::string::npos)
        << bad << ": " << r.status().message();
  }
  for (const char* big : {"18446744073709551616", "16777216T", "17179869184G",
                          "99999999999999999999999", "16777216.5T"}) {
    auto r = ParseSize(big);
    ASSERT_FALSE(r.ok()) << big;
    EXPECT_NE(r.status().message().find("too large"), std::string::npos)
        << big << ": " << r.status().message();
  }
  // Bytes from the input in a message are made printable.
  EXPECT_EQ(ParseSize("1\x01").status().message().find('\x01'), std::string::npos);
}

TEST(ParseSizeOrPages, PlainNumbersArePagesUnitsAreBytes) {
  EXPECT_EQ(*ParseSizeOrPages("1000"), 1000u);
  EXPECT_EQ(*ParseSizeOrPages("64M"), 16384u);
  EXPECT_EQ(*ParseSizeOrPages("4KiB"), 1u);
  auto r = ParseSizeOrPages("6K");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("whole number of 4 KiB pages"), std::string::npos);
  EXPECT_EQ(ParseSizeOrPages("7x").status().code(), -EINVAL);
}

}  // namespace
}  // namespace swaplab::workload
