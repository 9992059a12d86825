// SPDX-License-Identifier: MIT
// I/O engines on real files: write random data, read it back, through the
// io_uring engine, the POSIX engine and the forced fallback; across the
// extents of a fragmented file; with unaligned caller buffers under
// O_DIRECT; splits, discard, bad input, end of file.
#include "swaplab/area/io_engine.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>

#include "area/io_test_util.h"
#include "swaplab/area/io_engine_factory.h"

namespace swaplab::area {
namespace {

using testing::CountExtents;
using testing::kPg;
using testing::MakeFile;
using testing::Pages;
using testing::Requests;
using testing::ScratchDir;
using testing::TagCounts;

using Opener = std::function<Result<std::unique_ptr<IoEngine>>(const std::string&, EngineOptions)>;

struct EngineCase {
  const char* name;
  Opener open;
};

// Every request of a batch completes once, whole, without error.
void ExpectAllDone(const std::vector<IoCompletion>& done, const std::vector<IoRequest>& reqs) {
  ASSERT_EQ(done.size(), reqs.size());
  auto counts = TagCounts(done);
  for (const IoRequest& r : reqs) EXPECT_EQ(counts[r.tag], 1) << "tag " << r.tag;
  for (const IoCompletion& c : done) {
    EXPECT_EQ(c.error, 0) << "tag " << c.tag << " page " << c.failed_page;
    EXPECT_EQ(c.pages_done, reqs[c.tag].bufs.size()) << "tag " << c.tag;
  }
}

// Writes `n` random pages from page `first` in runs of `run`, reads them
// back into other buffers (misaligned by `misalign` bytes), compares; and
// compares with what a plain pread of the file sees.
void WriteReadBack(IoEngine& e, const std::string& path, uint64_t first, size_t n, size_t run,
                   size_t misalign, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Pages src(n, misalign), dst(n, misalign);
  src.Fill(rng);
  dst.Zero();
  auto w = Requests(true, first, src, n, run);
  ASSERT_TRUE(e.Submit(w).ok());
  std::vector<IoCompletion> done;
  Status s = e.Wait(&done);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectAllDone(done, w);
  auto r = Requests(false, first, dst, n, run);
  ASSERT_TRUE(e.Submit(r).ok());
  done.clear();
  s = e.Wait(&done);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectAllDone(done, r);
  for (size_t i = 0; i < n; ++i) ASSERT_TRUE(src.PageEquals(i, dst, i)) << "page " << first + i;
  // The bytes are in the file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::vector<std::byte> page(kPg);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(pread(fd, page.data(), kPg, static_cast<off_t>((first + i) * kPg)),
              static_cast<ssize_t>(kPg));
    ASSERT_EQ(std::memcmp(page.data(), src[i], kPg), 0) << "file page " << first + i;
  }
  ::close(fd);
}

class RealEngineTest : public ::testing::TestWithParam<EngineCase> {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.path().empty()) << "mkdtemp under /var/tmp"; }
  Result<std::unique_ptr<IoEngine>> Open(const std::string& path, EngineOptions o = {}) {
    return GetParam().open(path, o);
  }
  ScratchDir dir_;
};

TEST_P(RealEngineTest, WriteThenReadBackRandomData) {
  const std::string f = dir_.File("area");
  ASSERT_TRUE(MakeFile(f, 1024));
  auto e = Open(f);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  WriteReadBack(**e, f, 0, 1024, 1, 0, 1);    // per page
  WriteReadBack(**e, f, 3, 1000, 37, 0, 2);   // runs crossing merge limits
  WriteReadBack(**e, f, 0, 1024, 600, 0, 3);  // runs longer than a device request
}

TEST_P(RealEngineTest, ReadBackAcrossExtentsOfAFragmentedFile) {
  const std::string f = dir_.File("fragmented"), other = dir_.File("neighbour");
  if (const int err = testing::MakeFragmentedFile(f, other, 512); err != 0)
    GTEST_SKIP() << "cannot fragment a file here (EXT4_IOC_MOVE_EXT: " << std::strerror(err)
                 << "); needs ext4";
  const size_t extents = CountExtents(f);
  ASSERT_GE(extents, 8u) << "the file should be fragmented";
  RecordProperty("extents", static_cast<int>(extents));
  auto e = Open(f);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  WriteReadBack(**e, f, 0, 512, 512, 0, 4);  // one run over every extent
  WriteReadBack(**e, f, 0, 512, 1, 0, 5);
  WriteReadBack(**e, f, 5, 500, 29, 0, 6);
}

TEST_P(RealEngineTest, UnalignedCallerBuffersAreBounced) {
  const std::string f = dir_.File("area");
  ASSERT_TRUE(MakeFile(f, 256));
  auto e = Open(f);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  for (size_t misalign : {1u, 8u, 512u, 2048u}) {
    SCOPED_TRACE(misalign);
    WriteReadBack(**e, f, 0, 256, 16, misalign, 7 + misalign);
    WriteReadBack(**e, f, 1, 100, 1, misalign, 8 + misalign);
  }
}

TEST_P(RealEngineTest, MixedAlignedAndUnalignedPagesInOneRequest) {
  const std::string f = dir_.File("area");
  ASSERT_TRUE(MakeFile(f, 64));
  auto e = Open(f);
  ASSERT_TRUE(e.ok());
  std::mt19937_64 rng(9);
  Pages a(64), u(64, 100), back(64, 3);
  a.Fill(rng);
  u.Fill(rng);
  IoRequest w{true, 0, {}, 7};
  for (size_t i = 0; i < 64; ++i) w.bufs.push_back(i % 3 == 0 ? u[i] : a[i]);
  std::vector<IoRequest> batch{w};
  ASSERT_TRUE((*e)->Submit(batch).ok());
  std::vector<IoCompletion> done;
  ASSERT_TRUE((*e)->Wait(&done).ok());
  std::vector<IoRequest> rb = Requests(false, 0, back, 64, 64);
  ASSERT_TRUE((*e)->Submit(rb).ok());
  ASSERT_TRUE((*e)->Wait(&done).ok());
  for (size_t i = 0; i < 64; ++i)
    EXPECT_EQ(std::memcmp(back[i], i % 3 == 0 ? u[i] : a[i], kPg), 0) << i;
}

TEST_P(RealEngineTest, LongRequestIsSplitAtTheDeviceLimit) {
  const std::string f = dir_.File("area");
  ASSERT_TRUE(MakeFile(f, 700));
  EngineOptions o;
  o.limits.max_segments = 254;
  auto e = Open(f, o);
  ASSERT_TRUE(e.ok());
  Pages p(600);
  std::mt19937_64 rng(10);
  p.Fill(rng);
  auto w = Requests(true, 50, p, 600, 600);
  ASSERT_TRUE((*e)->Submit(w).ok());
  std::vector<IoCompletion> done;
  ASSERT_TRUE((*e)->Wait(&done).ok());
  ExpectAllDone(done, w);
  EXPECT_EQ((*e)->stats().bios, 1u);
  EXPECT_EQ((*e)->stats().requests, 3u);  // 254 + 254 + 92
  EXPECT_EQ((*e)->stats().pages_written, 600u);
}

TEST_P(RealEngineTest, SmallQueueDepthCompletesEveryRequestOnce) {
  const std::string f = dir_.File("area");
  ASSERT_TRUE(MakeFile(f, 300));
  EngineOptions o;
  o.queue_depth = 2;
  o.plug_merge = false;
  auto e = Open(f, o);
  ASSERT_TRUE(e.ok());
  WriteReadBack(**e, f, 0, 300, 1, 0, 11);
  EXPECT_EQ((*e)->stats().bios, 600u);
  EXPECT_EQ((*e)->stats().requests, 600u);
}

TEST_P(RealEngineTest, SeveralSubmitsBeforeOneWait) {
  const std::string f = dir_.File("area");
  ASSERT_TRUE(MakeFile(f, 64));
  auto e = Open(f);
  ASSERT_TRUE(e.ok());
  Pages p(64);
  std::mt19937_64 rng(12);
  p.Fill(rng);
  std::vector<IoRequest> all = Requests(true, 0, p, 64, 4);
  for (size_t i = 0; i < all.size(); i += 3) {
    std::span<IoRequest> part(all.data() + i, std::min<size_t>(3, all.size() - i));
    ASSERT_TRUE((*e)->Submit(part).ok());
  }
  std::vector<IoCompletion> done;
  ASSERT_TRUE((*e)->Wait(&done).ok());
  ExpectAllDone(done, all);
  EXPECT_EQ((*e)->stats().requests, 6u);  // each Submit is its own plug: 12 pages each
}

// WaitAny returns at least one completion while requests are in flight,
// each request exactly once over the calls, then nothing once all are in;
// the data is there for every request reported.
TEST_P(RealEngineTest, WaitAnyReportsEveryRequestOnceInPieces) {
  const std::string f = dir_.File("area");
  ASSERT_TRUE(MakeFile(f, 2048));
  EngineOptions o;
  o.queue_depth = 4;  // requests wait for a slot: completions come in several calls
  auto e = Open(f, o);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  std::mt19937_64 rng(21);
  Pages src(2048), dst(2048);
  src.Fill(rng);
  dst.Zero();
  auto w = Requests(true, 0, src, 2048, 64);
  ASSERT_TRUE((*e)->Submit(w).ok());
  std::vector<IoCompletion> done;
  ASSERT_TRUE((*e)->Wait(&done).ok());
  auto r = Requests(false, 0, dst, 2048, 64);
  ASSERT_TRUE((*e)->Submit(r).ok());
  std::vector<IoCompletion> all;
  size_t calls = 0;
  while (all.size() < r.size()) {
    done.clear();
    Status s = (*e)->WaitAny(&done);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_FALSE(done.empty()) << "WaitAny returned nothing with " << r.size() - all.size()
                               << " requests in flight";
    for (const IoCompletion& c : done)
      for (size_t i = 0; i < r[c.tag].bufs.size(); ++i)
        ASSERT_TRUE(src.PageEquals(c.tag * 64 + i, dst, c.tag * 64 + i))
            << "request " << c.tag << " page " << i;
    all.insert(all.end(), done.begin(), done.end());
    ++calls;
  }
  ExpectAllDone(all, r);
  done.clear();
  EXPECT_TRUE((*e)->WaitAny(&done).ok());  // nothing in flight: returns at once
  EXPECT_TRUE(done.empty());
  if (std::string(GetParam().name) == "uring" && (*e)->name().find("uring") != std::string::npos) {
    EXPECT_GT(calls, 1u);  // io_uring stops early; the POSIX engine completes all at once
  }
}

TEST_P(RealEngineTest, ReadPastEndOfFileFailsNamingThePage) {
  const std::string f = dir_.File("area");
  ASSERT_TRUE(MakeFile(f, 32));
  EngineOptions o;
  o.plug_merge = false;
  auto e = Open(f, o);
  ASSERT_TRUE(e.ok());
  ASSERT_EQ(truncate(f.c_str(), 20 * kPg), 0);  // shrinks under the engine
  Pages p(32);
  auto r = Requests(false, 0, p, 32, 8);
  ASSERT_TRUE((*e)->Submit(r).ok());
  std::vector<IoCompletion> done;
  Status s = (*e)->Wait(&done);
  EXPECT_EQ(s.code(), -EIO);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("page 20"));
  ASSERT_EQ(done.size(), 4u);
  for (const IoCompletion& c : done) {
    if (c.tag < 2) {
      EXPECT_EQ(c.error, 0);
    } else if (c.tag == 2) {
      EXPECT_EQ(c.error, -EIO);
      EXPECT_EQ(c.failed_page, 20u);
      EXPECT_EQ(c.pages_done, 4u);
    } else {
      EXPECT_EQ(c.error, -EIO);
      EXPECT_EQ(c.failed_page, 24u);
      EXPECT_EQ(c.pages_done, 0u);
    }
  }
  EXPECT_EQ((*e)->stats().errors, 2u);
}

TEST_P(RealEngineTest, DiscardPunchesAHoleInAFile) {
  const std::string f = dir_.File("area");
  ASSERT_TRUE(MakeFile(f, 16));
  auto e = Open(f);
  ASSERT_TRUE(e.ok());
  Pages p(16), back(16);
  std::mt19937_64 rng(13);
  p.Fill(rng);
  auto w = Requests(true, 0, p, 16, 16);
  ASSERT_TRUE((*e)->Submit(w).ok());
  std::vector<IoCompletion> done;
  ASSERT_TRUE((*e)->Wait(&done).ok());
  Status d = (*e)->Discard(4, 8);
  ASSERT_TRUE(d.ok()) << d.ToString();
  auto r = Requests(false, 0, back, 16, 16);
  ASSERT_TRUE((*e)->Submit(r).ok());
  ASSERT_TRUE((*e)->Wait(&done).ok());
  std::vector<std::byte> zero(kPg);
  for (size_t i = 0; i < 16; ++i) {
    const bool hole = i >= 4 && i < 12;
    EXPECT_EQ(std::memcmp(back[i], hole ? zero.data() : p[i], kPg), 0) << i;
  }
  EXPECT_EQ(std::filesystem::file_size(f), 16 * kPg);  // KEEP_SIZE
  EXPECT_EQ((*e)->Discard(10, 7).code(), -EINVAL);
}

TEST_P(RealEngineTest, MalformedBatchQueuesNothing) {
  const std::string f = dir_.File("area");
  ASSERT_TRUE(MakeFile(f, 8));
  auto e = Open(f);
  ASSERT_TRUE(e.ok());
  Pages p(8);
  auto good = Requests(true, 0, p, 4, 4);
  std::vector<IoRequest> batch = {good[0], IoRequest{true, 6, {p[0], p[1], p[2]}, 1}};
  Status s = (*e)->Submit(batch);
  EXPECT_EQ(s.code(), -EINVAL);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("tag 1"));
  EXPECT_THAT(s.message(), ::testing::HasSubstr("beyond the device"));
  std::vector<IoRequest> empty = {IoRequest{false, 0, {}, 2}};
  EXPECT_EQ((*e)->Submit(empty).code(), -EINVAL);
  std::vector<IoRequest> null_buf = {IoRequest{false, 0, {nullptr}, 3}};
  EXPECT_EQ((*e)->Submit(null_buf).code(), -EINVAL);
  std::vector<IoCompletion> done;
  EXPECT_TRUE((*e)->Wait(&done).ok());
  EXPECT_TRUE(done.empty());
  EXPECT_EQ((*e)->stats().bios, 0u);
}

TEST_P(RealEngineTest, ReadOnlyEngineRefusesWrites) {
  const std::string f = dir_.File("area");
  ASSERT_TRUE(MakeFile(f, 8));
  EngineOptions o;
  o.writable = false;
  auto e = Open(f, o);
  ASSERT_TRUE(e.ok());
  Pages p(8);
  auto w = Requests(true, 0, p, 8, 8);
  EXPECT_EQ((*e)->Submit(w).code(), -EBADF);
  auto r = Requests(false, 0, p, 8, 8);
  EXPECT_TRUE((*e)->Submit(r).ok());
  std::vector<IoCompletion> done;
  EXPECT_TRUE((*e)->Wait(&done).ok());
}

TEST_P(RealEngineTest, MissingFileIsAnError) {
  auto e = Open(dir_.File("nope"));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), -ENOENT);
  EXPECT_THAT(e.status().message(), ::testing::HasSubstr("nope"));
}

INSTANTIATE_TEST_SUITE_P(Engines, RealEngineTest,
                         ::testing::Values(EngineCase{"uring",
                                                      [](const std::string& p, EngineOptions o) {
                                                        // posix where io_uring is unavailable
                                                        return OpenEngine(EngineKind::kAuto, p, o);
                                                      }},
                                           EngineCase{"sim",
                                                      [](const std::string& p, EngineOptions o) {
                                                        return OpenEngine(EngineKind::kSim, p, o);
                                                      }},
                                           EngineCase{"posix", OpenPosixEngine},
                                           EngineCase{"posix_buffered",
                                                      [](const std::string& p, EngineOptions o) {
                                                        o.o_direct = false;
                                                        return OpenPosixEngine(p, o);
                                                      }}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(UringEngineTest, IsUringOnThisMachine) {
  ScratchDir dir;
  const std::string f = dir.File("area");
  ASSERT_TRUE(MakeFile(f, 8));
  ::testing::internal::CaptureStderr();
  auto e = OpenUringEngine(f, {});
  const std::string err = ::testing::internal::GetCapturedStderr();
  if (!e.ok() && e.status().code() != -EINVAL)  // −ENOSYS, −EPERM, ...: no fallback here
    GTEST_SKIP() << "io_uring unavailable here: " << e.status().ToString();
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ((*e)->name(), "io_uring");
  EXPECT_EQ(err, "");
}

// A registered buffer (io_uring fixed buffers): requests whose pages are
// contiguous inside it go as READ_FIXED / WRITE_FIXED, the others as
// before; the bytes are the same either way.
TEST(UringEngineTest, RegisteredBufferCarriesContiguousRequests) {
  ScratchDir dir;
  const std::string f = dir.File("area");
  ASSERT_TRUE(MakeFile(f, 64));
  ::testing::internal::CaptureStderr();
  auto e = OpenUringEngine(f, {});
  ::testing::internal::GetCapturedStderr();
  if (!e.ok()) GTEST_SKIP() << "io_uring unavailable here: " << e.status().ToString();
  Pages reg(32), out(32), want(32), back(32);
  EXPECT_FALSE((*e)->RegisterBuffer(reg[0] + 1, 32 * kPg));  // not page-aligned
  ASSERT_TRUE((*e)->RegisterBuffer(reg[0], 32 * kPg));
  std::mt19937_64 rng(3);
  reg.Fill(rng);
  out.Fill(rng);
  // Pages 0-15 from the registered buffer in runs of 8 (fixed); pages
  // 16-31 in one request from the other buffer, its page 19 taken from the
  // registered one (a mixed request: not fixed).
  auto w = Requests(true, 0, reg, 16, 8);
  auto w2 = Requests(true, 16, out, 16, 16);
  w2[0].bufs[3] = reg[20];
  for (size_t i = 0; i < 32; ++i)
    std::memcpy(want[i], i < 16 ? reg[i] : i == 19 ? reg[20] : out[i - 16], kPg);
  std::vector<IoCompletion> done;
  ASSERT_TRUE((*e)->Submit(w).ok());  // apart: the plug would merge them with the mixed one
  ASSERT_TRUE((*e)->Wait(&done).ok());
  const uint64_t fixed_writes = (*e)->stats().fixed_requests;
  EXPECT_GE(fixed_writes, 1u);
  ASSERT_TRUE((*e)->Submit(w2).ok());
  ASSERT_TRUE((*e)->Wait(&done).ok());
  EXPECT_EQ((*e)->stats().fixed_requests, fixed_writes);
  reg.Zero();
  auto r = Requests(false, 0, reg, 32, 32);  // into the registered buffer: fixed
  ASSERT_TRUE((*e)->Submit(r).ok());
  ASSERT_TRUE((*e)->Wait(&done).ok());
  EXPECT_GT((*e)->stats().fixed_requests, fixed_writes);
  for (size_t i = 0; i < 32; ++i) EXPECT_TRUE(reg.PageEquals(i, want, i)) << "page " << i;
  (*e)->UnregisterBuffer();
  const uint64_t fixed_before = (*e)->stats().fixed_requests;
  auto r2 = Requests(false, 0, back, 32, 32);  // after unregistering: plain reads
  ASSERT_TRUE((*e)->Submit(r2).ok());
  ASSERT_TRUE((*e)->Wait(&done).ok());
  EXPECT_EQ((*e)->stats().fixed_requests, fixed_before);
  for (size_t i = 0; i < 32; ++i) EXPECT_TRUE(back.PageEquals(i, want, i)) << "page " << i;
}

TEST(UringEngineTest, BadQueueDepthIsRefused) {
  ScratchDir dir;
  const std::string f = dir.File("area");
  ASSERT_TRUE(MakeFile(f, 8));
  EngineOptions o;
  o.queue_depth = 0;
  EXPECT_EQ(OpenUringEngine(f, o).status().code(), -EINVAL);
}

}  // namespace
}  // namespace swaplab::area
