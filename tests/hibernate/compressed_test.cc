// SPDX-License-Identifier: MIT
// §7: the compressed image path — CRC32 against a bitwise reference, the
// block compressors, round trips with every compressor (in memory and on a
// real file), corruption named by unit / page / slot, round boundaries
// (§6.3), and every failure point of a compressed write (§4.6).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "area/io_test_util.h"
#include "hibernate/hib_test_util.h"
#include "swaplab/area/io_engine_factory.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/hibernate/compress.h"
#include "swaplab/hibernate/image_reader.h"
#include "swaplab/hibernate/image_writer.h"

namespace swaplab::hibernate {
namespace {

using testing::Inuse;
using testing::MakeRig;
using testing::Rig;

SyntheticSnapshot Snap(uint64_t saveable, double compressible = 0.3, uint64_t seed = 11) {
  SnapshotOptions o;
  o.saveable_pages = saveable;
  o.zero_share = 0.1;
  o.compressible_share = compressible;
  o.seed = seed;
  return *SyntheticSnapshot::Make(o);
}

// The kernel's crc32_le written out bit by bit (reflected 0xEDB88320, no
// inversions, §7.5), independent of zlib.
uint32_t BitwiseCrc(uint32_t crc, const std::byte* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    crc ^= static_cast<uint8_t>(p[i]);
    for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ ((crc & 1) ? 0xEDB88320u : 0);
  }
  return crc;
}

TEST(Crc32, MatchesBitwiseKernelDefinitionAndChains) {
  std::mt19937_64 rng(5);
  std::vector<std::byte> buf(10000);
  for (auto& b : buf) b = std::byte(rng() & 0xff);
  for (size_t split : {0u, 1u, 4096u, 9999u}) {
    const uint32_t whole = Crc32Le(0, buf.data(), buf.size());
    const uint32_t chained =
        Crc32Le(Crc32Le(0, buf.data(), split), buf.data() + split, buf.size() - split);
    EXPECT_EQ(whole, BitwiseCrc(0, buf.data(), buf.size()));
    EXPECT_EQ(chained, whole) << split;
  }
  // Every length 0 … 300 (the folded path starts at 64 and has 64-, 16-
  // and 1-byte tails) and every start alignment, from a random register.
  for (size_t off = 0; off < 16; ++off) {
    for (size_t n = 0; n <= 300 && off + n <= buf.size(); ++n) {
      const auto r = static_cast<uint32_t>(rng());
      ASSERT_EQ(Crc32Le(r, buf.data() + off, n), BitwiseCrc(r, buf.data() + off, n))
          << "offset " << off << " length " << n;
    }
  }
  const char* check = "123456789";  // standard CRC-32 is 0xCBF43926 with inversions
  const auto* p = reinterpret_cast<const std::byte*>(check);
  EXPECT_EQ(~Crc32Le(~0u, p, 9), 0xCBF43926u);
  EXPECT_EQ(Crc32Le(0, p, 9), BitwiseCrc(0, p, 9));
}

TEST(Compressors, RoundTripAndMalformedBlock) {
  std::vector<std::byte> in(kUncSize), out(kCmpSize), back(kUncSize);
  std::mt19937_64 rng(9);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = std::byte(i < in.size() / 2 ? (i % 7) : (rng() & 0xff));
  for (Compressor c : {Compressor::kLzo, Compressor::kLz4}) {
    SCOPED_TRACE(Name(c));
    auto l = CompressBlock(c, in, out);
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    EXPECT_LT(*l, in.size());
    EXPECT_LE(*l, WorstCompress(in.size()));
    auto n = DecompressBlock(c, {out.data(), *l}, back);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_EQ(*n, in.size());
    EXPECT_EQ(back, in);
    EXPECT_FALSE(DecompressBlock(c, {out.data(), *l / 2}, back).ok());  // truncated block
  }
  EXPECT_FALSE(CompressBlock(Compressor::kLz4, in, {out.data(), 1000}).ok());  // below worst case
  EXPECT_EQ(kCmpPages, 35u);
  EXPECT_EQ(WorstCompress(kUncSize), 139333u);
}

TEST(Compressors, NamesAndFlags) {
  EXPECT_EQ(*ParseCompressor("lz4"), Compressor::kLz4);
  EXPECT_FALSE(ParseCompressor("zstd").ok());
  for (Compressor c : {Compressor::kNone, Compressor::kLzo, Compressor::kLz4})
    EXPECT_EQ(CompressorFromFlags(FlagsFor(c)), c);
  EXPECT_EQ(FlagsFor(Compressor::kLzo), kSfCrc32Mode);
  EXPECT_EQ(FlagsFor(Compressor::kLz4), kSfCrc32Mode | kSfCompressionAlgLz4);
}

WriterOptions Wopts(Compressor c, BatchMode m = BatchMode::kPerRun, unsigned threads = 3) {
  WriterOptions o;
  o.batch.mode = m;
  o.compress = c;
  o.threads = threads;
  o.record_placement = true;
  return o;
}

struct RtCase {  // compressor, batch mode, threads, saveable pages, read ring
  Compressor c;
  BatchMode mode;
  unsigned threads;
  uint64_t saveable, ring;
};

class CompressedRoundTrip : public ::testing::TestWithParam<RtCase> {};

TEST_P(CompressedRoundTrip, EveryPageBackAndCrcMatches) {
  const RtCase k = GetParam();
  Rig r = MakeRig(16384);
  const auto s = Snap(k.saveable);
  ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
  auto w = WriteImage(session, *r.engine, s, Wopts(k.c, k.mode, k.threads));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const uint64_t units = (s.image_pages() - 1 + kUncPages - 1) / kUncPages;
  EXPECT_EQ(w->units, units);
  EXPECT_EQ(w->flags, FlagsFor(k.c));
  EXPECT_EQ(w->stream_pages, w->stream_dblocks.size());
  if (k.saveable > 100) {
    EXPECT_LT(w->stream_pages, s.image_pages());  // something compressed
  }
  EXPECT_EQ(w->map_dblocks.size(), w->stream_pages / kMapEntries + 1);
  // The header, read back raw: S1SUSPEND, the flags, the CRC.
  auto h = ParseSwsuspHeader(r.engine->data_[0]);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->flags, FlagsFor(k.c));
  EXPECT_EQ(h->crc32, w->crc32);
  // The CRC over the whole uncompressed stream after swsusp_info (§7.5).
  uint32_t crc = 0;
  AlignedPage pg;
  for (uint64_t p = 1; p < s.image_pages(); ++p) {
    s.StreamPage(p, pg.data());
    crc = BitwiseCrc(crc, pg.data(), kPageSize);
  }
  EXPECT_EQ(w->crc32, crc);
  // Units on disk: length header, then ⌈(8 + L)/4096⌉ pages each.
  uint64_t e = 1, sum = 0;
  for (uint64_t u = 0; u < units; ++u) {
    ASSERT_LT(e, w->stream_dblocks.size());
    const uint64_t L = LoadU64(r.engine->data_[w->stream_dblocks[e]].data());
    ASSERT_GT(L, 0u);
    sum += L;
    e += (L + kCmpHeader + kPageSize - 1) / kPageSize;
  }
  EXPECT_EQ(e, w->stream_pages);
  EXPECT_EQ(sum, w->compressed_bytes);

  ReaderOptions ro;
  ro.batch.mode = k.mode;
  ro.threads = k.threads;
  ro.read_ring_pages = k.ring;
  ro.consume = true;
  auto rd = ReadImage(*r.engine, 0, ro);
  ASSERT_TRUE(rd.ok()) << rd.status().ToString();
  EXPECT_EQ(rd->compress, k.c);
  EXPECT_EQ(rd->pages_verified, s.image_pages());
  EXPECT_EQ(rd->units, units);
  EXPECT_EQ(rd->crc32, w->crc32);
  EXPECT_EQ(rd->stream_pages, w->stream_pages);
  EXPECT_TRUE(HasSignature(r.engine->data_[0], kSwapSpace2Sig));  // restored
  EXPECT_FALSE(ReadImage(*r.engine, 0, ro).ok());                 // no second resume
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CompressedRoundTrip,
    ::testing::Values(RtCase{Compressor::kLzo, BatchMode::kPerRun, 3, 3000, 0},
                      RtCase{Compressor::kLz4, BatchMode::kPerRun, 3, 3000, 0},
                      RtCase{Compressor::kLzo, BatchMode::kPerPage, 1, 2000, 35},
                      RtCase{Compressor::kLz4, BatchMode::kPerPage, 2, 1, 0},  // one short unit
                      RtCase{Compressor::kLz4, BatchMode::kPerRun, 1, 4000,
                             40},  // ring wraps often
                      RtCase{Compressor::kLzo, BatchMode::kPerRun, 3, 1100, 1024}),
    [](const auto& info) {
      const RtCase& k = info.param;
      std::string n = std::string(Name(k.c)) + "_" + Name(k.mode) + "_t" +
                      std::to_string(k.threads) + "_p" + std::to_string(k.saveable) + "_ring" +
                      std::to_string(k.ring);
      for (auto& ch : n)
        if (ch == '-') ch = '_';
      return n;
    });

// §6.3: every round ends its bio. On a fresh area, with no map page inside
// the stream (Q = 0), per-run bios = the first 1-page probe + one per round.
TEST(RoundBoundaries, OneBioPerRoundPlusTheProbe) {
  for (unsigned threads : {1u, 2u, 3u}) {
    Rig r = MakeRig(16384);
    const auto s = Snap(1500, 0.8);
    ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
    auto w =
        WriteImage(session, *r.engine, s, Wopts(Compressor::kLz4, BatchMode::kPerRun, threads));
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_LT(w->stream_pages, kMapEntries);
    const uint64_t rounds = (w->units + threads - 1) / threads;
    EXPECT_EQ(w->batch.bios, rounds + 1) << threads << " threads";
    EXPECT_EQ(w->device_runs, 1u);
  }
}

// One flipped byte anywhere in the stream is found, and the error names
// the unit, its stream pages and dblocks (or the page).
class Corruption : public ::testing::TestWithParam<Compressor> {};

TEST_P(Corruption, FlippedByteIsDetectedAndNamed) {
  const Compressor c = GetParam();
  const auto s = Snap(2500);
  std::mt19937_64 rng(42);
  int tried = 0;
  for (bool verify : {true, false}) {
    for (int trial = 0; trial < 12; ++trial) {
      Rig r = MakeRig(16384);
      ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
      auto w = WriteImage(session, *r.engine, s, Wopts(c));
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      // A byte inside a unit's compressed payload (not its filler): pick a
      // stream page on disk, and a byte below the unit's end.
      uint64_t e = 1, target_page = 0, target_byte = 0, unit_last = 0;
      const uint64_t pick = 1 + rng() % (w->stream_pages - 1);
      while (e < w->stream_pages) {
        const uint64_t L = LoadU64(r.engine->data_[w->stream_dblocks[e]].data());
        const uint64_t need = (L + kCmpHeader + kPageSize - 1) / kPageSize;
        if (pick < e + need) {
          const uint64_t off = rng() % (L + kCmpHeader);  // header or payload
          target_page = e + off / kPageSize;
          target_byte = off % kPageSize;
          unit_last = e + need - 1;
          break;
        }
        e += need;
      }
      ASSERT_GT(target_page, 0u);
      const uint64_t dblock = w->stream_dblocks[target_page];
      r.engine->data_[dblock][target_byte] ^= std::byte{0x5a};
      ReaderOptions ro;
      ro.verify_pages = verify;
      auto rd = ReadImage(*r.engine, 0, ro);
      ASSERT_FALSE(rd.ok()) << "flip at stream page " << target_page << " byte " << target_byte;
      const std::string msg = rd.status().message();
      EXPECT_NE(msg.find("image corrupted"), std::string::npos) << msg;
      if (msg.find("CRC32") == std::string::npos) {  // located: the unit that holds the byte
        EXPECT_NE(msg.find("compressed unit"), std::string::npos) << msg;
        const std::string range =
            "stream pages " + std::to_string(e) + "-" + std::to_string(unit_last) + " on disk";
        EXPECT_NE(msg.find(range), std::string::npos)
            << msg << " (flipped dblock " << dblock << ", " << range << ")";
      } else {
        EXPECT_FALSE(verify) << "with verification the page is named: " << msg;
      }
      ++tried;
    }
  }
  EXPECT_EQ(tried, 24);
}

TEST_P(Corruption, HeaderCrcMismatchIsEnodata) {
  Rig r = MakeRig(16384);
  const auto s = Snap(800);
  ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
  ASSERT_TRUE(WriteImage(session, *r.engine, s, Wopts(GetParam())).ok());
  r.engine->data_[0][kHdrCrc32] ^= std::byte{1};
  auto rd = ReadImage(*r.engine, 0, {});
  ASSERT_FALSE(rd.ok());
  EXPECT_EQ(rd.status().code(), -ENODATA);
  EXPECT_NE(rd.status().message().find("CRC32"), std::string::npos) << rd.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Compressors, Corruption,
                         ::testing::Values(Compressor::kLzo, Compressor::kLz4),
                         [](const auto& info) { return std::string(Name(info.param)); });

// §4.6 in compressed mode: every I/O failure and every slot-allocation
// failure of a small compressed write leaves no slot allocated.
TEST(CompressedFailurePoints, EveryFailureLeavesNoSlot) {
  const auto s = Snap(1500, 0.1);  // T_c > 511: map page 0 is async
  auto rig = [] {
    Rig r = MakeRig(4096);
    for (int i = 0; i < 700; ++i) (void)r.sys->AllocHibernationSlot(i % 4, r.type);  // scatter base
    for (uint64_t sl = 1; sl < 4000; sl += 3)
      (void)r.sys->FreeHibernationSlot(alloc::SwapEntry{r.type, sl});
    return r;
  };
  for (SlotSourceKind kind : {SlotSourceKind::kBase, SlotSourceKind::kFreeClustersSorted}) {
    SCOPED_TRACE(Name(kind));
    uint64_t total = 0, slots = 0;
    {
      Rig r = rig();
      ImageSession session(*r.sys, r.type, kind);
      auto w = WriteImage(session, *r.engine, s, Wopts(Compressor::kLzo, BatchMode::kPerRun, 1));
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      ASSERT_GT(w->stream_pages, kMapEntries);
      total = r.engine->submitted();
      slots = w->slots;
    }
    auto clean = [](Rig& r, uint64_t before) {
      EXPECT_EQ(Inuse(r), before);
      EXPECT_TRUE(r.sys->CheckInvariants().ok()) << r.sys->CheckInvariants().ToString();
      EXPECT_TRUE(HasSignature(r.engine->data_[0], kSwapSpace2Sig));
      EXPECT_FALSE(ReadImage(*r.engine, 0, {}).ok());
    };
    // Every request near the start and the end, a stride in between (the
    // last map page's error is ignored, §12 U9).
    for (uint64_t i = 0; i + 1 < total; i += (i < 12 || i + 12 > total) ? 1 : 23) {
      Rig r = rig();
      const uint64_t before = Inuse(r);
      r.engine->fail_request = i;
      ImageSession session(*r.sys, r.type, kind);
      auto w = WriteImage(session, *r.engine, s, Wopts(Compressor::kLzo, BatchMode::kPerRun, 1));
      ASSERT_FALSE(w.ok()) << "request " << i;
      EXPECT_EQ(w.status().code(), -EIO);
      clean(r, before);
      if (HasFailure()) FAIL() << "request " << i << " of " << total;
    }
    for (uint64_t n = 0; n < slots; n += (n < 6 || n + 6 > slots) ? 1 : 127) {
      Rig r = rig();
      const uint64_t before = Inuse(r);
      ImageSession session(*r.sys, r.type, kind);
      session.FailAllocAt(n);
      auto w = WriteImage(session, *r.engine, s, Wopts(Compressor::kLzo, BatchMode::kPerRun, 1));
      ASSERT_FALSE(w.ok()) << "alloc " << n;
      EXPECT_EQ(w.status().code(), -ENOSPC);
      clean(r, before);
      if (HasFailure()) FAIL() << "alloc " << n << " of " << slots;
    }
  }
}

// On a real file (ext4 under /var/tmp) through io_uring O_DIRECT: bytes
// read == bytes written, for every compressor.
TEST(RealFile, RoundTripEveryCompressor) {
  area::testing::ScratchDir dir;
  ASSERT_FALSE(dir.path().empty()) << "mkdtemp under /var/tmp";
  for (Compressor c : {Compressor::kNone, Compressor::kLzo, Compressor::kLz4}) {
    SCOPED_TRACE(Name(c));
    const std::string path = dir.File(std::string("swap_") + Name(c));
    area::FormatOptions fo;
    fo.size_bytes = 64u << 20;
    ASSERT_TRUE(area::FormatArea(path, fo).ok());
    auto a = area::SwapArea::Open(path);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    alloc::SwapSystem sys(alloc::SystemOptions{});
    alloc::SwaponOptions sw = (*a)->ToSwaponOptions();
    sw.extents.clear();  // slots are pages of the file, as `swaplab image` does
    sw.first_block = 0;
    auto type = sys.Swapon(sw);
    ASSERT_TRUE(type.ok()) << type.status().ToString();
    area::EngineOptions eo;
    eo.limits = (*a)->info().limits;
    auto engine = area::OpenEngine(area::EngineKind::kAuto, path, eo);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    auto s = Snap(6000);  // T > 511: several map pages
    // Uncompressed: as `swaplab image write` does, the snapshot in memory
    // and the write copies from an arena registered with io_uring, smaller
    // than the copies in flight so the heap fallback is used too.
    std::unique_ptr<CopyArena> arena;
    WriterOptions wo = Wopts(c);
    if (c == Compressor::kNone) {
      ASSERT_TRUE(s.Materialize().ok());
      arena = std::move(CopyArena::Make(700).value());
      wo.batch.arena = arena.get();
      if ((*engine)->name() == "io_uring") {
        EXPECT_TRUE((*engine)->RegisterBuffer(arena->base(), 700 * kPageSize));
      }
    }
    ImageSession session(sys, *type, SlotSourceKind::kFreeClustersSorted);
    auto w = WriteImage(session, **engine, s, wo);
    (*engine)->UnregisterBuffer();
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    if (arena && (*engine)->name() == "io_uring") {
      EXPECT_GT((*engine)->stats().fixed_requests, 0u);
    }
    // read-only by default: the image is still there afterwards
    ASSERT_TRUE(ReadImage(**engine, 0, {}).ok());
    EXPECT_FALSE(area::SwapArea::Open(path).ok());
    const uint64_t written = (*engine)->stats().pages_written, read = (*engine)->stats().pages_read;
    ReaderOptions consume;
    consume.consume = true;
    auto rd = ReadImage(**engine, 0, consume);
    ASSERT_TRUE(rd.ok()) << rd.status().ToString();
    EXPECT_EQ(rd->pages_verified, s.image_pages());  // every byte compared
    EXPECT_EQ(rd->stream_pages, w->stream_pages);
    // Pages the reader read: page 0, the chain, the stream; the writer
    // wrote the stream, the chain and page 0.
    EXPECT_EQ((*engine)->stats().pages_read - read, w->stream_pages + (w->Q + 1) + 1);
    EXPECT_EQ(written, w->stream_pages + (w->Q + 1) + 1);
    EXPECT_TRUE(area::SwapArea::Open(path).ok());  // a valid swap area again
  }
}

}  // namespace
}  // namespace swaplab::hibernate
