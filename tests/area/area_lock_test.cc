// SPDX-License-Identifier: MIT
// Opening an area safely (the type is checked before any open, so a FIFO
// never blocks), the writers' flock, and what `area format` refuses to
// write over — one test per case, each checking the code, the message and
// that the file did not change.
#include "swaplab/area/area_lock.h"

#include <sys/stat.h>

#include <chrono>

#include "area/area_test_util.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/area/swap_area.h"

namespace swaplab::area::test {
namespace {

using ::testing::HasSubstr;

void ExpectWrongType(const Status& s, int code, const std::string& path, const char* type) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr(path + ": is " + type));
}

TEST(OpenArea, EveryOpenRefusesAFifoWithoutBlocking) {
  TempPath p("fifo");
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  ExpectWrongType(InspectArea(p.str()).status(), -EINVAL, p.str(), "a FIFO");
  ExpectWrongType(SwapArea::Open(p.str()).status(), -EINVAL, p.str(), "a FIFO");
  ExpectWrongType(OpenPosixEngine(p.str(), {}).status(), -EINVAL, p.str(), "a FIFO");
  ExpectWrongType(OpenUringEngine(p.str(), {}).status(), -EINVAL, p.str(), "a FIFO");
  ExpectWrongType(LockArea(p.str()).status(), -EINVAL, p.str(), "a FIFO");
  FormatOptions o;
  o.force = true;
  ExpectWrongType(FormatArea(p.str(), o), -EINVAL, p.str(), "a FIFO");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

TEST(OpenArea, RefusesACharacterDeviceAndADirectory) {
  ExpectWrongType(InspectArea("/dev/null").status(), -EINVAL, "/dev/null", "a character device");
  ExpectWrongType(SwapArea::Open("/dev/null").status(), -EINVAL, "/dev/null", "a character device");
  ExpectWrongType(InspectArea("/var/tmp").status(), -EISDIR, "/var/tmp", "a directory");
  ExpectWrongType(OpenPosixEngine("/var/tmp", {}).status(), -EISDIR, "/var/tmp", "a directory");
}

TEST(LockArea, ASecondLockIsRefusedUntilTheFirstIsReleased) {
  TempPath p("lock");
  WriteZeroFile(p.str(), 16 * kPageSize);
  auto first = LockArea(p.str());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->held());
  auto second = LockArea(p.str());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), -EBUSY);
  EXPECT_THAT(second.status().message(),
              HasSubstr(p.str() + ": in use by another swaplab (locked)"));
  FormatOptions o;
  o.force = true;
  const auto before = ReadBytes(p.str(), 0, 16 * kPageSize);
  const Status f = FormatArea(p.str(), o);
  EXPECT_EQ(f.code(), -EBUSY) << f.ToString();
  EXPECT_EQ(ReadBytes(p.str(), 0, 16 * kPageSize), before);
  { AreaLock gone = std::move(first).value(); }
  EXPECT_TRUE(LockArea(p.str()).ok());
  EXPECT_FALSE(LockAreaIf(false, p.str())->held());
}

// ---- what area format writes over ------------------------------------------------

void ExpectFormatRefused(const std::string& path, const char* what) {
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  const auto before = ReadBytes(path, 0, static_cast<size_t>(st.st_size));
  const Status s = FormatArea(path, FormatOptions{});
  ASSERT_FALSE(s.ok()) << "formatted over " << what;
  EXPECT_EQ(s.code(), -EBUSY) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr(what));
  EXPECT_THAT(s.message(), HasSubstr("use --force to overwrite"));
  EXPECT_EQ(ReadBytes(path, 0, static_cast<size_t>(st.st_size)), before) << "the file changed";
}

TEST(FormatProbe, RefusesDataWithoutASignatureAndForceKeepsTheBootArea) {
  TempPath p("text");
  std::vector<char> text(64 * kPageSize, 'a');
  WriteAt(p.str(), 0, text.data(), text.size());
  ExpectFormatRefused(p.str(),
                      "data with no signature libblkid knows (a non-zero byte at offset 0");
  FormatOptions o;
  o.force = true;
  ASSERT_TRUE(FormatArea(p.str(), o).ok());
  const auto boot = ReadBytes(p.str(), 0, 1024);
  for (size_t i = 0; i < boot.size(); ++i) ASSERT_EQ(boot[i], std::byte{'a'}) << i;
  EXPECT_EQ(InspectArea(p.str())->header.signature, Signature::kSwapSpace2);
}

TEST(FormatProbe, RefusesALabelledSwapAreaButReformatsAnUnlabelledOne) {
  TempPath p("labelled");
  FormatOptions o;
  o.size_bytes = 64 * kPageSize;
  o.label = "theirs";
  ASSERT_TRUE(FormatArea(p.str(), o).ok());
  ExpectFormatRefused(p.str(), "a swap area (other, type swap, LABEL=\"theirs\"");
  TempPath q("unlabelled");
  o.label.clear();
  ASSERT_TRUE(FormatArea(q.str(), o).ok());
  EXPECT_TRUE(FormatArea(q.str(), FormatOptions{}).ok());
}

TEST(FormatProbe, AllZeroFileIsFormatted) {
  TempPath p("zero");
  WriteZeroFile(p.str(), 64 * kPageSize);
  EXPECT_TRUE(FormatArea(p.str(), FormatOptions{}).ok());
}

TEST(FormatProbe, RefusesAnExt4Filesystem) {
  if (Shell("command -v mkfs.ext4 >/dev/null").rc != 0) GTEST_SKIP() << "no mkfs.ext4 (e2fsprogs)";
  TempPath p("ext4");
  WriteZeroFile(p.str(), 2048 * kPageSize);
  const CmdResult r = Shell("mkfs.ext4 -q -F -L fs " + p.str());
  ASSERT_EQ(r.rc, 0) << r.out;
  ExpectFormatRefused(p.str(), "a signature (filesystem, type ext4, LABEL=\"fs\"");
}

}  // namespace
}  // namespace swaplab::area::test
