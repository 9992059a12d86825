// SPDX-License-Identifier: MIT
// Against the real tools and the real kernel: areas made by util-linux
// mkswap are read field for field; areas made by FormatArea are identified
// by blkid and swaplabel, accepted by swapon, and byte-identical to mkswap's;
// the kernel refuses what SwapArea::Open refuses; block devices through a
// loop device. Tests that cannot run here (not root, no loop device, swapon
// refused by the environment) skip with the reason.
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/swap.h>

#include <fstream>
#include <sstream>

#include "area/area_test_util.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/area/swap_area.h"

namespace swaplab::area::test {
namespace {

using ::testing::HasSubstr;

bool HaveTool(const char* name) {
  return Shell(std::string("command -v ") + name + " >/dev/null").rc == 0;
}

#define REQUIRE_TOOL(name) \
  if (!HaveTool(name)) GTEST_SKIP() << name << " is not installed (scripts/setup installs it)"
#define REQUIRE_ROOT() \
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (swapon, losetup)"

// The /proc/swaps Size column (KiB) of `path`, or -1 when not active.
int64_t ProcSwapsKiB(const std::string& path) {
  std::ifstream in("/proc/swaps");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string name, type;
    int64_t size = -1;
    ls >> name >> type >> size;
    if (name == path) return size;
  }
  return -1;
}

// Swaps `path` off at scope exit if it is (still) active, whatever happened.
class SwapoffGuard {
 public:
  explicit SwapoffGuard(std::string path) : path_(std::move(path)) {}
  ~SwapoffGuard() {
    if (ProcSwapsKiB(path_) >= 0) ::swapoff(path_.c_str());
  }

 private:
  std::string path_;
};

// A loop device over a backing file; detached at scope exit.
class LoopDevice {
 public:
  explicit LoopDevice(const std::string& backing) {
    const CmdResult r = Shell("losetup -f --show " + backing);
    if (r.rc == 0) {
      dev_ = r.out.substr(0, r.out.find('\n'));
    } else {
      error_ = r.out;
    }
  }
  ~LoopDevice() {
    if (!dev_.empty()) Shell("losetup -d " + dev_);
  }
  bool ok() const { return !dev_.empty(); }
  const std::string& dev() const { return dev_; }
  const std::string& error() const { return error_; }

 private:
  std::string dev_, error_;
};

// "KEY=value" lines of `blkid -o export` as a map-like lookup.
std::string BlkidField(const std::string& out, const std::string& key) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  }
  return "";
}

FormatOptions Opts(std::optional<uint64_t> size, std::string label = "lab") {
  FormatOptions o;
  o.size_bytes = size;
  o.label = std::move(label);
  o.uuid = kTestUuid;
  return o;
}

// ---- mkswap → inspect ---------------------------------------------------------

TEST(Mkswap, FileIsReadFieldForField) {
  REQUIRE_TOOL("mkswap");
  TempPath p("mkswap");
  WriteZeroFile(p.str(), 300 * kPageSize);
  const CmdResult r =
      Shell("mkswap -q -L mk-label -U " + std::string(kTestUuidText) + " " + p.str());
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto info = InspectArea(p.str());
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  const DecodedHeader& h = info->header;
  EXPECT_EQ(h.signature, Signature::kSwapSpace2);
  EXPECT_FALSE(h.byte_swapped);
  EXPECT_EQ(h.v1.version, 1u);
  EXPECT_EQ(h.v1.last_page, 299u);
  EXPECT_EQ(h.nr_badpages, 0u);
  EXPECT_TRUE(h.v1.bad_pages.empty());
  EXPECT_EQ(UuidToString(h.v1.uuid), kTestUuidText);
  EXPECT_EQ(h.v1.label, "mk-label");
  EXPECT_FALSE(h.hibernation.has_value());
  EXPECT_EQ(info->size_bytes, 300 * kPageSize);
  EXPECT_FALSE(info->extent_summary.has_holes);
  EXPECT_TRUE(ValidateArea(*info).ok());
  auto a = SwapArea::Open(p.str());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)->ToSwaponOptions().pages, 300u);
}

TEST(Mkswap, ExplicitBlockCountIsLastPagePlusOne) {
  REQUIRE_TOOL("mkswap");
  TempPath p("mkswap-size");
  WriteZeroFile(p.str(), 512 * kPageSize);
  const CmdResult r = Shell("mkswap -q " + p.str() + " 1024");  // 1024 KiB = 256 pages
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto info = InspectArea(p.str());
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->header.v1.last_page, 255u);
  EXPECT_EQ(info->header.v1.label, "");
  auto a = SwapArea::Open(p.str());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)->ToSwaponOptions().pages, 256u);
}

// ---- byte compatibility ----------------------------------------------------------

struct CompatCase {
  uint64_t pages;
  const char* label;
};

void PrintTo(const CompatCase& c, std::ostream* os) {
  *os << c.pages << " pages, label \"" << c.label << "\"";
}

class ByteCompat : public ::testing::TestWithParam<CompatCase> {};

TEST_P(ByteCompat, FormatWritesTheBytesMkswapWrites) {
  REQUIRE_TOOL("mkswap");
  const CompatCase c = GetParam();
  TempPath mk("compat-mkswap"), ours("compat-ours");
  WriteZeroFile(mk.str(), c.pages * kPageSize);
  std::string cmd = "mkswap -q -U " + std::string(kTestUuidText);
  if (*c.label) cmd += std::string(" -L ") + c.label;
  const CmdResult r = Shell(cmd + " " + mk.str());
  ASSERT_EQ(r.rc, 0) << r.out;
  ASSERT_TRUE(FormatArea(ours.str(), Opts(c.pages * kPageSize, c.label)).ok());
  const auto a = ReadPage0(mk.str()), b = ReadPage0(ours.str());
  for (size_t i = 1024; i < kPageSize; ++i)
    ASSERT_EQ(a[i], b[i]) << "first difference at byte " << i;
  // On a file without a partition table mkswap zeroes the boot area too.
  for (size_t i = 0; i < 1024; ++i) ASSERT_EQ(a[i], b[i]) << "boot area byte " << i;
}

INSTANTIATE_TEST_SUITE_P(Sizes, ByteCompat,
                         ::testing::Values(CompatCase{10, ""}, CompatCase{256, "lab"},
                                           CompatCase{2560, "fifteen-bytes15"},
                                           CompatCase{1000, "x"}),
                         [](const auto& i) {
                           return "pages" + std::to_string(i.param.pages) + "_label" +
                                  std::to_string(std::strlen(i.param.label));
                         });

TEST(ByteCompatExisting, SizeSmallerThanTheFileMatchesMkswapBlockCount) {
  REQUIRE_TOOL("mkswap");
  TempPath mk("compat2-mkswap"), ours("compat2-ours");
  WriteZeroFile(mk.str(), 512 * kPageSize);
  WriteZeroFile(ours.str(), 512 * kPageSize);
  const CmdResult r =
      Shell("mkswap -q -L lab -U " + std::string(kTestUuidText) + " " + mk.str() + " 1024");
  ASSERT_EQ(r.rc, 0) << r.out;
  ASSERT_TRUE(FormatArea(ours.str(), Opts(256 * kPageSize)).ok());
  EXPECT_EQ(ReadPage0(mk.str()), ReadPage0(ours.str()));
}

// ---- format → blkid, swaplabel, swapon -------------------------------------------

TEST(FormatForUtilLinux, BlkidSeesTypeSwapWithOurUuidAndLabel) {
  REQUIRE_TOOL("blkid");
  TempPath p("blkid");
  ASSERT_TRUE(FormatArea(p.str(), Opts(256 * kPageSize, "swaplab-lab")).ok());
  const CmdResult r = Shell("blkid -p -o export " + p.str());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(BlkidField(r.out, "TYPE"), "swap");
  EXPECT_EQ(BlkidField(r.out, "UUID"), kTestUuidText);
  EXPECT_EQ(BlkidField(r.out, "LABEL"), "swaplab-lab");
  EXPECT_EQ(BlkidField(r.out, "VERSION"), "1");
}

TEST(FormatForUtilLinux, SwaplabelReadsOurUuidAndLabel) {
  REQUIRE_TOOL("swaplabel");
  TempPath p("swaplabel");
  ASSERT_TRUE(FormatArea(p.str(), Opts(256 * kPageSize, "lbl")).ok());
  const CmdResult r = Shell("swaplabel " + p.str());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("LABEL: lbl"));
  EXPECT_THAT(r.out, HasSubstr(std::string("UUID:  ") + kTestUuidText));
  // And the other way: swaplabel rewrites, inspect reads it.
  ASSERT_EQ(Shell("swaplabel -L relabelled " + p.str()).rc, 0);
  EXPECT_EQ(InspectArea(p.str())->header.v1.label, "relabelled");
}

TEST(FormatForUtilLinux, SwaponAcceptsOurFile) {
  REQUIRE_ROOT();
  REQUIRE_TOOL("swapon");
  REQUIRE_TOOL("mkswap");
  // Can this environment swap on a file at all? Ask with one made by mkswap.
  {
    TempPath probe("swapon-probe");
    WriteZeroFile(probe.str(), 64 * kPageSize);
    ::chmod(probe.c_str(), 0600);
    ASSERT_EQ(Shell("mkswap -q " + probe.str()).rc, 0);
    SwapoffGuard g(probe.str());
    const CmdResult r = Shell("swapon " + probe.str());
    if (r.rc != 0) GTEST_SKIP() << "the environment refuses swapon of a mkswap file: " << r.out;
    ::swapoff(probe.c_str());
  }
  TempPath p("swapon");
  ASSERT_TRUE(FormatArea(p.str(), Opts(256 * kPageSize)).ok());
  SwapoffGuard g(p.str());
  const CmdResult r = Shell("swapon " + p.str());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(ProcSwapsKiB(p.str()), 255 * 4);  // header page excluded
  const CmdResult off = Shell("swapoff " + p.str());
  EXPECT_EQ(off.rc, 0) << off.out;
  EXPECT_EQ(ProcSwapsKiB(p.str()), -1);
}

// ---- the kernel refuses what Open refuses (swapon(2) directly: the swapon
// tool would rewrite an S1SUSPEND signature before calling it) --------------

struct RefusalCase {
  const char* name;
  void (*patch)(const std::string& path);
  const char* field;
};

void PatchPage0(const std::string& path, size_t off, const void* b, size_t n) {
  WriteAt(path, off, b, n);
}

const RefusalCase kRefusals[] = {
    {"zeros", [](const std::string& p) { PatchPage0(p, 4086, "\0\0\0\0\0\0\0\0\0\0", 10); },
     "signature"},
    {"v0", [](const std::string& p) { PatchPage0(p, 4086, "SWAP-SPACE", 10); }, "signature"},
    {"suspend",
     [](const std::string& p) {
       PatchPage0(p, 4076, "SWAPSPACE2", 10);
       PatchPage0(p, 4086, "S1SUSPEND\0", 10);
     },
     "signature"},
    {"version",
     [](const std::string& p) {
       const uint32_t v = 2;
       PatchPage0(p, 1024, &v, 4);
     },
     "version"},
    {"last_page",
     [](const std::string& p) {
       const uint32_t v = 4000;
       PatchPage0(p, 1028, &v, 4);
     },
     "last_page"},
    {"badpages_on_file",
     [](const std::string& p) {
       const uint32_t n = 1, b = 9;
       PatchPage0(p, 1032, &n, 4);
       PatchPage0(p, 1536, &b, 4);
     },
     "nr_badpages"},
    {"hole",
     [](const std::string& p) {
       const int fd = ::open(p.c_str(), O_RDWR | O_CLOEXEC);
       ASSERT_GE(fd, 0);
       ASSERT_EQ(::fallocate(fd, 0x02 | 0x01, 50 * 4096, 4 * 4096), 0);  // PUNCH_HOLE|KEEP_SIZE
       ::close(fd);
     },
     "extents"},
};

void PrintTo(const RefusalCase& c, std::ostream* os) { *os << c.name; }

class KernelAgrees : public ::testing::TestWithParam<RefusalCase> {};

TEST_P(KernelAgrees, BothRefuse) {
  REQUIRE_ROOT();
  const RefusalCase c = GetParam();
  TempPath p(std::string("refuse-") + c.name);
  ASSERT_TRUE(FormatArea(p.str(), Opts(256 * kPageSize)).ok());
  c.patch(p.str());
  ExpectRefused(SwapArea::Open(p.str()).status(), {c.field});
  SwapoffGuard g(p.str());
  errno = 0;
  const int rc = ::swapon(p.c_str(), 0);
  const int err = errno;
  if (rc == 0) ::swapoff(p.c_str());
  if (rc != 0 && err == EPERM) GTEST_SKIP() << "swapon(2) is not permitted here";
  EXPECT_NE(rc, 0) << "the kernel accepted what Open refuses";
  EXPECT_EQ(err, EINVAL) << std::strerror(err);
}

INSTANTIATE_TEST_SUITE_P(Cases, KernelAgrees, ::testing::ValuesIn(kRefusals),
                         [](const auto& i) { return std::string(i.param.name); });

// ---- block devices through a loop device -------------------------------------

class Loop : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (losetup)";
    if (!HaveTool("losetup")) GTEST_SKIP() << "losetup is not installed";
    WriteZeroFile(backing_.str(), kPages * kPageSize);
    loop_ = std::make_unique<LoopDevice>(backing_.str());
    if (!loop_->ok()) GTEST_SKIP() << "no loop device: " << loop_->error();
  }
  static constexpr uint64_t kPages = 1024;  // 4 MiB
  TempPath backing_{"loop-backing"};
  std::unique_ptr<LoopDevice> loop_;
};

TEST_F(Loop, FormatInspectOpenWithIdentityExtents) {
  FormatOptions o = Opts(std::nullopt, "loop-lab");
  o.bad_pages = {7, 300, 1023};
  ASSERT_TRUE(FormatArea(loop_->dev(), o).ok());
  const auto info = InspectArea(loop_->dev());
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_TRUE(info->blkdev);
  EXPECT_EQ(info->size_bytes, kPages * kPageSize);
  struct stat st {};
  ASSERT_EQ(::stat(loop_->dev().c_str(), &st), 0);
  EXPECT_EQ(info->bdev, st.st_rdev);
  EXPECT_EQ(info->header.v1.last_page, kPages - 1);
  EXPECT_EQ(info->header.v1.bad_pages, o.bad_pages);
  EXPECT_EQ(info->header.v1.label, "loop-lab");
  ASSERT_EQ(info->extents.size(), 1u);
  EXPECT_EQ(info->extents[0].start_page, 0u);
  EXPECT_EQ(info->extents[0].nr_pages, kPages);
  EXPECT_EQ(info->extents[0].start_block, 0u);

  auto a = SwapArea::Open(loop_->dev());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const alloc::SwaponOptions so = (*a)->ToSwaponOptions();
  EXPECT_TRUE(so.blkdev);
  EXPECT_EQ(so.pages, kPages);
  EXPECT_EQ(so.bad_pages, (std::vector<uint64_t>{7, 300, 1023}));
  ASSERT_EQ(so.extents.size(), 1u);
  EXPECT_EQ(so.extents[0].start_block, 0u);
  EXPECT_EQ(so.first_block, 0u);
  EXPECT_EQ(so.bdev, st.st_rdev);
  alloc::SwapSystem sys(alloc::SystemOptions{});
  auto type = sys.Swapon(so);
  ASSERT_TRUE(type.ok()) << type.status().ToString();
  EXPECT_EQ(sys.total_swap_pages(), static_cast<int64_t>(kPages - 1 - 3));
  ASSERT_TRUE(sys.Swapoff(*type).ok());

  // blkid agrees, through the block device.
  if (HaveTool("blkid")) {
    const CmdResult r = Shell("blkid -p -o export " + loop_->dev());
    EXPECT_EQ(BlkidField(r.out, "TYPE"), "swap") << r.out;
    EXPECT_EQ(BlkidField(r.out, "LABEL"), "loop-lab");
  }
}

TEST_F(Loop, MkswapOnTheDeviceIsByteIdenticalAndInspectable) {
  REQUIRE_TOOL("mkswap");
  const CmdResult r =
      Shell("mkswap -q -L dev -U " + std::string(kTestUuidText) + " " + loop_->dev());
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto mk = ReadPage0(loop_->dev());
  const auto info = InspectArea(loop_->dev());
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->header.v1.last_page, kPages - 1);
  EXPECT_EQ(info->header.v1.label, "dev");
  EXPECT_EQ(UuidToString(info->header.v1.uuid), kTestUuidText);
  // A labelled swap area is another tool's: refused on the block device too,
  // untouched, until forced.
  const Status refused = FormatArea(loop_->dev(), Opts(std::nullopt, "dev"));
  EXPECT_EQ(refused.code(), -EBUSY) << refused.ToString();
  EXPECT_THAT(refused.message(), HasSubstr("a swap area (other, type swap, LABEL=\"dev\""));
  EXPECT_THAT(refused.message(), HasSubstr("use --force to overwrite"));
  EXPECT_EQ(mk, ReadPage0(loop_->dev()));
  FormatOptions forced = Opts(std::nullopt, "dev");
  forced.force = true;
  ASSERT_TRUE(FormatArea(loop_->dev(), forced).ok());
  EXPECT_EQ(mk, ReadPage0(loop_->dev()));
}

TEST_F(Loop, KernelSwaponCountsOurBadPages) {
  FormatOptions o = Opts(std::nullopt);
  o.bad_pages = {1, 2, 500};
  ASSERT_TRUE(FormatArea(loop_->dev(), o).ok());
  SwapoffGuard g(loop_->dev());
  if (::swapon(loop_->dev().c_str(), 0) != 0)
    GTEST_SKIP() << "swapon(2) of a loop device refused here: " << std::strerror(errno);
  EXPECT_EQ(ProcSwapsKiB(loop_->dev()), static_cast<int64_t>((kPages - 1 - 3) * 4));
  // While the kernel holds it, formatting is refused (exclusive open).
  const Status busy = FormatArea(loop_->dev(), Opts(std::nullopt));
  EXPECT_EQ(busy.code(), -EBUSY) << busy.ToString();
  EXPECT_EQ(::swapoff(loop_->dev().c_str()), 0) << std::strerror(errno);
}

TEST_F(Loop, DiscardSinkIssuesBlkdiscardButNeverOnTheHeader) {
  ASSERT_TRUE(FormatArea(loop_->dev(), Opts(std::nullopt)).ok());
  std::vector<char> ones(kPageSize, '\x11');
  for (uint64_t pg : {1, 5, 6}) WriteAt(loop_->dev(), pg * kPageSize, ones.data(), ones.size());
  {
    auto a = SwapArea::Open(loop_->dev());
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    if (!(*a)->info().limits.discard) GTEST_SKIP() << "the loop device does not support discard";
    (*a)->discard_sink().Discard(0, 0, 6);  // pages 1..5, not 0
  }
  ASSERT_EQ(Shell("blockdev --flushbufs " + loop_->dev()).rc, 0);
  EXPECT_EQ(ReadBytes(loop_->dev(), 1 * kPageSize, 1)[0], std::byte{0});
  EXPECT_EQ(ReadBytes(loop_->dev(), 5 * kPageSize, 1)[0], std::byte{0});
  EXPECT_EQ(ReadBytes(loop_->dev(), 6 * kPageSize, 1)[0], std::byte{0x11});
  EXPECT_EQ(InspectArea(loop_->dev())->header.signature, Signature::kSwapSpace2);
}

}  // namespace
}  // namespace swaplab::area::test
