// SPDX-License-Identifier: MIT
// The fault-injecting wrapper: every failure point of a small multi-request
// write gives an error naming the page, and every tag completes exactly once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "area/io_test_util.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/area/io_engine_factory.h"

namespace swaplab::area {
namespace {

using testing::MakeFile;
using testing::Pages;
using testing::ScratchDir;
using testing::TagCounts;

// A small write: 6 requests, contiguous in pairs (so the plug merges them),
// 1-4 pages each, tags chosen by the caller (not indexes).
std::vector<IoRequest> SmallWrite(const Pages& p) {
  const uint32_t sizes[6] = {2, 1, 4, 3, 1, 2};
  const uint64_t starts[6] = {0, 2, 10, 14, 30, 31};
  std::vector<IoRequest> out;
  size_t b = 0;
  for (int i = 0; i < 6; ++i) {
    IoRequest r;
    r.write = true;
    r.page = starts[i];
    r.tag = 1000 + 7 * i;
    for (uint32_t j = 0; j < sizes[i]; ++j) r.bufs.push_back(p[b++]);
    out.push_back(r);
  }
  return out;
}

struct Fault {
  const char* name;
  int error;
  bool short_completion;
};

std::unique_ptr<IoEngine> Inner(const std::string& kind, const std::string& file) {
  if (kind == "sim") {
    SimModel m;
    m.pages = 40;
    return MakeSimulatedEngine(m, {});
  }
  auto e = kind == "uring" ? OpenEngine(EngineKind::kAuto, file, {}) : OpenPosixEngine(file, {});
  return e.ok() ? std::move(e).value() : nullptr;
}

class FaultTest : public ::testing::TestWithParam<std::tuple<std::string, Fault>> {};

TEST_P(FaultTest, EveryFailurePointNamesThePageAndCompletesEachTagOnce) {
  const auto& [kind, fault] = GetParam();
  ScratchDir dir;
  const std::string f = dir.File("area");
  ASSERT_TRUE(MakeFile(f, 40));
  Pages p(13);
  const std::vector<IoRequest> reqs = SmallWrite(p);
  for (uint64_t n = 0; n < reqs.size(); ++n) {
    SCOPED_TRACE(::testing::Message() << "failing request " << n);
    FaultPlan plan;
    plan.fail_request = n;
    plan.error = fault.error;
    plan.short_completion = fault.short_completion;
    auto inner = Inner(kind, f);
    ASSERT_NE(inner, nullptr);
    auto e = MakeFaultInjectingEngine(std::move(inner), plan);
    std::vector<IoRequest> batch = reqs;
    ASSERT_TRUE(e->Submit(batch).ok());
    std::vector<IoCompletion> done;
    Status s = e->Wait(&done);
    // Each tag exactly once, none lost.
    ASSERT_EQ(done.size(), reqs.size());
    auto counts = TagCounts(done);
    for (const IoRequest& r : reqs) EXPECT_EQ(counts[r.tag], 1) << "tag " << r.tag;
    const IoRequest& bad = reqs[n];
    const uint32_t pages = static_cast<uint32_t>(bad.bufs.size());
    const uint64_t failed_page = fault.short_completion ? bad.page + pages / 2 : bad.page;
    for (const IoCompletion& c : done) {
      if (c.tag != bad.tag) {
        EXPECT_EQ(c.error, 0) << "tag " << c.tag;
        continue;
      }
      EXPECT_EQ(c.error, fault.short_completion ? 0 : fault.error);
      EXPECT_EQ(c.failed_page, failed_page);
      EXPECT_EQ(c.pages_done, fault.short_completion ? pages / 2 : 0);
    }
    // The Wait status names the request and the page.
    EXPECT_EQ(s.code(), fault.short_completion ? -EIO : fault.error);
    EXPECT_THAT(s.message(), ::testing::HasSubstr("tag " + std::to_string(bad.tag)));
    EXPECT_THAT(s.message(), ::testing::HasSubstr("page " + std::to_string(failed_page)));
    EXPECT_EQ(e->stats().errors, 1u);
    EXPECT_EQ(e->stats().bios, reqs.size());
    EXPECT_EQ(e->stats().requests, 3u);  // merged in pairs, as without the fault
  }
}

INSTANTIATE_TEST_SUITE_P(
    Faults, FaultTest,
    ::testing::Combine(::testing::Values("sim", "uring", "posix"),
                       ::testing::Values(Fault{"eio", -EIO, false}, Fault{"enospc", -ENOSPC, false},
                                         Fault{"short", 0, true})),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

TEST(FaultCountTest, RequestsAreCountedAcrossSubmits) {
  SimModel m;
  m.pages = 40;
  FaultPlan plan;
  plan.fail_request = 4;
  auto e = MakeFaultInjectingEngine(MakeSimulatedEngine(m, {}), plan);
  EXPECT_EQ(e->name(), "fault(simulated)");
  Pages p(13);
  std::vector<IoRequest> reqs = SmallWrite(p);
  std::vector<IoCompletion> done;
  ASSERT_TRUE(e->Submit({reqs.data(), 3}).ok());
  ASSERT_TRUE(e->Wait(&done).ok());
  ASSERT_TRUE(e->Submit({reqs.data() + 3, 3}).ok());
  Status s = e->Wait(&done);
  EXPECT_EQ(s.code(), -EIO);
  ASSERT_EQ(done.size(), 6u);
  for (const IoCompletion& c : done) EXPECT_EQ(c.error != 0, c.tag == reqs[4].tag);
}

// Only the simulated device's time is modelled, and the wrapper answers
// for what it wraps (the reader's ring and an image step's seconds follow).
TEST(FaultCountTest, TheWrapperIsModelledExactlyWhenItsInnerEngineIs) {
  ScratchDir dir;
  const std::string f = dir.path() + "/dev";
  ASSERT_TRUE(MakeFile(f, 40));
  for (const std::string kind : {"sim", "posix"}) {
    SCOPED_TRACE(kind);
    auto inner = Inner(kind, f);
    ASSERT_NE(inner, nullptr);
    const bool sim = kind == "sim";
    EXPECT_EQ(inner->modelled(), sim);
    EXPECT_EQ(MakeFaultInjectingEngine(Inner(kind, f), FaultPlan{})->modelled(), sim);
  }
}

TEST(FaultCountTest, NoPlanNoFault) {
  SimModel m;
  m.pages = 40;
  auto e = MakeFaultInjectingEngine(MakeSimulatedEngine(m, {}), FaultPlan{});
  Pages p(13);
  std::vector<IoRequest> reqs = SmallWrite(p);
  std::vector<IoCompletion> done;
  ASSERT_TRUE(e->Submit(reqs).ok());
  EXPECT_TRUE(e->Wait(&done).ok());
  EXPECT_EQ(done.size(), 6u);
  EXPECT_EQ(e->stats().errors, 0u);
}

TEST(FaultCountTest, MalformedBatchDoesNotAdvanceTheCount) {
  SimModel m;
  m.pages = 40;
  FaultPlan plan;
  plan.fail_request = 0;
  auto e = MakeFaultInjectingEngine(MakeSimulatedEngine(m, {}), plan);
  Pages p(13);
  std::vector<IoRequest> bad = {IoRequest{true, 39, {p[0], p[1]}, 5}};
  EXPECT_EQ(e->Submit(bad).code(), -EINVAL);
  std::vector<IoRequest> good = {IoRequest{true, 0, {p[0]}, 6}};
  ASSERT_TRUE(e->Submit(good).ok());
  std::vector<IoCompletion> done;
  EXPECT_EQ(e->Wait(&done).code(), -EIO);  // the good one is request 0
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].tag, 6u);
}

}  // namespace
}  // namespace swaplab::area
