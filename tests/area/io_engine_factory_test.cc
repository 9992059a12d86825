// SPDX-License-Identifier: MIT
// The engine chosen by name and io_uring's fallback (io_engine_factory.h).
// The fallback runs through the test seam SWAPLAB_NO_IO_URING: the uring
// engine then fails as io_uring_setup does on a kernel without io_uring.
#include "swaplab/area/io_engine_factory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <random>

#include "io_test_util.h"

namespace swaplab::area {
namespace {

using Pages = testing::Pages;

constexpr EngineKind kAll[] = {EngineKind::kAuto, EngineKind::kUring, EngineKind::kPosix,
                               EngineKind::kSim};

// Sets SWAPLAB_NO_IO_URING for its lifetime; the fallback notice re-armed
// on both sides, so each test sees its own.
class NoUring {
 public:
  NoUring() {
    ::setenv("SWAPLAB_NO_IO_URING", "1", 1);
    RearmUringFallbackNotice();
  }
  ~NoUring() {
    ::unsetenv("SWAPLAB_NO_IO_URING");
    RearmUringFallbackNotice();
  }
};

// A scratch directory and its files.
class FactoryTest : public ::testing::Test {
 protected:
  // A file of `pages` zero pages, its path.
  std::string Area(size_t pages) {
    const std::string f = dir_.File("area");
    EXPECT_TRUE(testing::MakeFile(f, pages));
    return f;
  }
  testing::ScratchDir dir_;
};

using OpenEngineTest = FactoryTest;
using UringFallbackTest = FactoryTest;

// Writes `n` random pages from page `first` with `e`, reads them back.
void RoundTrip(IoEngine& e, uint64_t first, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Pages src(n), dst(n);
  src.Fill(rng);
  dst.Zero();
  std::vector<IoCompletion> done;
  auto w = testing::Requests(true, first, src, n, 3);
  ASSERT_TRUE(e.Submit(w).ok());
  ASSERT_TRUE(e.Wait(&done).ok());
  auto r = testing::Requests(false, first, dst, n, 2);
  ASSERT_TRUE(e.Submit(r).ok());
  ASSERT_TRUE(e.Wait(&done).ok());
  EXPECT_EQ(done.size(), w.size() + r.size());
  for (size_t i = 0; i < n; ++i) EXPECT_TRUE(src.PageEquals(i, dst, i)) << "page " << first + i;
}

TEST(EngineKindTest, EveryNameParsesToItsKind) {
  for (EngineKind k : kAll) {
    auto parsed = ParseEngineKind(Name(k));
    ASSERT_TRUE(parsed.ok()) << Name(k);
    EXPECT_EQ(*parsed, k);
  }
  EXPECT_EQ(Name(EngineKind::kUring), "uring");
  EXPECT_EQ(Name(EngineKind::kSim), "sim");
  EXPECT_EQ(EngineKindNames(), "auto | uring | posix | sim");
}

TEST(EngineKindTest, BadNameIsRefusedNamingItAndTheValidOnes) {
  for (const char* bad : {"bogus", "", "URING", "io_uring", "posix "}) {
    auto k = ParseEngineKind(bad);
    ASSERT_FALSE(k.ok()) << "'" << bad << "'";
    EXPECT_EQ(k.status().code(), -EINVAL);
    EXPECT_THAT(k.status().message(), ::testing::HasSubstr("'" + std::string(bad) + "'"));
    EXPECT_THAT(k.status().message(), ::testing::HasSubstr("auto | uring | posix | sim"));
  }
  // A name from a command line reaches a terminal escaped, and cut.
  auto k = ParseEngineKind("\x1b]0;owned\x07" + std::string(500, 'x'));
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().message().find('\x1b'), std::string::npos) << k.status().message();
  EXPECT_LT(k.status().message().size(), 200u) << k.status().message();
}

TEST_F(OpenEngineTest, EveryKindRoundTripsPages) {
  const std::string f = Area(32);
  for (EngineKind k : kAll) {
    auto e = OpenEngine(k, f, {});
    if (k == EngineKind::kUring && !e.ok() && e.status().code() != -EINVAL) {
      std::cerr << "io_uring unavailable here: " << e.status().ToString() << "\n";
      continue;
    }
    ASSERT_TRUE(e.ok()) << Name(k) << ": " << e.status().ToString();
    RoundTrip(**e, 5, 11, static_cast<uint64_t>(k) + 1);
  }
}

TEST_F(OpenEngineTest, EachKindIsTheEngineItNames) {
  const std::string f = Area(8);
  auto posix = OpenEngine(EngineKind::kPosix, f, {});
  ASSERT_TRUE(posix.ok());
  EXPECT_EQ((*posix)->name(), "posix");
  EXPECT_FALSE((*posix)->modelled());
  auto uring = OpenEngine(EngineKind::kUring, f, {});
  if (uring.ok()) {
    EXPECT_EQ((*uring)->name(), "io_uring");
  }
}

// sim: the bytes go to the file (another engine reads them), the time is
// the model's.
TEST_F(OpenEngineTest, SimWritesTheFileAndKeepsModelledTime) {
  const std::string f = Area(16);
  auto sim = OpenEngine(EngineKind::kSim, f, {});
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  EXPECT_TRUE((*sim)->modelled());
  std::mt19937_64 rng(7);
  Pages src(8), dst(8);
  src.Fill(rng);
  auto w = testing::Requests(true, 4, src, 8, 8);
  std::vector<IoCompletion> done;
  ASSERT_TRUE((*sim)->Submit(w).ok());
  ASSERT_TRUE((*sim)->Wait(&done).ok());
  const IoStats s = (*sim)->stats();
  EXPECT_EQ(s.pages_written, 8u);
  EXPECT_EQ(s.bios, 1u);
  EXPECT_GT(s.modelled_ns, 0u);
  auto posix = OpenEngine(EngineKind::kPosix, f, {});
  ASSERT_TRUE(posix.ok());
  auto r = testing::Requests(false, 4, dst, 8, 8);
  ASSERT_TRUE((*posix)->Submit(r).ok());
  ASSERT_TRUE((*posix)->Wait(&done).ok());
  for (size_t i = 0; i < 8; ++i) EXPECT_TRUE(src.PageEquals(i, dst, i)) << "page " << i;
}

TEST_F(OpenEngineTest, SimRefusesWhatTheFileRefuses) {
  auto missing = OpenEngine(EngineKind::kSim, dir_.File("nope"), {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), -ENOENT);
  const std::string f = Area(4);
  auto e = OpenEngine(EngineKind::kSim, f, {});
  ASSERT_TRUE(e.ok());
  Pages p(2);
  auto beyond = testing::Requests(true, 3, p, 2, 2);  // pages 3-4 of a 4-page file
  EXPECT_EQ((*e)->Submit(beyond).code(), -EINVAL);
}

TEST_F(UringFallbackTest, AutoFallsBackToPosixWithOneNoticePerProcess) {
  const std::string f = Area(16);
  NoUring no_uring;
  ::testing::internal::CaptureStderr();
  auto first = OpenEngine(EngineKind::kAuto, f, {});
  auto second = OpenEngine(EngineKind::kAuto, f, {});
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ((*first)->name(), "posix");
  EXPECT_EQ((*second)->name(), "posix");
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_THAT(err, ::testing::StartsWith("swaplab: io_uring unavailable ("));
  EXPECT_THAT(err, ::testing::HasSubstr("SWAPLAB_NO_IO_URING"));
  EXPECT_THAT(err, ::testing::HasSubstr("--io posix"));
  RoundTrip(**first, 0, 16, 3);
}

TEST_F(UringFallbackTest, UringAloneFailsWhereIoUringIsUnavailable) {
  const std::string f = Area(4);
  NoUring no_uring;
  ::testing::internal::CaptureStderr();
  auto e = OpenEngine(EngineKind::kUring, f, {});
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), -ENOSYS);
  EXPECT_THAT(e.status().message(), ::testing::HasSubstr("SWAPLAB_NO_IO_URING"));
  EXPECT_EQ(err, "");  // no fallback, no notice
}

// Only io_uring being unavailable falls back: a queue depth io_uring
// refuses (the posix engine would take it) stays an error.
TEST_F(UringFallbackTest, OtherUringErrorsDoNotFallBack) {
  const std::string f = Area(4);
  EngineOptions o;
  o.queue_depth = 0;
  ASSERT_TRUE(OpenEngine(EngineKind::kPosix, f, o).ok());
  auto e = OpenEngine(EngineKind::kAuto, f, o);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), -EINVAL);
  EXPECT_THAT(e.status().message(), ::testing::HasSubstr("queue depth"));
}

TEST_F(UringFallbackTest, SeamOffByZero) {
  const std::string f = Area(4);
  ::setenv("SWAPLAB_NO_IO_URING", "0", 1);
  auto e = OpenEngine(EngineKind::kUring, f, {});
  ::unsetenv("SWAPLAB_NO_IO_URING");
  if (!e.ok()) {  // this machine's own io_uring error, not the seam's
    EXPECT_THAT(e.status().message(), ::testing::HasSubstr("io_uring_queue_init"));
  }
}

}  // namespace
}  // namespace swaplab::area
