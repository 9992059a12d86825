// SPDX-License-Identifier: MIT
// The binary trace encoding (docs/formats.md §5.1): every record reads
// back as its text line reads, and bad bytes are refused with the record
// and its byte offset, never read past.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "swaplab/workload/trace.h"
#include "workload/trace_text.h"

namespace swaplab::workload {
namespace {

TraceReader FromBytes(const std::string& bytes) {
  return TraceReader(std::make_unique<std::istringstream>(bytes), "b.trace");
}

// Every record of a reader, or its first error.
Result<std::vector<TraceRecord>> ReadAll(TraceReader r) {
  std::vector<TraceRecord> out;
  TraceRecord rec;
  for (;;) {
    auto more = r.Next(&rec);
    if (!more.ok()) return more.status();
    if (!*more) return out;
    out.push_back(rec);
  }
}

std::string ToBinary(const std::vector<TraceRecord>& recs) {
  std::string b = BinaryTraceHeader();
  for (const auto& r : recs) AppendBinaryRecord(r, &b);
  return b;
}

// Two records are the same when every field a record carries is.
void ExpectSame(const TraceRecord& a, const TraceRecord& b, const std::string& what) {
  EXPECT_EQ(FormatRecord(a), FormatRecord(b)) << what;
  EXPECT_EQ(a.op, b.op) << what;
  EXPECT_EQ(a.line, b.line) << what;
  EXPECT_EQ(a.dev, b.dev) << what;
  EXPECT_EQ(a.pages, b.pages) << what;
  EXPECT_EQ(a.ssd, b.ssd) << what;
  EXPECT_EQ(a.blkdev, b.blkdev) << what;
  EXPECT_EQ(a.discard, b.discard) << what;
  EXPECT_EQ(a.prio, b.prio) << what;
  EXPECT_EQ(a.folio, b.folio) << what;
  EXPECT_EQ(a.order, b.order) << what;
  EXPECT_EQ(a.cpu, b.cpu) << what;
  EXPECT_EQ(a.page, b.page) << what;
  EXPECT_EQ(a.n, b.n) << what;
  EXPECT_EQ(a.offset, b.offset) << what;
}

const char kEveryOp[] =
    "swaplab-trace 1\n"
    "cpus n=2\n"
    "swapon dev=0 pages=4294967296 ssd=0 blkdev=1 discard=1 prio=32767\n"
    "swapon dev=1 pages=100 ssd=1 blkdev=0 discard=0\n"
    "alloc folio=7 order=4 cpu=1\nalloc folio=9223372036854775807 order=15 cpu=1023\n"
    "free folio=7 page=2 n=3\nfree folio=7\nfree folio=7 page=5\ncache folio=7 page=0 n=1\n"
    "drop-cache folio=7\ndrop-cache\ndup folio=7\nsuspend-storage\nresume-storage\n"
    "expect folio=7 page=1 dev=0 offset=513\nexpect folio=7 dev=0 offset=0\n"
    "foreign dev=1 offset=12 n=3 cpu=1\nforeign dev=1 offset=20 cpu=0\n"
    "foreign-free dev=1 offset=13 n=2\nforeign-free dev=1 offset=12\n"
    "scan-base dev=0 cpu=1 offset=4096\nswapoff dev=1\n";

TEST(TraceBinary, EveryOperationReadsBackAsItsTextLine) {
  auto text = ReadAll(trace_text::FromText(kEveryOp));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  const std::string bin = ToBinary(*text);
  auto back = ReadAll(FromBytes(bin));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), text->size());
  for (size_t i = 0; i < text->size(); ++i)
    ExpectSame((*text)[i], (*back)[i], "record " + std::to_string(i));
  // Smaller than the text: an alloc is its op byte and three varints.
  EXPECT_LT(bin.size(), std::string(kEveryOp).size() / 3);
}

TEST(TraceBinary, TheReaderSaysWhichEncodingItRead) {
  TraceReader t = trace_text::FromText("swaplab-trace 1\ndrop-cache\n");
  TraceReader b = FromBytes(BinaryTraceHeader());
  TraceRecord rec;
  ASSERT_TRUE(t.Next(&rec).ok());
  auto none = b.Next(&rec);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);  // a header and no record: an empty trace, not an error
  EXPECT_FALSE(t.binary());
  EXPECT_TRUE(b.binary());
}

// Random valid records, written as text and as binary, read back the same
// (and with the line numbers `trace convert`'s text gives them).
TEST(TraceBinary, RandomRecordsReadAsTheirText) {
  std::mt19937_64 rnd(31);
  auto below = [&](uint64_t n) { return rnd() % n; };
  auto big = [&] {  // values of every varint length, 1 to 9 bytes
    const int bits = static_cast<int>(below(63)) + 1;
    return rnd() >> (64 - bits);
  };
  std::string text = std::string(kTraceHeader) + "\n";
  for (int i = 0; i < 20000; ++i) {
    TraceRecord r;
    switch (below(9)) {
      case 0:
        r.op = TraceOp::kSwapon;
        r.dev = big();
        r.pages = below(kMaxTracePages + 1);
        r.ssd = below(2);
        r.blkdev = below(2);
        r.discard = below(2);
        if (below(2)) r.prio = static_cast<int>(below(32768));
        break;
      case 1:
        r.op = TraceOp::kAlloc;
        r.folio = big();
        r.order = static_cast<int>(below(16));
        r.cpu = static_cast<int>(below(1024));
        break;
      case 2:
      case 3:
        r.op = below(2) ? TraceOp::kFree : TraceOp::kCache;
        r.folio = big();
        if (below(2)) r.page = big();
        if (below(2)) r.n = big() | 1;
        break;
      case 4:
        r.op = TraceOp::kDropCache;
        if (below(2)) r.folio = big();
        break;
      case 5:
        r.op = TraceOp::kExpect;
        r.folio = big();
        r.page = below(2) ? big() : 0;
        r.dev = big();
        r.offset = big();
        break;
      case 6:
        r.op = below(2) ? TraceOp::kForeign : TraceOp::kForeignFree;
        r.dev = big();
        r.offset = big();
        if (below(2)) r.n = big() | 1;
        if (r.op == TraceOp::kForeign) r.cpu = static_cast<int>(below(1024));
        break;
      case 7:
        r.op = TraceOp::kScanBase;
        r.dev = big();
        r.cpu = static_cast<int>(below(1024));
        r.offset = big();
        break;
      default:
        r.op = TraceOp::kDup;
        r.folio = big();
        break;
    }
    text += FormatRecord(r) + "\n";
  }
  auto from_text = ReadAll(trace_text::FromText(text));
  ASSERT_TRUE(from_text.ok()) << from_text.status().ToString();
  auto from_bin = ReadAll(FromBytes(ToBinary(*from_text)));
  ASSERT_TRUE(from_bin.ok()) << from_bin.status().ToString();
  ASSERT_EQ(from_bin->size(), from_text->size());
  for (size_t i = 0; i < from_text->size(); ++i) {
    ExpectSame((*from_text)[i], (*from_bin)[i], FormatRecord((*from_text)[i]));
    EXPECT_EQ((*from_bin)[i].line, i + 2);
    if (HasFailure()) break;
  }
}

struct BadBytes {
  std::string body;  // after the header
  const char* what;
};

TEST(TraceBinary, BadBytesAreRefusedWithTheRecordAndItsOffset) {
  const std::string h = BinaryTraceHeader();          // 9 bytes: the first record is at byte 9
  const std::string alloc_ok("\x02\x07\x01\x00", 4);  // alloc folio=7 order=1 cpu=0
  const BadBytes cases[] = {
      {std::string("\x0e", 1), "unknown operation byte 0x0e"},
      {std::string("\x7f", 1), "unknown operation byte 0x7f"},
      {std::string("\x02\x07\x01", 3), "the file ends inside the record"},
      {std::string("\x02", 1), "the file ends inside the record"},
      // a mask naming `pages` (bit 1) for an alloc
      {std::string("\x82\xc2\x03\x07\x01\x00\x05", 7), "'alloc' takes no field 'pages'"},
      // a mask without `cpu` (bit 8)
      {std::string("\x82\xc0\x01\x07\x01", 5), "'alloc' needs field 'cpu'"},
      {std::string("\x82\x80\x80\x01", 4), "names a key the format does not have"},
      {std::string("\x02\x07\x10\x00", 4), "order 16 is outside 0..15"},
      {std::string("\x02\x07\x01\x80\x08", 5), "cpu 1024 is outside 0..1023"},
      {std::string("\x02\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x01\x00", 13),
       "field 'folio' is above the limit of 2^63-1"},
      {std::string("\x0d\x00", 2), "n must be at least 1"},  // cpus n=0
  };
  for (const auto& c : cases) {
    for (const bool after_one : {false, true}) {
      const std::string bytes = h + (after_one ? alloc_ok : "") + c.body;
      auto r = ReadAll(FromBytes(bytes));
      const std::string where = after_one ? "b.trace:3 (byte 13): " : "b.trace:2 (byte 9): ";
      ASSERT_FALSE(r.ok()) << c.what;
      EXPECT_NE(r.status().message().find(where), std::string::npos) << r.status().message();
      EXPECT_NE(r.status().message().find(c.what), std::string::npos) << r.status().message();
    }
  }
}

TEST(TraceBinary, ABadHeaderIsRefused) {
  std::string v2 = BinaryTraceHeader();
  v2.back() = 2;
  auto r = ReadAll(FromBytes(v2));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("b.trace:1: unsupported binary trace version 2"),
            std::string::npos)
      << r.status().message();
  // The magic alone: the version is missing.
  auto m = ReadAll(FromBytes(BinaryTraceHeader().substr(0, 8)));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("ends before its version"), std::string::npos);
  // Seven bytes of the magic are no binary trace: read as text, refused as one.
  auto t = ReadAll(FromBytes(BinaryTraceHeader().substr(0, 7)));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("swaplab-trace 1"), std::string::npos);
}

// Every prefix of a valid binary trace: the records before the cut read
// back, and a cut inside a record is that record's error, never a record
// made of what follows.
TEST(TraceBinary, EveryTruncationEndsAtARecordOrSaysSo) {
  auto text = ReadAll(trace_text::FromText(kEveryOp));
  ASSERT_TRUE(text.ok());
  const std::string bin = ToBinary(*text);
  std::vector<size_t> ends;  // byte offset after each record
  {
    std::string b = BinaryTraceHeader();
    for (const auto& r : *text) {
      AppendBinaryRecord(r, &b);
      ends.push_back(b.size());
    }
  }
  for (size_t cut = BinaryTraceHeader().size(); cut < bin.size(); ++cut) {
    auto r = ReadAll(FromBytes(bin.substr(0, cut)));
    const size_t whole =
        static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), cut) - ends.begin());
    const bool at_boundary =
        cut == BinaryTraceHeader().size() || (whole > 0 && ends[whole - 1] == cut);
    if (at_boundary) {
      ASSERT_TRUE(r.ok()) << cut << ": " << r.status().ToString();
      EXPECT_EQ(r->size(), whole) << cut;
    } else {
      ASSERT_FALSE(r.ok()) << cut;
      EXPECT_NE(r.status().message().find("ends inside the record"), std::string::npos)
          << cut << ": " << r.status().message();
    }
  }
}

// A binary trace longer than the reader's buffer (records straddle its
// refills): read whole, each record where it was written.
TEST(TraceBinary, ALongTraceReadsAcrossBufferRefills) {
  std::vector<TraceRecord> recs;
  for (uint64_t i = 0; i < 300000; ++i) {
    TraceRecord r;
    r.op = TraceOp::kAlloc;
    r.folio = i * 1000003;  // 1 to 6 bytes
    r.order = static_cast<int>(i % 16);
    r.cpu = static_cast<int>(i % 1024);
    recs.push_back(r);
  }
  auto back = ReadAll(FromBytes(ToBinary(recs)));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), recs.size());
  for (size_t i = 0; i < recs.size(); ++i) {
    ASSERT_EQ(*(*back)[i].folio, *recs[i].folio) << i;
    ASSERT_EQ((*back)[i].cpu, recs[i].cpu) << i;
  }
}

}  // namespace
}  // namespace swaplab::workload
