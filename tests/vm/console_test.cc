// SPDX-License-Identifier: MIT
// ParseConsole: the guest's console lines swaplab vm hibernate reports
// (the kernel's "Wrote/Read N kbytes in T seconds", the agent's layout line,
// the guest's release), and what it does with lines that do not parse.
#include <gtest/gtest.h>

#include "swaplab/vm/vm_hibernate.h"

namespace swaplab::vm {
namespace {

TEST(ParseConsole, TheKernelsAndTheAgentsLines) {
  const ConsoleFacts f = ParseConsole(
      "[    2.3] swaplab-init: start at uptime 2.33 s, kernel 6.12.117+deb12-amd64\n"
      "swaplab-agent: layout holes: 8192 pages swapped out, 3 not in swap, 4096 freed\n"
      "[    5.1] PM: hibernation: Wrote 63348 kbytes in 0.97 seconds (65.30 MB/s)\n"
      "[    3.0] PM: hibernation: Read 63340 kbytes in 0.92 seconds (68.85 MB/s)\n"
      "swaplab-agent: resumed, 2048 pattern pages intact\n");
  EXPECT_EQ(f.release, "6.12.117+deb12-amd64");
  EXPECT_EQ(f.swapped, 8192u);
  EXPECT_EQ(f.not_in_swap, 3u);
  EXPECT_EQ(f.freed, 4096u);
  EXPECT_EQ(f.wrote_kb, 63348u);
  EXPECT_DOUBLE_EQ(f.wrote_s, 0.97);
  EXPECT_DOUBLE_EQ(f.wrote_mbps, 65.30);
  EXPECT_EQ(f.read_kb, 63340u);
  EXPECT_DOUBLE_EQ(f.read_s, 0.92);
  EXPECT_TRUE(f.resumed_intact);
  EXPECT_EQ(f.pm_lines.size(), 2u);
}

TEST(ParseConsole, GarbageAndHugeNumbersLeaveTheFactsUnset) {
  const ConsoleFacts f = ParseConsole(
      "PM: hibernation: Wrote lots of kbytes in no time\n"
      "swaplab-agent: layout x: 99999999999999999999999999 pages swapped out, 1 not in swap, 2 "
      "freed\n"
      "\x1b[2Jswaplab-init: start at uptime\n");
  EXPECT_EQ(f.wrote_kb, 0u);
  EXPECT_LT(f.wrote_s, 0);
  EXPECT_TRUE(f.release.empty());
  EXPECT_FALSE(f.resumed_intact);
}

TEST(ParseConsole, APatchedKernelsBioCountAndUnknownParameters) {
  const ConsoleFacts f = ParseConsole(
      "[    0.0] Unknown kernel command line parameters \"hibernate_alloc=clusters\", will be "
      "passed to user space.\n"
      "[    5.1] PM: Image I/O: 78 bios, 9857 pages\n"
      "[    6.1] PM: Image I/O: 5 bios, 12 pages\n"
      "swaplab-init: swapfile.prefer_nonfull Y\n");
  EXPECT_EQ(f.io_bios, 78);  // the first batch: the image's
  EXPECT_EQ(f.io_pages, 9857);
  EXPECT_EQ(f.unknown_params, "hibernate_alloc=clusters");
  EXPECT_EQ(f.prefer_nonfull, 1);
  EXPECT_EQ(ParseConsole("swaplab-init: swapfile.prefer_nonfull N\n").prefer_nonfull, 0);
  const ConsoleFacts none = ParseConsole("PM: Image I/O: many bios\n");
  EXPECT_EQ(none.io_bios, -1);
  EXPECT_EQ(none.io_pages, -1);
  EXPECT_TRUE(none.unknown_params.empty());
  EXPECT_EQ(none.prefer_nonfull, -1);
}

}  // namespace
}  // namespace swaplab::vm
