// SPDX-License-Identifier: MIT
// Swap areas on regular files: format, inspect, open (the swapon checks,
// one test per refusal on a real file), the FIEMAP extent map, the discard
// sink, and handing the area to SwapSystem::Swapon.
#include "swaplab/area/swap_area.h"

#include <linux/falloc.h>
#include <sys/stat.h>

#include "area/area_test_util.h"
#include "swaplab/alloc/swap_system.h"

namespace swaplab::area::test {
namespace {

constexpr uint64_t kPages = 256;  // 1 MiB

FormatOptions Opts(std::optional<uint64_t> size = kPages * kPageSize) {
  FormatOptions o;
  o.size_bytes = size;
  o.label = "lab";
  o.uuid = kTestUuid;
  return o;
}

void PunchHole(const std::string& path, uint64_t page, uint64_t n) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                        static_cast<off_t>(page * kPageSize), static_cast<off_t>(n * kPageSize)),
            0)
      << std::strerror(errno);
  ::close(fd);
}

Status OpenStatus(const std::string& path) { return SwapArea::Open(path).status(); }

// ---- format ----------------------------------------------------------------

TEST(FormatArea, CreatesAFileOfWrittenBlocks) {
  TempPath p;
  ASSERT_TRUE(FormatArea(p.str(), Opts()).ok());
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), kPages * kPageSize);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_GE(static_cast<uint64_t>(st.st_blocks) * 512, kPages * kPageSize);  // not sparse
  auto info = InspectArea(p.str());
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_FALSE(info->blkdev);
  EXPECT_EQ(info->bdev, st.st_dev);
  EXPECT_EQ(info->size_bytes, kPages * kPageSize);
  EXPECT_EQ(info->header.signature, Signature::kSwapSpace2);
  EXPECT_EQ(info->header.v1.last_page, kPages - 1);
  EXPECT_EQ(info->header.v1.uuid, kTestUuid);
  EXPECT_EQ(info->header.v1.label, "lab");
  EXPECT_FALSE(info->header.hibernation.has_value());
  EXPECT_FALSE(info->extent_summary.has_holes);  // written, not unwritten/preallocated
  uint64_t covered = 0;
  for (const auto& e : info->extents) covered += e.nr_pages;
  EXPECT_EQ(covered, kPages);
  EXPECT_EQ(info->extent_summary.extents, info->extents.size());
  EXPECT_TRUE(ValidateArea(*info).ok());
}

TEST(FormatArea, RandomUuidIsVersion4AndDiffers) {
  TempPath a, b;
  FormatOptions o = Opts();
  o.uuid.reset();
  ASSERT_TRUE(FormatArea(a.str(), o).ok());
  ASSERT_TRUE(FormatArea(b.str(), o).ok());
  const auto ua = InspectArea(a.str())->header.v1.uuid, ub = InspectArea(b.str())->header.v1.uuid;
  EXPECT_NE(ua, ub);
  EXPECT_EQ(ua[6] >> 4, 4);       // version 4
  EXPECT_EQ(ua[8] & 0xc0, 0x80);  // RFC 4122 variant
}

TEST(FormatArea, NewFileNeedsASize) {
  TempPath p;
  ExpectRefused(FormatArea(p.str(), Opts(std::nullopt)), {"--size"});
  EXPECT_NE(::access(p.c_str(), F_OK), 0);
}

TEST(FormatArea, RefusesFewerThanTenPages) {
  TempPath p;
  ExpectRefused(FormatArea(p.str(), Opts(9 * kPageSize)), {"size", "36864", "10 pages"});
  EXPECT_NE(::access(p.c_str(), F_OK), 0);
}

TEST(FormatArea, RefusesASizeThatIsNotWholePages) {
  TempPath p;
  ExpectRefused(FormatArea(p.str(), Opts(kPages * kPageSize + 100)), {"size", "1048676"});
  EXPECT_NE(::access(p.c_str(), F_OK), 0);
}

TEST(FormatArea, RefusesALabelLongerThan15Bytes) {
  TempPath p;
  FormatOptions o = Opts();
  o.label = "sixteen-bytes-16";  // mkswap would cut it to 15 with a warning
  ExpectRefused(FormatArea(p.str(), o), {"label", "16 bytes", "at most 15"});
  EXPECT_NE(::access(p.c_str(), F_OK), 0);
}

TEST(FormatArea, RefusesBadPagesOnAFile) {
  TempPath p;
  FormatOptions o = Opts();
  o.bad_pages = {5};
  ExpectRefused(FormatArea(p.str(), o), {"bad pages", "swap file"});
  EXPECT_NE(::access(p.c_str(), F_OK), 0);  // the new file was removed again
}

TEST(FormatArea, ForcedOverDataKeepsItsDataAndTheBootArea) {
  TempPath p;
  std::vector<char> junk(kPages * kPageSize, '\x5a');
  WriteAt(p.str(), 0, junk.data(), junk.size());
  EXPECT_EQ(FormatArea(p.str(), Opts(std::nullopt)).code(), -EBUSY);  // data: needs force
  FormatOptions o = Opts(std::nullopt);
  o.force = true;
  ASSERT_TRUE(FormatArea(p.str(), o).ok());
  const auto page0 = ReadPage0(p.str());
  for (size_t i = 0; i < 1024; ++i) ASSERT_EQ(page0[i], std::byte{0x5a}) << i;  // as mkswap
  EXPECT_EQ(ReadBytes(p.str(), kPageSize, 1)[0], std::byte{0x5a});  // mkswap writes page 0 only
  const auto info = InspectArea(p.str());
  EXPECT_EQ(info->header.v1.last_page, kPages - 1);
}

TEST(FormatArea, KeepsABootAreaHoldingAPartitionTable) {
  TempPath p;
  WriteZeroFile(p.str(), kPages * kPageSize);
  const unsigned char sig[2] = {0x55, 0xaa};
  WriteAt(p.str(), 510, sig, 2);
  WriteAt(p.str(), 100, "bootcode", 8);
  EXPECT_EQ(FormatArea(p.str(), Opts(std::nullopt)).code(), -EBUSY);  // not without --force
  FormatOptions o = Opts(std::nullopt);
  o.force = true;
  ASSERT_TRUE(FormatArea(p.str(), o).ok());
  const auto b = ReadBytes(p.str(), 100, 8);
  EXPECT_EQ(std::memcmp(b.data(), "bootcode", 8), 0);
  EXPECT_EQ(InspectArea(p.str())->header.signature, Signature::kSwapSpace2);
}

TEST(FormatArea, ExtendsAnExistingFileWithWrittenZeros) {
  TempPath p;
  WriteZeroFile(p.str(), 16 * kPageSize);
  ASSERT_TRUE(FormatArea(p.str(), Opts(64 * kPageSize)).ok());
  const auto info = InspectArea(p.str());
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->size_bytes, 64 * kPageSize);
  EXPECT_EQ(info->header.v1.last_page, 63u);
  EXPECT_FALSE(info->extent_summary.has_holes);
}

TEST(FormatArea, SmallerSizeThanTheFileDescribesThePrefix) {
  TempPath p;
  WriteZeroFile(p.str(), 64 * kPageSize);
  ASSERT_TRUE(FormatArea(p.str(), Opts(32 * kPageSize)).ok());
  const auto info = InspectArea(p.str());
  EXPECT_EQ(info->size_bytes, 64 * kPageSize);  // never truncated
  EXPECT_EQ(info->header.v1.last_page, 31u);
  auto a = SwapArea::Open(p.str());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)->ToSwaponOptions().pages, 32u);
}

// ---- inspect ---------------------------------------------------------------

TEST(InspectArea, ReportsANonSwapFileWithoutRefusing) {
  TempPath p;
  WriteZeroFile(p.str(), 20 * kPageSize);
  const auto info = InspectArea(p.str());
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->header.signature, Signature::kZeros);
  ExpectRefused(ValidateArea(*info), {"signature", "zeros"});
}

TEST(InspectArea, ReportsAHibernationImage) {
  TempPath p;
  ASSERT_TRUE(FormatArea(p.str(), Opts()).ok());
  auto page = ReadPage0(p.str());
  const uint64_t image = 4242;
  const uint32_t flags = 4 | 16;
  std::memcpy(page.data() + 4064, &image, 8);
  std::memcpy(page.data() + 4072, &flags, 4);
  std::memcpy(page.data() + 4076, "SWAPSPACE2", 10);
  std::memcpy(page.data() + 4086, "S1SUSPEND\0", 10);
  WritePage0(p.str(), page);
  const auto info = InspectArea(p.str());
  ASSERT_TRUE(info.ok());
  ASSERT_TRUE(info->header.hibernation.has_value());
  EXPECT_EQ(info->header.hibernation->image, image);
  EXPECT_EQ(info->header.hibernation->flags, flags);
  EXPECT_EQ(info->header.v1.label, "lab");  // the swap header survives underneath
}

TEST(InspectArea, RefusesAFileShorterThanAPage) {
  TempPath p;
  WriteAt(p.str(), 0, "tiny", 4);
  const auto info = InspectArea(p.str());
  ASSERT_FALSE(info.ok());
  EXPECT_THAT(info.status().message(), ::testing::HasSubstr("shorter than"));
}

TEST(InspectArea, MissingFileIsENOENT) {
  TempPath p;
  EXPECT_EQ(InspectArea(p.str()).status().code(), -ENOENT);
  EXPECT_EQ(OpenStatus(p.str()).code(), -ENOENT);
}

// ---- open: one refusal per rule, on a real file ----------------------------

class OpenRefuses : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(FormatArea(p.str(), Opts()).ok()); }
  template <class F>
  void Patch(F&& f) {
    auto page = ReadPage0(p.str());
    f(page);
    WritePage0(p.str(), page);
  }
  TempPath p;
};

TEST_F(OpenRefuses, ZeroSignature) {
  Patch([](auto& pg) { std::memset(pg.data() + 4086, 0, 10); });
  ExpectRefused(OpenStatus(p.str()), {"signature", "zeros"});
}

TEST_F(OpenRefuses, V0Signature) {
  Patch([](auto& pg) { std::memcpy(pg.data() + 4086, "SWAP-SPACE", 10); });
  ExpectRefused(OpenStatus(p.str()), {"signature", "SWAP-SPACE"});
}

TEST_F(OpenRefuses, HibernationSignature) {
  Patch([](auto& pg) {
    std::memcpy(pg.data() + 4076, "SWAPSPACE2", 10);
    std::memcpy(pg.data() + 4086, "S1SUSPEND\0", 10);
  });
  ExpectRefused(OpenStatus(p.str()), {"signature", "S1SUSPEND"});
}

TEST_F(OpenRefuses, Version) {
  Patch([](auto& pg) { pg[1024] = std::byte{7}; });
  ExpectRefused(OpenStatus(p.str()), {"version", "7"});
}

TEST_F(OpenRefuses, LastPageBeyondTheFile) {
  Patch([](auto& pg) {
    const uint32_t lp = 1000;
    std::memcpy(pg.data() + 1028, &lp, 4);
  });
  ExpectRefused(OpenStatus(p.str()), {"last_page", "1000", "256"});
}

TEST_F(OpenRefuses, BadPagesOnAFile) {
  Patch([](auto& pg) {
    const uint32_t n = 1, b = 17;
    std::memcpy(pg.data() + 1032, &n, 4);
    std::memcpy(pg.data() + 1536, &b, 4);
  });
  ExpectRefused(OpenStatus(p.str()), {"nr_badpages", "1"});
}

TEST_F(OpenRefuses, SizeNotAWholeNumberOfPages) {
  WriteAt(p.str(), kPages * kPageSize, "x", 1);
  ExpectRefused(OpenStatus(p.str()), {"size", "1048577"});
}

TEST_F(OpenRefuses, AHoleInTheFile) {
  PunchHole(p.str(), 100, 3);
  ExpectRefused(OpenStatus(p.str()), {"extents", "hole at page 100"});
}

TEST(OpenRefusesFile, SparseFile) {
  TempPath p;
  WritePage0(p.str(), EncodeHeader(SwapHeaderV1{1, kPages - 1, {}, kTestUuid, ""}));
  ASSERT_EQ(::truncate(p.c_str(), kPages * kPageSize), 0);
  const auto info = InspectArea(p.str());
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info->extent_summary.has_holes);
  ExpectRefused(OpenStatus(p.str()), {"extents", "hole at page 1"});
}

TEST(OpenRefusesFile, PreallocatedUnwrittenBlocks) {
  TempPath p;
  const int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fallocate(fd, 0, 0, kPages * kPageSize), 0) << std::strerror(errno);
  ::close(fd);
  WritePage0(p.str(), EncodeHeader(SwapHeaderV1{1, kPages - 1, {}, kTestUuid, ""}));
  ExpectRefused(OpenStatus(p.str()), {"extents", "hole at page 1"});
}

TEST(OpenRefusesFile, NotARegularFileOrBlockDevice) {
  ExpectRefused(OpenStatus("/dev/null"),
                {"/dev/null: is a character device", "must be a regular file or a block device"});
}

// ---- open: what the allocator gets ------------------------------------------

TEST(SwapAreaOpen, ToSwaponOptionsDescribesTheFile) {
  TempPath p;
  ASSERT_TRUE(FormatArea(p.str(), Opts()).ok());
  auto a = SwapArea::Open(p.str());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const AreaInfo& info = (*a)->info();
  EXPECT_EQ(info.path.front(), '/');
  const alloc::SwaponOptions so = (*a)->ToSwaponOptions(alloc::DiscardMode::kPages, 5);
  EXPECT_EQ(so.name, info.path);
  EXPECT_EQ(so.pages, kPages);
  EXPECT_TRUE(so.bad_pages.empty());
  EXPECT_FALSE(so.blkdev);
  EXPECT_EQ(so.ssd, !info.limits.rotational);
  EXPECT_EQ(so.discard, alloc::DiscardMode::kPages);
  EXPECT_EQ(so.discard_supported, info.limits.discard);
  EXPECT_EQ(so.prio, 5);
  EXPECT_EQ(so.bdev, info.bdev);
  ASSERT_FALSE(so.extents.empty());
  EXPECT_EQ(so.extents.front().start_page, 0u);
  EXPECT_EQ(so.first_block, so.extents.front().start_block);
  EXPECT_EQ(so.discard_sink, &(*a)->discard_sink());

  alloc::SwapSystem sys(alloc::SystemOptions{});
  auto type = sys.Swapon(so);
  ASSERT_TRUE(type.ok()) << type.status().ToString();
  EXPECT_EQ(sys.total_swap_pages(), static_cast<int64_t>(kPages - 1));
  // The same area twice is −EBUSY (same name).
  EXPECT_EQ(sys.Swapon(so).status().code(), -EBUSY);
  ASSERT_TRUE(sys.Swapoff(*type).ok());
}

TEST(SwapAreaOpen, ExtentsMatchFiemapOfTheFile) {
  TempPath p;
  ASSERT_TRUE(FormatArea(p.str(), Opts()).ok());
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  bool holes = true;
  auto ext = FileExtents(fd, kPages * kPageSize, &holes);
  ::close(fd);
  ASSERT_TRUE(ext.ok()) << ext.status().ToString();
  EXPECT_FALSE(holes);
  auto a = SwapArea::Open(p.str());
  ASSERT_TRUE(a.ok());
  ASSERT_EQ((*a)->info().extents.size(), ext->size());
  for (size_t i = 0; i < ext->size(); ++i) {
    EXPECT_EQ((*a)->info().extents[i].start_page, (*ext)[i].start_page);
    EXPECT_EQ((*a)->info().extents[i].start_block, (*ext)[i].start_block);
  }
  // Extents tile [0, pages) in order.
  uint64_t next = 0;
  for (const auto& e : *ext) {
    EXPECT_EQ(e.start_page, next);
    next += e.nr_pages;
  }
  EXPECT_EQ(next, kPages);
}

TEST(FileExtents, ExtentAfterAHoleMapsToTheRightBlocks) {
  TempPath p;
  WriteZeroFile(p.str(), kPages * kPageSize);
  const int fd0 = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  auto before = FileExtents(fd0, kPages * kPageSize, nullptr);
  ::close(fd0);
  ASSERT_TRUE(before.ok());
  PunchHole(p.str(), 10, 5);
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  bool holes = false;
  auto after = FileExtents(fd, kPages * kPageSize, &holes);
  ::close(fd);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(holes);
  // Page 15 keeps the block it had before the punch.
  auto block_of = [](const std::vector<alloc::SwapExtent>& v, uint64_t page) -> int64_t {
    for (const auto& e : v)
      if (page >= e.start_page && page < e.start_page + e.nr_pages)
        return static_cast<int64_t>(e.start_block + (page - e.start_page));
    return -1;
  };
  EXPECT_EQ(block_of(*after, 15), block_of(*before, 15));
  EXPECT_EQ(block_of(*after, 9), block_of(*before, 9));
  EXPECT_EQ(block_of(*after, 10), -1);
  EXPECT_EQ(block_of(*after, 14), -1);
}

// ---- the discard sink --------------------------------------------------------

TEST(DiscardSink, PunchesHolesButNeverTheHeaderPage) {
  TempPath p;
  ASSERT_TRUE(FormatArea(p.str(), Opts()).ok());
  {
    auto a = SwapArea::Open(p.str());
    ASSERT_TRUE(a.ok());
    (*a)->discard_sink().Discard(0, 0, 8);      // slots 1..7; slot 0 is kept
    (*a)->discard_sink().Discard(0, 200, 100);  // clipped at the end of the area
  }
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  auto ext = FileExtents(fd, kPages * kPageSize, nullptr);
  ::close(fd);
  ASSERT_TRUE(ext.ok());
  std::vector<bool> mapped(kPages, false);
  for (const auto& e : *ext)
    for (uint64_t i = 0; i < e.nr_pages; ++i) mapped[e.start_page + i] = true;
  EXPECT_TRUE(mapped[0]);
  for (uint64_t s = 1; s < 8; ++s) EXPECT_FALSE(mapped[s]) << s;
  for (uint64_t s = 8; s < 200; ++s) EXPECT_TRUE(mapped[s]) << s;
  for (uint64_t s = 200; s < kPages; ++s) EXPECT_FALSE(mapped[s]) << s;
  EXPECT_EQ(InspectArea(p.str())->header.signature, Signature::kSwapSpace2);
}

TEST(DiscardSink, AreaDiscardAtSwaponSparesTheHeader) {
  TempPath p;
  ASSERT_TRUE(FormatArea(p.str(), Opts()).ok());
  auto a = SwapArea::Open(p.str());
  ASSERT_TRUE(a.ok());
  alloc::SwaponOptions so = (*a)->ToSwaponOptions(alloc::DiscardMode::kOnce);
  so.discard_supported = true;  // the hole punch works whatever the disk says
  alloc::SwapSystem sys(alloc::SystemOptions{});
  auto type = sys.Swapon(so);
  ASSERT_TRUE(type.ok()) << type.status().ToString();
  const auto info = InspectArea(p.str());
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->header.signature, Signature::kSwapSpace2);
  ASSERT_EQ(info->extents.size(), 1u);  // only the header page is left
  EXPECT_EQ(info->extents[0].start_page, 0u);
  EXPECT_EQ(info->extents[0].nr_pages, 1u);
  ASSERT_TRUE(sys.Swapoff(*type).ok());
}

}  // namespace
}  // namespace swaplab::area::test
