// SPDX-License-Identifier: MIT
// The trace format (design.md) and its replay semantics.
#include "swaplab/workload/trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <tuple>

#include "swaplab/workload/call_tape.h"
#include "swaplab/workload/trace_runner.h"
#include "workload/trace_text.h"

namespace swaplab::workload {
namespace {

using alloc::SlotKind;
using alloc::SwapEntry;
using trace_text::FromText;

Status ReadAll(const std::string& text, std::vector<TraceRecord>* out) {
  TraceReader r = FromText(text);
  TraceRecord rec;
  for (;;) {
    auto more = r.Next(&rec);
    if (!more.ok()) return more.status();
    if (!*more) return Status::Ok();
    out->push_back(rec);
  }
}

TEST(TraceFormat, ParsesEveryOperationWithCommentsAndBlankLines) {
  std::vector<TraceRecord> recs;
  ASSERT_TRUE(ReadAll("swaplab-trace 1\n# comment\n\n"
                      "swapon dev=0 pages=4096 ssd=0 blkdev=1 discard=1 prio=5\n"
                      "alloc folio=7 order=4 cpu=1   # trailing comment\n"
                      "free folio=7 page=2 n=3\ncache folio=7\ndrop-cache folio=7\ndrop-cache\n"
                      "dup folio=7\nsuspend-storage\nresume-storage\n"
                      "expect folio=7 page=1 dev=0 offset=513\nswapoff dev=0\n",
                      &recs)
                  .ok());
  ASSERT_EQ(recs.size(), 11u);
  EXPECT_EQ(recs[0].op, TraceOp::kSwapon);
  EXPECT_EQ(recs[0].pages, 4096u);
  EXPECT_FALSE(recs[0].ssd);
  EXPECT_TRUE(recs[0].discard);
  EXPECT_EQ(*recs[0].prio, 5);
  EXPECT_EQ(recs[0].line, 4u);
  EXPECT_EQ(recs[1].order, 4);
  EXPECT_EQ(recs[1].cpu, 1);
  EXPECT_EQ(recs[2].page, 2u);
  EXPECT_EQ(*recs[2].n, 3u);
  EXPECT_FALSE(recs[5].folio.has_value());
  EXPECT_EQ(recs[9].offset, 513u);
}

TEST(TraceFormat, WriterOutputParsesBackToTheSameRecords) {
  const std::string text =
      "swaplab-trace 1\nswapon dev=1 pages=100 ssd=1 blkdev=0 discard=0\nalloc folio=3 order=2 "
      "cpu=0\n"
      "free folio=3 page=1 n=2\nexpect folio=3 page=3 dev=1 offset=9\ndrop-cache\n"
      "foreign dev=1 offset=12 n=3 cpu=1\nforeign dev=1 offset=20 cpu=0\n"
      "foreign-free dev=1 offset=13 n=2\nforeign-free dev=1 offset=12\nswapoff dev=1\n";
  std::vector<TraceRecord> a, b;
  ASSERT_TRUE(ReadAll(text, &a).ok());
  std::string again = std::string(kTraceHeader) + "\n";
  for (const auto& r : a) again += FormatRecord(r) + "\n";
  ASSERT_TRUE(ReadAll(again, &b).ok());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(FormatRecord(a[i]), FormatRecord(b[i]));
}

struct BadCase {
  const char* text;
  const char* where;
  const char* what;
};

TEST(TraceFormat, BadLinesNameFileLineAndWhatWasExpected) {
  const BadCase cases[] = {
      {"", "t.trace:1", "swaplab-trace 1"},
      {"alloc folio=1 order=0 cpu=0\n", "t.trace:1", "header"},
      {"swaplab-trace 2\n", "t.trace:1", "version"},
      {"swaplab-trace 1\nallocate folio=1\n", "t.trace:2", "unknown operation"},
      {"swaplab-trace 1\nalloc folio=1 order=0\n", "t.trace:2", "needs field 'cpu'"},
      {"swaplab-trace 1\nalloc folio=1 order=x cpu=0\n", "t.trace:2", "non-negative integer"},
      {"swaplab-trace 1\n\nalloc folio=1 order=0 cpu=0 colour=3\n", "t.trace:3",
       "no field 'colour'"},
      {"swaplab-trace 1\nfree folio=1 n=0\n", "t.trace:2", "n must be at least 1"},
      {"swaplab-trace 1\nswapon dev=0 pages=10 ssd=2\n", "t.trace:2", "0 or 1"},
      {"swaplab-trace 1\nalloc folio=1 folio=2 order=0 cpu=0\n", "t.trace:2", "twice"},
      {"swaplab-trace 1\nalloc folio1 order=0 cpu=0\n", "t.trace:2", "key=value"},
  };
  for (const BadCase& c : cases) {
    std::vector<TraceRecord> recs;
    Status st = ReadAll(c.text, &recs);
    EXPECT_EQ(st.code(), -EINVAL) << c.text;
    EXPECT_NE(st.message().find(c.where), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(c.what), std::string::npos) << st.message();
  }
}

// a swapon larger than the largest swap area was cut to
// 2^32 pages silently; it is refused, naming the line and the limit.
TEST(TraceFormat, PagesAboveTheLargestSwapAreaAreRefusedNamingTheLimit) {
  std::vector<TraceRecord> recs;
  ASSERT_TRUE(ReadAll("swaplab-trace 1\nswapon dev=0 pages=4294967296\n", &recs).ok());
  EXPECT_EQ(recs.at(0).pages, kMaxTracePages);
  recs.clear();
  Status st = ReadAll("swaplab-trace 1\n# big\nswapon dev=0 pages=4294967297\n", &recs);
  EXPECT_EQ(st.code(), -EINVAL);
  EXPECT_NE(st.message().find("t.trace:3:"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("pages 4294967297"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("limit of 2^32 (4294967296) pages"), std::string::npos)
      << st.message();
  EXPECT_TRUE(recs.empty());
  st = ReadAll("swaplab-trace 1\nswapon dev=0 pages=99999999999999999999\n", &recs);
  EXPECT_EQ(st.code(), -EINVAL);
  EXPECT_NE(st.message().find("t.trace:2:"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("limit"), std::string::npos) << st.message();
}

// a 10 MB bad token was echoed whole into the message.
TEST(TraceFormat, LongBadTokensAreCutInMessages) {
  const std::string token(10000, 'x');
  std::vector<TraceRecord> recs;
  for (const std::string& line :
       {"swapon dev=0 pages=" + token, token + " dev=0", "swapon " + token}) {
    Status st = ReadAll("swaplab-trace 1\n" + line + "\n", &recs);
    EXPECT_EQ(st.code(), -EINVAL);
    EXPECT_NE(st.message().find("t.trace:2:"), std::string::npos) << st.message().substr(0, 200);
    EXPECT_LT(st.message().size(), 400u) << st.message().substr(0, 200);
    EXPECT_NE(st.message().find(std::string(64, 'x') + "…"), std::string::npos)
        << st.message().substr(0, 200);
    EXPECT_EQ(st.message().find(std::string(65, 'x')), std::string::npos);
  }
}

// A 10 MB line (a token, or a comment) is refused at the line limit without
// being held whole.
TEST(TraceFormat, LinesLongerThanTheLimitAreRefused) {
  std::vector<TraceRecord> recs;
  Status st = ReadAll(
      "swaplab-trace 1\nalloc folio=" + std::string(10 << 20, '7') + " order=0 cpu=0\n", &recs);
  EXPECT_EQ(st.code(), -EINVAL);
  EXPECT_NE(st.message().find("t.trace:2: line longer than the limit of 65536 bytes"),
            std::string::npos)
      << st.message().substr(0, 200);
  EXPECT_LT(st.message().size(), 400u);
  // A line just under the limit is read (a long comment).
  const std::string ok =
      "alloc folio=1 order=0 cpu=0 #" + std::string(kMaxTraceLineBytes - 40, 'c');
  recs.clear();
  ASSERT_TRUE(ReadAll("swaplab-trace 1\n" + ok + "\nswapoff dev=0", &recs).ok());
  EXPECT_EQ(recs.size(), 2u);
}

// Writes `text` to a temporary file (the reader reads a file in chunks, a
// stream through the same buffer) and reads it back.
Status ReadAllFromFile(const std::string& text, std::vector<TraceRecord>* out,
                       std::string* name = nullptr) {
  char path[] = "/tmp/swaplab-trace-test-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return Status(-EIO, "mkstemp");
  FILE* f = fdopen(fd, "w");
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  if (name) *name = path;
  auto r = TraceReader::Open(path);
  Status st = r.status();
  for (TraceRecord rec; st.ok();) {
    auto more = (*r)->Next(&rec);
    if (!more.ok()) st = more.status();
    if (!more.ok() || !*more) break;
    out->push_back(rec);
  }
  std::remove(path);
  return st;
}

// Lines of every length up to a few hundred bytes, 4 MB of them: many fall
// across the reader's read chunks (256 KiB) and its buffer's refills. A file
// and a stream give the same records, each with its line number.
TEST(TraceFormat, LinesAcrossReadChunksAreReadWhole) {
  std::string text = "swaplab-trace 1\n";
  uint64_t folio = 0;
  std::vector<uint64_t> line_of;  // by folio
  for (uint64_t line = 2; text.size() < (4u << 20); ++line) {
    text += "alloc folio=" + std::to_string(folio) + " order=" + std::to_string(folio % 5) +
            " cpu=" + std::to_string(folio % 3) + " #" + std::string(folio % 397, 'c') + "\n";
    line_of.push_back(line);
    ++folio;
  }
  std::vector<TraceRecord> from_file, from_stream;
  ASSERT_TRUE(ReadAllFromFile(text, &from_file).ok());
  ASSERT_TRUE(ReadAll(text, &from_stream).ok());
  ASSERT_EQ(from_file.size(), folio);
  ASSERT_EQ(from_stream.size(), folio);
  for (uint64_t i = 0; i < folio; ++i) {
    ASSERT_EQ(*from_file[i].folio, i);
    ASSERT_EQ(from_file[i].order, static_cast<int>(i % 5));
    ASSERT_EQ(from_file[i].cpu, static_cast<int>(i % 3));
    ASSERT_EQ(from_file[i].line, line_of[i]);
    ASSERT_EQ(FormatRecord(from_stream[i]), FormatRecord(from_file[i]));
    ASSERT_EQ(from_stream[i].line, line_of[i]);
  }
}

// A line of exactly the limit is read, one byte more is refused (line
// number, start of the line), wherever the line falls in the read buffer;
// the lines before it are read.
TEST(TraceFormat, LineLimitHoldsAcrossReadChunks) {
  for (const size_t before : {size_t{0}, size_t{200000}, size_t{262100}, size_t{300000}}) {
    std::string pad;  // lines of 1000 bytes or less, `before` bytes
    size_t pad_lines = 0;
    for (; pad.size() < before; ++pad_lines)
      pad += "#" + std::string(std::min<size_t>(998, before - pad.size() - 1), 'p') + "\n";
    auto line_of = [](size_t bytes) {
      const std::string head = "free folio=3 #";
      return head + std::string(bytes - head.size(), 'z');
    };
    std::vector<TraceRecord> recs;
    ASSERT_TRUE(
        ReadAllFromFile(
            "swaplab-trace 1\n" + pad + line_of(kMaxTraceLineBytes) + "\nfree folio=4\n", &recs)
            .ok())
        << before;
    ASSERT_EQ(recs.size(), 2u);
    EXPECT_EQ(recs[0].line, 2 + pad_lines);
    EXPECT_EQ(*recs[1].folio, 4u);
    EXPECT_EQ(recs[1].line, 3 + pad_lines);
    recs.clear();
    std::string name;
    Status st = ReadAllFromFile("swaplab-trace 1\nfree folio=1\n" + pad +
                                    line_of(kMaxTraceLineBytes + 1) + "\nfree folio=4\n",
                                &recs, &name);
    EXPECT_EQ(st.code(), -EINVAL);
    EXPECT_EQ(st.message().rfind(name + ":" + std::to_string(3 + pad_lines) +
                                     ": line longer than the limit of 65536 bytes, "
                                     "starting 'free folio=3 #zzz",
                                 0),
              0u)
        << st.message().substr(0, 200);
    EXPECT_EQ(recs.size(), 1u);  // the line before it
  }
}

// CR before the newline is white space; the last line needs no newline;
// an input of blank lines and comments only has no header.
TEST(TraceFormat, CrLfLinesAndAMissingLastNewlineAreRead) {
  for (bool file : {false, true}) {
    std::vector<TraceRecord> recs;
    const std::string text =
        "swaplab-trace 1\r\nswapon dev=0 pages=64\r\nalloc folio=1 order=0 cpu=0\r\nswapoff dev=0";
    ASSERT_TRUE((file ? ReadAllFromFile(text, &recs) : ReadAll(text, &recs)).ok()) << file;
    ASSERT_EQ(recs.size(), 3u);
    EXPECT_EQ(recs[1].cpu, 0);
    EXPECT_EQ(recs[2].op, TraceOp::kSwapoff);
    EXPECT_EQ(recs[2].line, 4u);
    recs.clear();
    std::string name = "t.trace";
    Status st = file ? ReadAllFromFile("\n# only a comment\n\n", &recs, &name)
                     : ReadAll("\n# only a comment\n\n", &recs);
    EXPECT_EQ(st.message(), name + ":1: empty trace, expected 'swaplab-trace 1'");
  }
}

// Control characters in a bad token (a terminal escape) are escaped.
TEST(TraceFormat, ControlCharactersAreEscapedInMessages) {
  std::vector<TraceRecord> recs;
  Status st = ReadAll("swaplab-trace 1\n\x1b[2Jalloc\x07 folio=1\n", &recs);
  EXPECT_EQ(st.code(), -EINVAL);
  EXPECT_NE(st.message().find("'\\x1b[2Jalloc\\x07'"), std::string::npos) << st.message();
  for (char c : st.message()) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << st.message();
  st = ReadAll("swaplab-trace 1\nalloc folio=1\x01 order=0 cpu=0\n", &recs);
  EXPECT_NE(st.message().find("got '1\\x01'"), std::string::npos) << st.message();
}

// Random lines, most of them common records, the rest near misses (a
// comment, a tab, a CR, two spaces, a sign, a key or operation one byte off,
// a NUL, values at and past each limit, 18 to 20 digits), and lines in the
// written key order: the reader with its one-pass paths for common lines
// and the general parser alone give the same record or the same message
// for every line.
TEST(TraceFormat, TheOnePassReaderReadsEveryLineAsTheGeneralOne) {
  std::mt19937_64 rnd(14);
  auto pick = [&](const auto& v) { return v[rnd() % std::size(v)]; };
  const std::string ops[] = {"swapon",     "swapoff", "alloc",           "free",           "cache",
                             "drop-cache", "dup",     "suspend-storage", "resume-storage", "expect",
                             "allo",       "allocc",  "drop-cachex",     "Alloc"};
  const std::string keys[] = {
      "dev", "pages", "ssd", "blkdev", "discard", "prio", "folio",    "order",
      "cpu", "page",  "n",   "offset", "folios",  "fol",  "discardx", std::string("dev\0", 4),
      ""};
  const std::string values[] = {"0",
                                "1",
                                "2",
                                "7",
                                "15",
                                "16",
                                "1023",
                                "1024",
                                "32767",
                                "32768",
                                "4294967296",
                                "4294967297",
                                "000000000000000042",
                                "999999999999999999",
                                "1000000000000000000",
                                "9223372036854775807",
                                "9223372036854775808",
                                "-1",
                                "+1",
                                "",
                                "1x",
                                "0x10",
                                "12#c"};
  // Each operation's keys (the first ten ops), required and optional.
  const std::vector<std::string> op_keys[] = {{"dev", "pages", "ssd", "blkdev", "discard", "prio"},
                                              {"dev"},
                                              {"folio", "order", "cpu"},
                                              {"folio", "page", "n"},
                                              {"folio", "page", "n"},
                                              {"folio"},
                                              {"folio"},
                                              {},
                                              {},
                                              {"folio", "dev", "offset", "page"}};
  const std::string seps[] = {" ", " ", " ", " ", " ", " ", " ", " ", "  ", "\t", " \r"};
  std::string text = "swaplab-trace 1\n";
  constexpr int kLines = 6000;
  for (int i = 0; i < kLines; ++i) {
    const bool common = rnd() % 3 != 0;
    const size_t op = rnd() % std::size(ops);
    std::string line = ops[op];
    // A common line names its operation's own keys (a few missing, one
    // given twice, or one of another operation now and then).
    std::vector<std::string> fields;
    if (common && op < std::size(op_keys)) {
      for (const std::string& k : op_keys[op])
        if (rnd() % 8 != 0) fields.push_back(k);
      if (rnd() % 8 == 0) fields.push_back(pick(keys));
      std::shuffle(fields.begin(), fields.end(), rnd);
    } else {
      for (int f = static_cast<int>(rnd() % 5); f > 0; --f) fields.push_back(pick(keys));
    }
    for (const std::string& k : fields) {
      line += common ? " " : pick(seps);
      line += k + "=" + pick(values);
    }
    if (!common && rnd() % 4 == 0) line += pick(seps);
    if (!common && rnd() % 8 == 0) line += " # note";
    text += line + "\n";
  }
  // The same lines as the generator's valid records, so that most take the
  // one-pass path: the alloc / free / cache mix of a replay.
  for (int i = 0; i < kLines; ++i) {
    text += "alloc folio=" + std::to_string(rnd() % 100000) +
            " order=" + std::to_string(rnd() % 5) + " cpu=" + std::to_string(rnd() % 4) + "\n";
    text += "free folio=" + std::to_string(rnd() >> 2) + " page=" + std::to_string(rnd() % 16) +
            " n=1\n";
  }
  // Lines in the order FormatRecord writes each operation's keys (the
  // order the reader takes in one pass from its buffer), some keys left
  // out, any value: the written form of every operation and its misses.
  const std::vector<std::string> written_keys[] = {
      {"swapon", "dev", "pages", "ssd", "blkdev", "discard", "prio"},
      {"alloc", "folio", "order", "cpu"},
      {"free", "folio", "page", "n"},
      {"cache", "folio", "page", "n"},
      {"drop-cache", "folio"},
      {"expect", "folio", "page", "dev", "offset"},
      {"foreign", "dev", "offset", "n", "cpu"},
      {"foreign-free", "dev", "offset", "n"},
      {"scan-base", "dev", "cpu", "offset"},
      {"cpus", "n"}};
  for (int i = 0; i < kLines; ++i) {
    const std::vector<std::string>& w = pick(written_keys);
    std::string line = w[0];
    for (size_t k = 1; k < w.size(); ++k)
      if (rnd() % 6 != 0) line += " " + w[k] + "=" + (rnd() % 2 ? pick(values) : "3");
    text += line + (rnd() % 16 == 0 ? " \n" : "\n");
  }
  TraceReader fast = FromText(text);
  TraceReader general = FromText(text);
  general.set_fast_path(false);
  int records = 0, errors = 0;
  for (;;) {
    TraceRecord a, b;
    auto ra = fast.Next(&a);
    auto rb = general.Next(&b);
    ASSERT_EQ(ra.ok(), rb.ok());
    if (!ra.ok()) {
      ASSERT_EQ(ra.status().ToString(), rb.status().ToString());
      ++errors;
      continue;
    }
    ASSERT_EQ(*ra, *rb);
    if (!*ra) break;
    ++records;
    SCOPED_TRACE(FormatRecord(b));
    ASSERT_EQ(a.op, b.op);
    ASSERT_EQ(a.line, b.line);
    ASSERT_EQ(a.dev, b.dev);
    ASSERT_EQ(a.pages, b.pages);
    ASSERT_EQ(a.ssd, b.ssd);
    ASSERT_EQ(a.blkdev, b.blkdev);
    ASSERT_EQ(a.discard, b.discard);
    ASSERT_EQ(a.prio, b.prio);
    ASSERT_EQ(a.folio, b.folio);
    ASSERT_EQ(a.order, b.order);
    ASSERT_EQ(a.cpu, b.cpu);
    ASSERT_EQ(a.page, b.page);
    ASSERT_EQ(a.n, b.n);
    ASSERT_EQ(a.offset, b.offset);
  }
  // Both kinds of line were met in numbers.
  EXPECT_GT(records, 2 * kLines);
  EXPECT_GT(errors, kLines / 4);
}

class Replay : public ::testing::Test {
 public:
  Replay() : Replay("linux-6.18") {}
  explicit Replay(std::string_view preset) : sys_(Options(preset)), runner_(sys_) {}
  static alloc::SystemOptions Options(std::string_view preset = "linux-6.18") {
    alloc::SystemOptions o;
    o.policy = *alloc::Policy::Preset(preset);
    o.nr_cpus = 2;
    return o;
  }
  void Run(const std::string& body) {
    TraceReader r = FromText(std::string("swaplab-trace 1\n") + body);
    TraceRecord rec;
    for (;;) {
      auto more = r.Next(&rec);
      ASSERT_TRUE(more.ok()) << more.status().message();
      if (!*more) break;
      Status st = runner_.Apply(rec, "t.trace");
      ASSERT_TRUE(st.ok()) << st.message();
      ASSERT_TRUE(sys_.CheckInvariants().ok()) << sys_.CheckInvariants().ToString();
    }
  }
  alloc::SlotInfo Slot(uint64_t off) { return *sys_.Slot(SwapEntry{0, off}); }
  alloc::SwapSystem sys_;
  TraceRunner runner_;
};

// design.md: after alloc each page holds one reference and the folio stays
// in the swap cache; freeing some 4 KiB pages of a cached 64 KiB folio frees
// nothing until the rest goes.
TEST_F(Replay, PartialFreeOfACachedLargeFolioFreesNothingUntilTheRestGoes) {
  Run("swapon dev=0 pages=4096 ssd=1 blkdev=1\nalloc folio=1 order=4 cpu=0\n");
  EXPECT_EQ(Slot(512).kind, SlotKind::kCached);
  EXPECT_EQ(Slot(512).count, 1u);
  Run("free folio=1 page=0 n=8\n");
  EXPECT_EQ(sys_.Device(0)->inuse, 16u);
  EXPECT_EQ(Slot(512).count, 0u);
  Run("free folio=1 page=8 n=8\n");  // the last references: the folio goes
  EXPECT_EQ(sys_.Device(0)->inuse, 0u);
}

TEST_F(Replay, DropCacheFreesSlotsWithoutReferences) {
  Run("swapon dev=0 pages=4096 ssd=1 blkdev=1\nalloc folio=1 order=4 cpu=0\nfree folio=1 page=0 "
      "n=4\n");
  EXPECT_EQ(sys_.Device(0)->inuse, 16u);
  Run("drop-cache folio=1\n");
  EXPECT_EQ(sys_.Device(0)->inuse, 12u);
  EXPECT_EQ(Slot(516).kind, SlotKind::kShadow);
  EXPECT_EQ(Slot(512).kind, SlotKind::kEmpty);
}

TEST_F(Replay, LargeFolioOnASwapFileFallsBackPageByPage) {
  // The kernel's order after the split (measured on 6.18, policy knob
  // split_tails_last_first): page 0 first, then pages 15 … 1.
  std::string trace = "swapon dev=0 pages=4096 ssd=1 blkdev=0\nalloc folio=1 order=4 cpu=0\n";
  trace += "expect folio=1 page=0 dev=0 offset=1\n";
  for (int i = 1; i < 16; ++i)
    trace += "expect folio=1 page=" + std::to_string(i) +
             " dev=0 offset=" + std::to_string(17 - i) + "\n";
  Run(trace);
  const auto c = sys_.counters();
  EXPECT_EQ(c.swpout_fallback[4], 1u);
  EXPECT_EQ(c.swpout[0], 16u);
  EXPECT_EQ(runner_.summary().pages_placed, 16u);
  EXPECT_EQ(runner_.summary().expected, 16u);
  EXPECT_EQ(runner_.summary().agree, 16u);
  EXPECT_EQ(runner_.summary().folio_runs, 16u);  // every page its own run (descending slots)
}

TEST_F(Replay, ExpectLinesCountAgreement) {
  Run("swapon dev=0 pages=4096 ssd=1 blkdev=1\nalloc folio=1 order=0 cpu=0\nalloc folio=2 order=0 "
      "cpu=1\n"
      "expect folio=1 dev=0 offset=1\nexpect folio=2 dev=0 offset=2\n");
  EXPECT_EQ(runner_.summary().expected, 2u);
  EXPECT_EQ(runner_.summary().agree, 1u);  // CPU 1 starts a new cluster: offset 512
  ASSERT_EQ(runner_.summary().disagreements.size(), 1u);
  EXPECT_EQ(runner_.summary().disagreements[0].line, 6u);
  EXPECT_EQ(runner_.summary().disagreements[0].got, "dev 0 offset 512");
}

// foreign (kernel run's interference): another process's pages swapped out
// on a CPU take that CPU's next slots in the model too, so the trace's
// later pages land where the kernel put them; foreign-free gives them back.
TEST_F(Replay, ForeignSlotsTakeTheCpusNextSlotsAndMoveTheTracesPages) {
  Run("swapon dev=0 pages=4096 ssd=1 blkdev=1\nalloc folio=1 order=0 cpu=0\n"
      "foreign dev=0 offset=2 n=3 cpu=0\nalloc folio=2 order=0 cpu=0\n"
      "expect folio=1 dev=0 offset=1\nexpect folio=2 dev=0 offset=5\n");
  EXPECT_EQ(runner_.summary().foreign_expected, 3u);
  EXPECT_EQ(runner_.summary().foreign_agree, 3u);
  EXPECT_EQ(runner_.summary().agree, 2u);  // without the foreign slots folio 2 gets offset 2
  EXPECT_EQ(runner_.foreign_slots(), 3u);
  EXPECT_EQ(Slot(3).kind, SlotKind::kShadow);
  EXPECT_EQ(Slot(3).count, 1u);
  EXPECT_EQ(sys_.Device(0)->inuse, 5u);
  Run("foreign-free dev=0 offset=3\n");
  EXPECT_EQ(Slot(3).kind, SlotKind::kEmpty);
  EXPECT_EQ(runner_.summary().foreign_released, 1u);
  // A foreign record the model places elsewhere is counted, not agreed: CPU
  // 1 starts a cluster of its own (512), not offset 7.
  Run("foreign dev=0 offset=7 cpu=1\n");
  EXPECT_EQ(runner_.summary().foreign_expected, 4u);
  EXPECT_EQ(runner_.summary().foreign_agree, 3u);
  // swapoff gives every foreign slot back.
  Run("free folio=1\nfree folio=2\ndrop-cache\nswapoff dev=0\n");
  EXPECT_EQ(runner_.foreign_slots(), 0u);
}

TEST_F(Replay, ForeignFreeOfASlotNoForeignRecordHoldsNamesTheLine) {
  Run("swapon dev=0 pages=4096 ssd=1 blkdev=1\nforeign dev=0 offset=1 cpu=0\n");
  TraceReader r = FromText("swaplab-trace 1\nforeign-free dev=0 offset=2\n");
  TraceRecord rec;
  ASSERT_TRUE(*r.Next(&rec));
  Status st = runner_.Apply(rec, "t.trace");
  EXPECT_EQ(st.code(), -EINVAL);
  EXPECT_NE(st.message().find("t.trace:2: no foreign record holds dev 0 offset 2"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(sys_.Device(0)->inuse, 1u);  // nothing changed
  // A range reaching past the device, or partly held already, or a huge n:
  // refused whole, before any slot is taken.
  for (const char* bad :
       {"foreign dev=0 offset=4000 n=200 cpu=0\n",
        "foreign dev=0 offset=2 n=999999999999999 cpu=0\n", "foreign dev=0 offset=0 cpu=0\n",
        "foreign-free dev=0 offset=1 n=2\n", "foreign-free dev=0 offset=1 n=999999999999999\n"}) {
    TraceReader b = FromText(std::string("swaplab-trace 1\n") + bad);
    ASSERT_TRUE(*b.Next(&rec)) << bad;
    EXPECT_EQ(runner_.Apply(rec, "t.trace").code(), -EINVAL) << bad;
    EXPECT_EQ(sys_.Device(0)->inuse, 1u) << bad;
    EXPECT_EQ(runner_.foreign_slots(), 1u) << bad;
  }
  TraceReader held = FromText("swaplab-trace 1\nforeign dev=0 offset=1 n=2 cpu=0\n");
  ASSERT_TRUE(*held.Next(&rec));
  EXPECT_EQ(runner_.Apply(rec, "t.trace").code(), -EINVAL);  // offset 1 is held
  EXPECT_EQ(sys_.Device(0)->inuse, 1u);
}

TEST_F(Replay, SwapInThenForkThenSwapoff) {
  Run("swapon dev=0 pages=4096 ssd=1 blkdev=1\nalloc folio=1 order=0 cpu=0\ndrop-cache\n");
  EXPECT_EQ(Slot(1).kind, SlotKind::kShadow);
  Run("dup folio=1\n");
  EXPECT_EQ(Slot(1).count, 2u);
  Run("cache folio=1\n");
  EXPECT_EQ(Slot(1).kind, SlotKind::kCached);
  EXPECT_EQ(Slot(1).count, 1u);
  Run("swapoff dev=0\n");
  EXPECT_TRUE(sys_.active_devices().empty());
}

// A folio whose pages were swapped back in one by one has a cache folio per
// page. Dropping its cache walks them in page order (as the zap and reclaim
// walk page tables), not in the order they were made: the folios go back to
// the runner's pool in that order, and the next allocations take them last
// released first (a walk in the order they were made would give them in the
// opposite order). Order 2 and order 6 (more cache folios than the short
// list the runner searches linearly).
void CacheFoliosAreWalkedInPageOrder(int order) {
  alloc::SwapSystem sys(Replay::Options());
  TraceRunner runner(sys);
  auto run = [&](const std::string& body) {
    TraceReader r = FromText("swaplab-trace 1\n" + body);
    for (TraceRecord rec;;) {
      auto more = r.Next(&rec);
      ASSERT_TRUE(more.ok()) << more.status().message();
      if (!*more) break;
      ASSERT_TRUE(runner.Apply(rec, "t.trace").ok()) << rec.line;
    }
    ASSERT_TRUE(sys.CheckInvariants().ok()) << sys.CheckInvariants().ToString();
  };
  const int pages = 1 << order;
  run("swapon dev=0 pages=8192 ssd=1 blkdev=1\nalloc folio=1 order=" + std::to_string(order) +
      " cpu=0\ndrop-cache folio=1\n");
  std::vector<SwapEntry> slot(pages);
  for (int i = 0; i < pages; ++i) slot[i] = runner.SlotOf(1, i);
  std::string body;  // swapped in last page first
  for (int i = pages - 1; i >= 0; --i) body += "cache folio=1 page=" + std::to_string(i) + " n=1\n";
  run(body);
  std::vector<const alloc::Folio*> cache_of(pages);
  for (int i = 0; i < pages; ++i) {
    cache_of[i] = sys.Slot(slot[i])->folio;
    ASSERT_NE(cache_of[i], nullptr) << i;
    for (int j = 0; j < i; ++j) ASSERT_NE(cache_of[i], cache_of[j]);
  }
  run("drop-cache folio=1\n");
  // The swap-ins used up the folios the large one left unused; order-0
  // allocations take theirs from the released ones, last first.
  for (int k = 0; k < 3; ++k) {
    run("alloc folio=" + std::to_string(10 + k) + " order=0 cpu=0\n");
    const SwapEntry s = runner.SlotOf(10 + k, 0);
    ASSERT_TRUE(s.valid());
    EXPECT_EQ(sys.Slot(s)->folio, cache_of[pages - 1 - k]) << "order " << order << " alloc " << k;
  }
}

TEST_F(Replay, CacheFoliosOfAnOrder2FolioAreWalkedInPageOrder) {
  CacheFoliosAreWalkedInPageOrder(2);
}
TEST_F(Replay, CacheFoliosOfAnOrder6FolioAreWalkedInPageOrder) {
  CacheFoliosAreWalkedInPageOrder(6);
}

TEST_F(Replay, SemanticErrorsNameTheLine) {
  TraceRecord r;
  r.op = TraceOp::kFree;
  r.folio = 9;
  r.line = 42;
  Status st = runner_.Apply(r, "t.trace");
  EXPECT_EQ(st.code(), -EINVAL);
  EXPECT_NE(st.message().find("t.trace:42"), std::string::npos);
}

// A record the reader did not make (a library caller's) with an order out
// of range is refused, and nothing is placed.
TEST_F(Replay, AnAllocOfAnOrderOutOfRangeIsRefused) {
  Run("swapon dev=0 pages=4096 ssd=1 blkdev=1\n");
  for (int order : {-1, 16, 40}) {
    TraceRecord r;
    r.op = TraceOp::kAlloc;
    r.folio = 5;
    r.order = order;
    r.line = 7;
    Status st = runner_.Apply(r, "t.trace");
    EXPECT_EQ(st.code(), -EINVAL) << order;
    EXPECT_NE(st.message().find("outside 0..15"), std::string::npos) << st.message();
    EXPECT_FALSE(runner_.Live(5));
  }
  EXPECT_EQ(sys_.Device(0)->inuse, 0u);
}

// The runner keeps slot offsets in 40 bits (its 16-byte page record): a
// library caller's swapon record of a larger area is refused before any
// swapon, naming the limit.
TEST_F(Replay, ASwaponAboveTheRunnersOffsetLimitIsRefused) {
  TraceRecord r;
  r.op = TraceOp::kSwapon;
  r.pages = (uint64_t{1} << 40) + 1;
  r.line = 3;
  Status st = runner_.Apply(r, "t.trace");
  EXPECT_EQ(st.code(), -EINVAL);
  EXPECT_NE(st.message().find("t.trace:3"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("2^40"), std::string::npos) << st.message();
  EXPECT_TRUE(runner_.devices().empty());
  EXPECT_FALSE(sys_.Device(0).ok());
}

}  // namespace
}  // namespace swaplab::workload

namespace swaplab::workload {
namespace {
// A global drop-cache is reclaim: a page swapped back in and still mapped
// keeps its slot (cached, count 0); `drop-cache folio=F` is folio_free_swap
// and frees it (measured on 6.18 by `swaplab kernel run`).
TEST_F(Replay, GlobalDropKeepsMappedFoliosPerFolioDropFreesThem) {
  Run("swapon dev=0 pages=4096 ssd=1 blkdev=1\nalloc folio=1 order=0 cpu=0\nalloc folio=2 order=0 "
      "cpu=0\n"
      "cache folio=1\ndrop-cache\n");
  EXPECT_EQ(Slot(1).kind, SlotKind::kCached);  // mapped: stays
  EXPECT_EQ(Slot(1).count, 0u);
  EXPECT_EQ(Slot(2).kind, SlotKind::kShadow);  // unmapped: left the cache
  Run("drop-cache folio=1\n");
  EXPECT_EQ(Slot(1).kind, SlotKind::kEmpty);
  EXPECT_EQ(Slot(2).kind, SlotKind::kShadow);
}

// A global drop is reclaim: it takes folios oldest first (docs/fidelity.md
// "The order of a global drop-cache"), so the cluster of the older folio is
// the first to regain free slots and heads the nonfull list an order-0
// allocation with nothing else left steals from (kStealHigher). Folio ids
// run against age here, so an order by id would pick the other cluster.
TEST_F(Replay, GlobalDropTakesTheOldestFolioFirst) {
  std::string body = "swapon dev=0 pages=1536 ssd=1 blkdev=1\n";
  for (int id = 64; id >= 1; --id)  // clusters 1 and 2, 32 order-4 folios each
    body += "alloc folio=" + std::to_string(id) + " order=4 cpu=0\n";
  for (int id = 100; id < 100 + 511; ++id)  // cluster 0 after the header page
    body += "alloc folio=" + std::to_string(id) + " order=0 cpu=0\n";
  Run(body);
  ASSERT_EQ(sys_.Device(0)->inuse, 1535u);
  ASSERT_EQ(runner_.SlotOf(64, 0).offset, 512u);  // the oldest, in cluster 1
  ASSERT_EQ(runner_.SlotOf(1, 0).offset, 1520u);  // the youngest, in cluster 2
  // Half of each: the count-0 slots stay with their cached folio.
  Run("free folio=1 page=0 n=8\nfree folio=64 page=0 n=8\n");
  ASSERT_EQ(sys_.Device(0)->inuse, 1535u);
  Run("drop-cache\nalloc folio=5000 order=0 cpu=1\n");
  EXPECT_EQ(runner_.SlotOf(5000, 0).offset, 512u);
}
// The runner keeps an order-0 folio that holds one swapped-out slot and
// nothing else as that slot alone (compact), in a directory for ids below
// Debian's 6.12 (linux-6.12): a free runs on the CPU of its folio's alloc,
// as `kernel run`'s worker runs it, so its slots wait in that CPU's return
// buffer (free_swap_slot()); a zap batch that crosses a cluster is put slot
// by slot (__swap_entries_free()'s fallback), through the buffer too.
class Replay612 : public Replay {
 public:
  Replay612() : Replay("linux-6.12") {}
  static std::string Allocs(int first, int n, int cpu) {
    std::string t;
    for (int i = first; i < first + n; ++i)
      t += "alloc folio=" + std::to_string(i) + " order=0 cpu=" + std::to_string(cpu) + "\n";
    return t;
  }
  static std::string Frees(int first, int n) {
    std::string t;
    for (int i = first; i < first + n; ++i) t += "free folio=" + std::to_string(i) + "\n";
    return t;
  }
};

TEST_F(Replay612, AFreeWaitsInTheReturnBufferOfItsFoliosCpu) {
  // CPU 0's 70 folios hold two slot-cache refills, CPU 1's one more.
  Run("swapon dev=0 pages=4096 ssd=1 blkdev=1\n" + Allocs(0, 70, 0) + "drop-cache\n" +
      Allocs(100, 1, 1));
  ASSERT_EQ(sys_.Device(0)->inuse, 192u);
  // 40 frees of CPU 0's folios after CPU 1's alloc, one more alloc on CPU 0
  // (from its cache), 30 more frees: all 70 go to CPU 0's buffer, which is
  // full at 64, so the 65th empties it. (Frees on the latest alloc's CPU
  // would leave 40 waiting on CPU 1 and 30 on CPU 0.)
  Run(Frees(0, 40) + Allocs(101, 1, 0) + Frees(40, 30));
  EXPECT_EQ(sys_.Device(0)->inuse, 192u - 64u);
}

TEST_F(Replay612, AFreeBatchAcrossAClusterWaitsInTheReturnBuffer) {
  // A rotational area: slots from 1 up, 64 at a time into CPU 0's slot
  // cache; 509 order-0 folios take 1..509, and an order-3 folio (no large
  // slots there: split, pages in order) 510..517, across cluster 0's end.
  std::string t = "swapon dev=0 pages=4096 ssd=0 blkdev=1\n" + Allocs(0, 509, 0) +
                  "alloc folio=1000 order=3 cpu=0\n";
  for (int p = 0; p < 8; ++p)
    t += "expect folio=1000 page=" + std::to_string(p) +
         " dev=0 offset=" + std::to_string(510 + p) + "\n";
  Run(t + "drop-cache folio=1000\n");
  ASSERT_EQ(runner_.summary().agree, 8u);
  const uint64_t inuse = sys_.Device(0)->inuse;
  // One batch of 8 slots in two clusters: each slot is put alone and waits
  // (cache-held) in the buffer; two batches of one cluster each would be
  // freed at once.
  Run("free folio=1000\n");
  EXPECT_EQ(sys_.Device(0)->inuse, inuse);
  EXPECT_EQ(Slot(511).kind, SlotKind::kCached);
  EXPECT_EQ(Slot(512).kind, SlotKind::kCached);
}

// Two runners that must behave alike: compact folios or not (2^26 and a
// hash table above), drops that park folios or not. Random records on
// both: every page's slot, every slot of the devices and the summaries
// agree after every record, for dense and sparse ids, through dup, swap-in,
// per-folio and global cache drops, expect, partial frees and swapoff.
struct RunnerKind {
  bool compact = true, park = true;
};
void CompareRunners(RunnerKind kind_a, RunnerKind kind_b, uint64_t* parked) {
  for (const char* preset : {"linux-6.18", "linux-6.12"})
    for (uint64_t id_base : {uint64_t{0}, uint64_t{1} << 40}) {
      SCOPED_TRACE(preset);
      alloc::SwapSystem sys_a(Replay::Options(preset)), sys_b(Replay::Options(preset));
      TraceRunner a(sys_a, 20, kind_a.compact), b(sys_b, 20, kind_b.compact);
      a.set_park(kind_a.park);
      b.set_park(kind_b.park);
      CallTape tape_a, tape_b;  // the allocator calls of each, in order
      a.set_tape(&tape_a);
      b.set_tape(&tape_b);
      std::mt19937_64 rng(7 + id_base);
      auto pick = [&](uint64_t n) { return static_cast<uint64_t>(rng() % n); };
      std::vector<uint64_t> live;  // ids of live folios (as far as the test knows)
      std::map<uint64_t, int> order;
      uint64_t next_id = id_base, line = 0;
      // 6.12's slot cache (and its per-CPU return buffers) is on only while
      // more than 5 × 64 slots per CPU are free: larger devices keep it on.
      const uint64_t kPages = std::string_view(preset) == "linux-6.12" ? 8192 : 2048;
      auto apply = [&](TraceRecord r) {
        r.line = ++line;
        Status sa = a.Apply(r, "t"), sb = b.Apply(r, "t");
        ASSERT_EQ(sa.ok(), sb.ok())
            << "line " << line << ": " << sa.ToString() << " / " << sb.ToString();
        ASSERT_EQ(sa.message(), sb.message()) << "line " << line;
      };
      for (uint64_t dev : {0, 1}) {
        TraceRecord r;
        r.op = TraceOp::kSwapon;
        r.dev = dev;
        r.pages = dev == 0 ? 1024 : kPages;  // device 1 is used once 0 is full
        apply(r);
      }
      bool dev1_on = true;
      uint64_t compared = 0, swapoffs_in_use = 0;
      for (int step = 0; step < 6000; ++step) {
        TraceRecord r;
        const uint64_t k = pick(100);
        if (live.empty() || k < 30) {
          r.op = TraceOp::kAlloc;
          r.folio = next_id;
          next_id += 1 + pick(3);  // some ids never used: blocks not full
          r.order = pick(4) == 0 ? 2 : 0;
          r.cpu = static_cast<int>(pick(2));
          order[*r.folio] = r.order;
          live.push_back(*r.folio);
        } else {
          r.folio = live[pick(live.size())];
          const uint64_t pages = uint64_t{1} << order[*r.folio];
          r.page = pick(pages);
          if (k < 45) {
            r.op = TraceOp::kDropCache;
          } else if (k < 60) {
            r.op = TraceOp::kFree;
            if (pick(2)) r.n = 1 + pick(pages - r.page);
          } else if (k < 72) {
            r.op = TraceOp::kCache;
            r.n = 1;
          } else if (k < 80) {
            r.op = TraceOp::kDup;
          } else if (k < 90) {
            r.op = TraceOp::kExpect;
            r.offset = 1 + pick(kPages - 1);
          } else if (k < 95) {
            r.op = TraceOp::kDropCache;
            r.folio.reset();  // global
          } else if (k < 97) {
            r.folio.reset();
            r.op = dev1_on ? TraceOp::kSwapoff : TraceOp::kSwapon;
            if (dev1_on) swapoffs_in_use += sys_a.Device(1)->inuse > 0;
            r.dev = 1;
            r.pages = kPages;
            dev1_on = !dev1_on;
          } else {
            r.op = TraceOp::kFree;  // the whole folio
            r.page = 0;
          }
        }
        apply(r);
        if (::testing::Test::HasFatalFailure()) return;
        std::erase_if(live, [&](uint64_t id) {
          EXPECT_EQ(a.Live(id), b.Live(id)) << "folio " << id << " line " << line;
          return !b.Live(id);
        });
        for (uint64_t id : live) {
          for (uint64_t p = 0; p < (uint64_t{1} << order[id]); ++p) {
            ASSERT_EQ(a.SlotOf(id, p), b.SlotOf(id, p))
                << "folio " << id << " page " << p << " line " << line;
            compared += a.SlotOf(id, p).valid();
          }
        }
        if (step % 50 == 0) {
          ASSERT_TRUE(sys_a.CheckInvariants().ok()) << sys_a.CheckInvariants().ToString();
          for (int type = 0; type < 2; ++type) {
            auto da = sys_a.Device(type), db = sys_b.Device(type);
            ASSERT_EQ(da.ok(), db.ok());
            if (!da.ok()) continue;
            ASSERT_EQ(da->inuse, db->inuse) << "line " << line;
            for (uint64_t off = 1; off < kPages; ++off) {
              auto sa = sys_a.Slot(SwapEntry{type, off}), sb = sys_b.Slot(SwapEntry{type, off});
              ASSERT_EQ(sa.ok(), sb.ok());
              if (!sa.ok()) continue;
              ASSERT_EQ(sa->kind, sb->kind) << "type " << type << " offset " << off;
              ASSERT_EQ(sa->count, sb->count) << "type " << type << " offset " << off;
            }
          }
        }
      }
      EXPECT_EQ(a.summary().pages_placed, b.summary().pages_placed);
      EXPECT_EQ(a.summary().folio_runs, b.summary().folio_runs);
      EXPECT_EQ(a.summary().expected, b.summary().expected);
      EXPECT_EQ(a.summary().agree, b.summary().agree);
      EXPECT_EQ(a.summary().skipped_cache_drops, b.summary().skipped_cache_drops);
      EXPECT_GT(compared, 10000u);      // swapped-out pages were compared
      EXPECT_GT(swapoffs_in_use, 10u);  // swapoff took slots back
      *parked += a.parked();
      // Runners that keep folios alike make the same calls in the same
      // order (the folio objects may differ: a parked folio's cache folio
      // released later is used again later). A compact folio's free makes
      // fewer calls.
      if (kind_a.compact != kind_b.compact) continue;
      auto calls = [](const CallTape& tape) {
        std::vector<std::tuple<CallOp, int, SwapEntry, uint64_t, int, SwapEntry>> v;
        for (const TapeCall& c : tape.calls())
          if (c.op != CallOp::kFolioState) v.emplace_back(c.op, c.cpu, c.entry, c.n, c.code, c.got);
        return v;
      };
      const auto calls_a = calls(tape_a), calls_b = calls(tape_b);
      ASSERT_EQ(calls_a.size(), calls_b.size());
      for (size_t i = 0; i < calls_a.size(); ++i)
        ASSERT_TRUE(calls_a[i] == calls_b[i]) << "call " << i << " of " << calls_a.size();
    }
}

TEST(ReplayCompact, CompactFoliosBehaveAsTableEntries) {
  uint64_t parked = 0;
  CompareRunners({.compact = true}, {.compact = false}, &parked);
}

// A folio a drop passed over waits outside the walk, and goes back to its
// place when a record or a swapoff changes it: the drops that follow free
// the same slots in the same order as drops that walk every folio.
TEST(ReplayPark, ParkedFoliosDropInTheirPlace) {
  uint64_t parked = 0;
  CompareRunners({.park = true}, {.park = false}, &parked);
  EXPECT_GT(parked, 1000u);  // the drops did park folios
}
}  // namespace
}  // namespace swaplab::workload
