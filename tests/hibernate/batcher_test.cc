// RequestBatcher::WaitSome and pages_done(): reads complete out of order,
// the batcher reports the prefix of queued pages that is complete, never a
// page whose bio has not completed, and everything after Wait (the
// pipelined reader's refill rests on it).
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <random>
#include <vector>

#include "hibernate/hib_test_util.h"
#include "swaplab/hibernate/request_batcher.h"

namespace swaplab::hibernate {
namespace {

// Completes one random request in flight per WaitAny (all of them per
// Wait); page d of the device reads as the byte pattern d.
class ShuffledEngine : public area::IoEngine {
 public:
  std::string name() const override { return "shuffled"; }
  Status Submit(std::span<area::IoRequest> batch) override {
    for (auto& r : batch) pending_.push_back(r);
    return Status::Ok();
  }
  Status Wait(std::vector<area::IoCompletion>* done) override {
    while (!pending_.empty()) CompleteOne(done);
    return Status::Ok();
  }
  Status WaitAny(std::vector<area::IoCompletion>* done) override {
    if (!pending_.empty()) CompleteOne(done);
    ++wait_any_calls;
    return Status::Ok();
  }
  Status Discard(uint64_t, uint64_t) override { return Status::Ok(); }
  area::IoStats stats() const override { return {}; }
  const area::DeviceLimits& limits() const override { return limits_; }
  uint64_t wait_any_calls = 0;

 private:
  void CompleteOne(std::vector<area::IoCompletion>* done) {
    const size_t i = rng_() % pending_.size();
    const area::IoRequest r = pending_[i];
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    for (size_t k = 0; k < r.bufs.size(); ++k)
      std::memset(r.bufs[k], static_cast<int>((r.page + k) & 0xff), kPageSize);
    done->push_back({r.tag, 0, 0, static_cast<uint32_t>(r.bufs.size())});
  }
  std::deque<area::IoRequest> pending_;
  std::mt19937_64 rng_{3};
  area::DeviceLimits limits_{};
};

TEST(Batcher, WaitSomeReportsOnlyACompletePrefixOfTheQueue) {
  ShuffledEngine e;
  RequestBatcher b(e, {BatchMode::kPerRun, CapacityMode::kExact, 16});
  constexpr uint64_t kPages = 700;
  std::vector<AlignedPage> dest(kPages);
  std::vector<uint64_t> dblock(kPages);
  for (uint64_t k = 0; k < kPages; ++k) {
    dblock[k] = 10 + k + (k / 37) * 3;  // runs of 37, bios of at most 16 pages
    std::memset(dest[k].data(), 0xee, kPageSize);
    b.QueueRead(dblock[k], dest[k].data());
  }
  EXPECT_EQ(b.pages_queued(), kPages);
  EXPECT_EQ(b.pages_done(), 0u);
  uint64_t last = 0;
  bool held_back = false;  // a page read but not yet counted: its bio overtook an older one
  while (b.pages_done() < kPages) {
    ASSERT_TRUE(b.WaitSome().ok());
    ASSERT_GE(b.pages_done(), last);
    for (uint64_t k = last; k < b.pages_done(); ++k)
      ASSERT_EQ(static_cast<uint8_t>(dest[k].data()[100]), dblock[k] & 0xff)
          << "page " << k << " counted before it was read";
    for (uint64_t k = b.pages_done(); k < kPages && !held_back; ++k)
      held_back = static_cast<uint8_t>(dest[k].data()[0]) != 0xee;
    last = b.pages_done();
    ASSERT_LE(e.wait_any_calls, 1000u);
  }
  EXPECT_GT(e.wait_any_calls, 10u);
  EXPECT_EQ(b.stats().partial_waits, e.wait_any_calls);
  EXPECT_TRUE(held_back);
  // Wait settles the rest at once; a WaitSome with nothing in flight returns.
  for (uint64_t k = 0; k < 5; ++k) b.QueueRead(2000 + k, dest[k].data());
  EXPECT_EQ(b.pages_done(), kPages);
  ASSERT_TRUE(b.Wait().ok());
  EXPECT_EQ(b.pages_done(), kPages + 5);
  ASSERT_TRUE(b.WaitSome().ok());
  EXPECT_EQ(b.pages_done(), b.pages_queued());
}

// A sync read's Wait takes the async completions with it: a later
// WaitSome must not wait for them (the engine has nothing in flight).
TEST(Batcher, WaitSomeAfterASyncReadTookTheCompletions) {
  ShuffledEngine e;
  RequestBatcher b(e, {});
  std::vector<AlignedPage> dest(8);
  for (uint64_t k = 0; k < 8; ++k) b.QueueRead(100 + k, dest[k].data());
  ASSERT_TRUE(b.Flush().ok());
  AlignedPage one;
  ASSERT_TRUE(b.SyncRead(7, one.data()).ok());
  ASSERT_TRUE(b.WaitSome().ok());
  EXPECT_EQ(b.pages_done(), 8u);
  for (uint64_t k = 0; k < 8; ++k)
    EXPECT_EQ(static_cast<uint8_t>(dest[k].data()[0]), (100 + k) & 0xff);
}

}  // namespace
}  // namespace swaplab::hibernate
