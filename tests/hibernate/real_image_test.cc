// SPDX-License-Identifier: MIT
// The reader on images swaplab did not write: kernel-like images (x86-64
// restore record in swsusp_info, no swaplab tag), read-only by default, one
// test per structural check with its message (hibernation spec §1.4, §3.3,
// §3.4, §4.1, §7.4, §7.5; issue "read the images a real kernel writes").
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "hibernate/hib_test_util.h"
#include "swaplab/hibernate/image_chain.h"
#include "swaplab/hibernate/image_reader.h"
#include "swaplab/hibernate/image_writer.h"

namespace swaplab::hibernate {
namespace {

using testing::MakeRig;
using testing::Rig;

SyntheticSnapshot Snap(uint64_t saveable, uint64_t seed = 5) {
  SnapshotOptions o;
  o.saveable_pages = saveable;
  o.zero_share = 0.25;
  o.compressible_share = 0.5;
  o.seed = seed;
  return *SyntheticSnapshot::Make(o);
}

// An image as a Linux x86-64 kernel lays it out: swaplab's writer, then
// swsusp_info rewritten as init_header() + arch_hibernation_header_save()
// leave it (utsname gone under the restore record, version_code 0).
struct KernelLike {
  Rig r;
  WriteReport w;
};

KernelLike MakeKernelLike(Compressor c, uint64_t saveable = 1600, uint64_t device_pages = 8192) {
  KernelLike k{MakeRig(device_pages), {}};
  const SyntheticSnapshot s = Snap(saveable);
  ImageSession session(*k.r.sys, k.r.type, SlotSourceKind::kFreeClustersSorted);
  WriterOptions wo;
  wo.compress = c;
  wo.record_placement = true;
  auto w = WriteImage(session, *k.r.engine, s, wo);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  k.w = *w;
  std::byte* info = k.r.engine->data_[k.w.stream_dblocks[0]].data();
  std::memset(info, 0, kArchHeaderBytes);
  StoreU64(info, 0xffffffff81000000ULL);  // jump_address
  StoreU64(info + 8, 0x1000000);          // jump_address_phys
  StoreU64(info + 16, 0x2a00000);         // cr3
  StoreU64(info + 24, kX86RestoreMagic);  // magic
  StoreU64(info + 32, 0x12345678);        // e820_checksum
  return k;
}

ReaderOptions Ro(const Rig& r) {
  ReaderOptions o;
  o.device_pages = r.pages;
  return o;
}

// The message of a failed read, "" when it did not fail.
std::string ReadError(Rig& r) {
  auto rd = ReadImage(*r.engine, 0, Ro(r));
  return rd.ok() ? "" : rd.status().message();
}

#define EXPECT_READ_FAILS_WITH(rig, text)                                           \
  do {                                                                              \
    const std::string msg_ = ReadError(rig);                                        \
    EXPECT_NE(msg_.find(text), std::string::npos) << "message: \"" << msg_ << "\""; \
  } while (0)

TEST(KernelImage, EveryCompressorReadsWithoutChangingAByte) {
  for (Compressor c : {Compressor::kNone, Compressor::kLzo, Compressor::kLz4})
    for (bool pipelined : {false, true}) {
      SCOPED_TRACE(std::string(Name(c)) + (pipelined ? " pipelined" : " kernel I/O"));
      KernelLike k = MakeKernelLike(c);
      const auto before = k.r.engine->data_;
      const size_t requests = k.r.engine->log_.size();
      uint64_t seen = 0;
      ReaderOptions o = Ro(k.r);
      o.pipelined = pipelined;
      o.on_page = [&](uint64_t p, const std::byte*) {
        EXPECT_EQ(p, seen);  // every stream page, in order
        ++seen;
        return Status::Ok();
      };
      auto rd = ReadImage(*k.r.engine, 0, o);
      ASSERT_TRUE(rd.ok()) << Name(c) << ": " << rd.status().ToString();
      EXPECT_EQ(rd->info.origin, ImageOrigin::kKernelX86_64);
      EXPECT_EQ(rd->info.x86.magic, kX86RestoreMagic);
      EXPECT_EQ(rd->T, k.w.T);
      EXPECT_EQ(rd->N, k.w.N);
      EXPECT_EQ(rd->M, k.w.M);
      EXPECT_EQ(seen, k.w.T);
      EXPECT_EQ(rd->pages_verified, 0u);  // no snapshot to compare with: never assumed
      EXPECT_EQ(rd->pfns - rd->zero_pages, k.w.N);
      EXPECT_EQ(rd->crc_checked, c != Compressor::kNone);
      EXPECT_FALSE(rd->consumed);
      EXPECT_EQ(k.r.engine->data_, before);
      for (size_t i = requests; i < k.r.engine->log_.size(); ++i)
        EXPECT_FALSE(k.r.engine->log_[i].write);
      seen = 0;
      ASSERT_TRUE(ReadImage(*k.r.engine, 0, o).ok());  // and again: nothing was consumed
    }
}

// The pipelined reader reads the same pages and reports the same image as
// the kernel's order, with fewer round trips: the map chain is read ahead
// along its stride, the metadata pages go with the data.
TEST(KernelImage, PipelinedReadAgreesWithTheKernelOrderInFewerRoundTrips) {
  for (Compressor c : {Compressor::kNone, Compressor::kLzo}) {
    SCOPED_TRACE(Name(c));
    KernelLike k = MakeKernelLike(c, 40000, 65536);
    ReaderOptions o = Ro(k.r);
    o.threads = 2;
    auto kernel = ReadImage(*k.r.engine, 0, o);
    o.pipelined = true;
    auto fast = ReadImage(*k.r.engine, 0, o);
    ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
    ASSERT_TRUE(fast.ok()) << fast.status().ToString();
    EXPECT_GE(kernel->map_pages, 30u);
    EXPECT_EQ(fast->map_pages, kernel->map_pages);
    EXPECT_EQ(fast->T, kernel->T);
    EXPECT_EQ(fast->units, kernel->units);
    EXPECT_EQ(fast->crc32, kernel->crc32);
    EXPECT_EQ(fast->crc_checked, kernel->crc_checked);
    EXPECT_EQ(fast->pfns, kernel->pfns);
    EXPECT_EQ(fast->zero_pages, kernel->zero_pages);
    // kernel order: a sync read per map page (and per metadata page when
    // uncompressed); pipelined: the first two map pages, then batches
    // doubling to kChainLookahead
    EXPECT_GE(kernel->batch.sync_ios, kernel->map_pages);
    EXPECT_LE(fast->batch.sync_ios, 4u);
    EXPECT_LT(fast->batch.sync_ios + fast->batch.drains,
              (kernel->batch.sync_ios + kernel->batch.drains) / 2);
  }
}

// The chain read ahead is the chain: same map pages, same entries, whether
// the guesses hold (a contiguous image) or fail at every step (map pages
// moved to where the stride never leads).
TEST(KernelImage, ChainLookaheadReadsTheSameChainWhereverTheMapPagesLie) {
  KernelLike k = MakeKernelLike(Compressor::kNone, 40000, 65536);
  RequestBatcher b0(*k.r.engine, {});
  auto plain = ReadImageChain(b0, 0, k.r.pages);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  RequestBatcher b1(*k.r.engine, {});
  auto ahead = ReadImageChain(b1, 0, k.r.pages, kChainLookahead);
  ASSERT_TRUE(ahead.ok()) << ahead.status().ToString();
  EXPECT_EQ(ahead->map_dblocks, plain->map_dblocks);
  EXPECT_EQ(ahead->entries, plain->entries);
  EXPECT_LT(b1.stats().sync_ios + b1.stats().drains, plain->map_dblocks.size() / 4);
  // Scatter the map pages: map page j moves to a free slot near the end,
  // every other one going the other way, and the pointers follow.
  auto& d = k.r.engine->data_;
  std::vector<uint64_t> moved;
  for (size_t j = 0; j < plain->map_dblocks.size(); ++j)
    moved.push_back(k.r.pages - 2 - (j % 2 ? j : plain->map_dblocks.size() + j));
  for (size_t j = 0; j < moved.size(); ++j) {
    d[moved[j]] = d[plain->map_dblocks[j]];
    if (j + 1 < moved.size()) StoreU64(d[moved[j]].data() + kPageSize - 8, moved[j + 1]);
  }
  StoreU64(d[0].data() + kHdrImage, moved[0]);
  RequestBatcher b2(*k.r.engine, {});
  auto scattered = ReadImageChain(b2, 0, k.r.pages, kChainLookahead);
  ASSERT_TRUE(scattered.ok()) << scattered.status().ToString();
  EXPECT_EQ(scattered->map_dblocks, moved);
  EXPECT_EQ(scattered->entries, plain->entries);
}

// The kernel banner is searched only in the frames near restore_registers
// (jump_address_phys of the x86 record): found there, not looked for
// elsewhere.
TEST(KernelImage, BannerIsSearchedNearTheKernelText) {
  KernelLike k = MakeKernelLike(Compressor::kNone);
  auto first = ReadImage(*k.r.engine, 0, Ro(k.r));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const uint64_t p = first->M + 1 + first->N / 2;  // a data page in the middle
  static constexpr char kText[] = "Linux version 6.12.0-test (builder) #1 SMP\n";
  std::byte* page = k.r.engine->data_[k.w.stream_dblocks[p]].data();
  std::memcpy(page + 96, kText, sizeof kText - 1);
  auto near = ReadImage(*k.r.engine, 0, Ro(k.r));  // jump_address_phys 16 MiB: PFN 4096
  ASSERT_TRUE(near.ok()) << near.status().ToString();
  EXPECT_EQ(near->kernel_banner, "Linux version 6.12.0-test (builder) #1 SMP");
  EXPECT_EQ(near->banner_page, p);
  StoreU64(k.r.engine->data_[k.w.stream_dblocks[0]].data() + 8, uint64_t{1} << 40);  // 1 TiB away
  auto far = ReadImage(*k.r.engine, 0, Ro(k.r));
  ASSERT_TRUE(far.ok()) << far.status().ToString();
  EXPECT_EQ(far->kernel_banner, "");
}

TEST(KernelImage, ConsumeRestoresTheSignatureAsResumeDoes) {
  KernelLike k = MakeKernelLike(Compressor::kLzo);
  ReaderOptions o = Ro(k.r);
  o.consume = true;
  auto rd = ReadImage(*k.r.engine, 0, o);
  ASSERT_TRUE(rd.ok()) << rd.status().ToString();
  EXPECT_TRUE(rd->consumed);
  EXPECT_TRUE(HasSignature(k.r.engine->data_[0], kSwapSpace2Sig));
  EXPECT_READ_FAILS_WITH(k.r, "no S1SUSPEND");
}

TEST(KernelImage, HardwareSignatureIsComparedOnlyWhenGiven) {
  KernelLike k = MakeKernelLike(Compressor::kNone);
  auto& p0 = k.r.engine->data_[0];
  StoreU32(p0.data() + kHdrHwSig, 0xfac5);
  StoreU32(p0.data() + kHdrFlags, LoadU32(p0.data() + kHdrFlags) | kSfHwSig);
  auto rd = ReadImage(*k.r.engine, 0, Ro(k.r));
  ASSERT_TRUE(rd.ok()) << rd.status().ToString();
  EXPECT_EQ(rd->hw_sig, 0xfac5u);
  ReaderOptions o = Ro(k.r);
  o.hw_sig = 1;
  EXPECT_EQ(ReadImage(*k.r.engine, 0, o).status().code(), -EINVAL);
}

// --- the swsusp header -----------------------------------------------------

TEST(ImageChecks, ImageSectorZero) {
  KernelLike k = MakeKernelLike(Compressor::kNone);
  StoreU64(k.r.engine->data_[0].data() + kHdrImage, 0);
  EXPECT_READ_FAILS_WITH(k.r, "image (byte 4064) is 0, the swap header itself");
}

TEST(ImageChecks, ImpossibleFlagMixes) {
  KernelLike k = MakeKernelLike(Compressor::kNone);
  std::byte* p0 = k.r.engine->data_[0].data();
  StoreU32(p0 + kHdrFlags, kSfNocompressMode | kSfCompressionAlgLz4);
  EXPECT_READ_FAILS_WITH(k.r, "mix SF_NOCOMPRESS_MODE with compression bits");
  StoreU32(p0 + kHdrFlags, kSfNocompressMode | kSfCrc32Mode);
  EXPECT_READ_FAILS_WITH(k.r, "mix SF_NOCOMPRESS_MODE with compression bits");
  StoreU32(p0 + kHdrFlags, kSfNocompressMode | 64);
  EXPECT_READ_FAILS_WITH(k.r, "has unknown bits 64");
}

TEST(ImageChecks, OrigSigThatIsNoSwapSignature) {
  KernelLike k = MakeKernelLike(Compressor::kNone);
  std::memcpy(k.r.engine->data_[0].data() + kHdrOrigSig, "EXT4FSXXXX", 10);
  EXPECT_READ_FAILS_WITH(k.r, "orig_sig (byte 4076) is not a swap signature");
}

// --- the map chain -----------------------------------------------------------

TEST(ImageChecks, MapChainLoop) {
  KernelLike k = MakeKernelLike(Compressor::kNone, 2000);  // T > 511: two map pages
  ASSERT_GE(k.w.map_dblocks.size(), 2u);
  StoreU64(k.r.engine->data_[k.w.map_dblocks[0]].data() + 8 * kMapEntries, k.w.map_dblocks[0]);
  EXPECT_READ_FAILS_WITH(k.r,
                         "the chain loops back to dblock " + std::to_string(k.w.map_dblocks[0]));
}

TEST(ImageChecks, DblockPastTheEnd) {
  KernelLike k = MakeKernelLike(Compressor::kNone, 2000);
  StoreU64(k.r.engine->data_[k.w.map_dblocks[0]].data() + 8 * 7, k.r.pages + 3);
  EXPECT_READ_FAILS_WITH(k.r, "entry 7 of map page 0 (dblock " +
                                  std::to_string(k.w.map_dblocks[0]) + ") is dblock " +
                                  std::to_string(k.r.pages + 3) + ", past the device end");
  KernelLike k2 = MakeKernelLike(Compressor::kNone, 2000);
  StoreU64(k2.r.engine->data_[k2.w.map_dblocks[0]].data() + 8 * kMapEntries, k2.r.pages);
  EXPECT_READ_FAILS_WITH(
      k2.r, "map page 1 (dblock " + std::to_string(k2.r.pages) + ") is past the device end");
}

TEST(ImageChecks, EntryAfterTheEnd) {
  KernelLike k = MakeKernelLike(Compressor::kNone, 600);  // one map page, partly filled
  ASSERT_EQ(k.w.map_dblocks.size(), 1u);
  const uint64_t n = k.w.stream_pages;
  ASSERT_LT(n + 2, kMapEntries);
  StoreU64(k.r.engine->data_[k.w.map_dblocks[0]].data() + 8 * (n + 1), 4000);
  EXPECT_READ_FAILS_WITH(k.r, "entry " + std::to_string(n + 1) + " of map page 0");
  EXPECT_READ_FAILS_WITH(k.r, "comes after the end of the image");
}

TEST(ImageChecks, PartlyFilledMapPageWithANextPointer) {
  KernelLike k = MakeKernelLike(Compressor::kNone, 600);
  StoreU64(k.r.engine->data_[k.w.map_dblocks[0]].data() + 8 * kMapEntries, 4000);
  EXPECT_READ_FAILS_WITH(k.r, "is partly filled but has a next pointer (dblock 4000)");
}

TEST(ImageChecks, ASlotUsedTwice) {
  KernelLike k = MakeKernelLike(Compressor::kNone, 600);
  std::byte* map = k.r.engine->data_[k.w.map_dblocks[0]].data();
  StoreU64(map + 8 * 9, MapEntry(map, 8));
  EXPECT_READ_FAILS_WITH(k.r, "entry 9 of map page 0");
  EXPECT_READ_FAILS_WITH(k.r, "which holds another page of the image");
}

TEST(ImageChecks, EntryOnTheSwapHeader) {
  KernelLike k = MakeKernelLike(Compressor::kNone, 600);
  StoreU64(k.r.engine->data_[k.w.map_dblocks[0]].data() + 8 * 3, 0);  // a 0 ends the list early
  EXPECT_READ_FAILS_WITH(k.r, "comes after the end of the image");
}

// --- swsusp_info against the chain --------------------------------------------

TEST(ImageChecks, SwsuspInfoCountsThatDisagreeWithTheChain) {
  KernelLike k = MakeKernelLike(Compressor::kNone);
  std::byte* info = k.r.engine->data_[k.w.stream_dblocks[0]].data();
  StoreU64(info + kInfoPages, k.w.T + 1);
  StoreU64(info + kInfoSize, (k.w.T + 1) * kPageSize);
  EXPECT_READ_FAILS_WITH(k.r, "entries for an image of " + std::to_string(k.w.T + 1) + " pages");
  StoreU64(info + kInfoPages, k.w.T);
  EXPECT_READ_FAILS_WITH(k.r, "is not pages " + std::to_string(k.w.T) + " * 4096");
  StoreU64(info + kInfoSize, k.w.T * kPageSize);
  StoreU64(info + kInfoImagePages, k.w.T);
  EXPECT_READ_FAILS_WITH(k.r, "image_pages " + std::to_string(k.w.T) + " is not below pages");
}

TEST(ImageChecks, CompressedImageClaimingMorePagesThanItsUnitsCanHold) {
  KernelLike k = MakeKernelLike(Compressor::kLzo);
  std::byte* info = k.r.engine->data_[k.w.stream_dblocks[0]].data();
  const uint64_t T = 32 * k.w.stream_pages + 10;
  StoreU64(info + kInfoPages, T);
  StoreU64(info + kInfoSize, T * kPageSize);
  EXPECT_READ_FAILS_WITH(
      k.r, "cannot come from " + std::to_string(k.w.stream_pages - 1) + " compressed stream pages");
}

// --- the PFN list (metadata pages) ---------------------------------------------

TEST(ImageChecks, PfnListNotAscending) {
  KernelLike k = MakeKernelLike(Compressor::kNone);
  std::byte* meta = k.r.engine->data_[k.w.stream_dblocks[1]].data();
  StoreU64(meta + 8 * 5, LoadU64(meta + 8 * 4) & ~(uint64_t{1} << 63));
  EXPECT_READ_FAILS_WITH(k.r, "metadata page 1, entry 5");
  EXPECT_READ_FAILS_WITH(k.r, "(the list is in ascending order)");
}

TEST(ImageChecks, PfnListEndsBeforeTheLastMetadataPage) {
  KernelLike k = MakeKernelLike(Compressor::kNone);
  ASSERT_GE(k.w.M, 2u);
  StoreU64(k.r.engine->data_[k.w.stream_dblocks[1]].data() + 8 * 100, ~uint64_t{0});
  EXPECT_READ_FAILS_WITH(k.r, "metadata page 1 of " + std::to_string(k.w.M) + ", entry 100");
}

TEST(ImageChecks, DataPfnCountDisagreesWithImagePages) {
  KernelLike k = MakeKernelLike(Compressor::kNone);
  std::byte* meta = k.r.engine->data_[k.w.stream_dblocks[1]].data();
  size_t j = 0;
  while (LoadU64(meta + 8 * j) & (uint64_t{1} << 63)) ++j;              // a PFN with data
  StoreU64(meta + 8 * j, LoadU64(meta + 8 * j) | (uint64_t{1} << 63));  // now a zero page
  EXPECT_READ_FAILS_WITH(k.r, std::to_string(k.w.N - 1) + " PFNs with data");
  EXPECT_READ_FAILS_WITH(k.r, "swsusp_info says image_pages " + std::to_string(k.w.N));
}

// --- corruption of a compressed kernel image, named where it is -----------------

TEST(ImageChecks, FlippedByteInACompressedUnitIsNamed) {
  KernelLike k = MakeKernelLike(Compressor::kLzo, 4000);
  const uint64_t p = k.w.stream_pages / 2;
  k.r.engine->data_[k.w.stream_dblocks[p]][2000] ^= std::byte{0x40};
  auto rd = ReadImage(*k.r.engine, 0, Ro(k.r));
  ASSERT_FALSE(rd.ok());
  const std::string m = rd.status().message();
  // either the block no longer decompresses (unit and dblocks named) or
  // the CRC32 catches it
  EXPECT_TRUE(m.find("compressed unit ") != std::string::npos ||
              m.find("CRC32 of the decompressed stream") != std::string::npos)
      << m;
}

TEST(ImageChecks, BadCrcIsReportedWithTheHeaderValue) {
  KernelLike k = MakeKernelLike(Compressor::kLz4);
  std::byte* p0 = k.r.engine->data_[0].data();
  StoreU32(p0 + kHdrCrc32, LoadU32(p0 + kHdrCrc32) ^ 1);
  auto rd = ReadImage(*k.r.engine, 0, Ro(k.r));
  ASSERT_FALSE(rd.ok());
  EXPECT_EQ(rd.status().code(), -ENODATA);
  EXPECT_NE(rd.status().message().find("the header says"), std::string::npos);
  // without SF_CRC32_MODE the same image has no CRC to check: structure only
  StoreU32(p0 + kHdrFlags, LoadU32(p0 + kHdrFlags) & ~kSfCrc32Mode);
  auto no_crc = ReadImage(*k.r.engine, 0, Ro(k.r));
  ASSERT_TRUE(no_crc.ok()) << no_crc.status().ToString();
  EXPECT_FALSE(no_crc->crc_checked);
}

// --- bounds: nothing sized from an unchecked field -------------------------------

TEST(ImageChecks, SwaplabTagWithAHugePageCountIsRefusedBeforeAllocating) {
  Rig r = MakeRig(8192);
  ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
  WriterOptions wo;
  wo.record_placement = true;
  auto w = WriteImage(session, *r.engine, Snap(600), wo);
  ASSERT_TRUE(w.ok());
  for (uint64_t huge : {uint64_t{1} << 28, uint64_t{1} << 31, uint64_t{1} << 32, ~uint64_t{0}}) {
    StoreU64(r.engine->data_[w->stream_dblocks[0]].data() + 64 + 8,
             huge);  // the tag's saveable count
    EXPECT_READ_FAILS_WITH(r, "the swaplab tag's saveable page count " + std::to_string(huge));
  }
}

// --- inspect: layout facts -------------------------------------------------------

TEST(Inspect, LayoutAndBiosMatchWhatTheWriterDid) {
  for (BatchMode m : {BatchMode::kPerPage, BatchMode::kPerRun}) {
    Rig r = MakeRig(16384, 0, area::DeviceLimits{.max_segments = 254, .max_sectors_kb = 1016});
    for (int i = 0; i < 700; ++i)
      (void)r.sys->AllocHibernationSlot(0, r.type);  // the image starts later
    ImageSession session(*r.sys, r.type, SlotSourceKind::kBase);
    WriterOptions wo;
    wo.batch.mode = m;
    auto w = WriteImage(session, *r.engine, Snap(3000), wo);
    ASSERT_TRUE(w.ok());
    const auto before = r.engine->data_;
    auto in = InspectImage(*r.engine, 0, r.pages);
    ASSERT_TRUE(in.ok()) << in.status().ToString();
    EXPECT_EQ(in->info.origin, ImageOrigin::kSwaplab);
    EXPECT_EQ(in->layout.slots, w->stream_pages + w->Q + 1);
    EXPECT_EQ(in->layout.runs_disk_order, w->device_runs);
    EXPECT_EQ(in->layout.clusters_touched,
              (in->layout.last_dblock / 512) - (in->layout.first_dblock / 512) + 1);
    // the replay of the write order gives the writer's own bio count
    EXPECT_EQ(m == BatchMode::kPerPage ? in->layout.bios_per_page : in->layout.bios_per_run,
              w->batch.bios);
    EXPECT_EQ(in->layout.bios_per_page, BiosPerPageFormula(w->T));
    EXPECT_EQ(r.engine->data_, before);
  }
}

}  // namespace
}  // namespace swaplab::hibernate
