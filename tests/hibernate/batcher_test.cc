// SPDX-License-Identifier: MIT
// RequestBatcher::WaitSome and pages_done(): reads complete out of order,
// the batcher reports the prefix of queued pages that is complete, never a
// page whose bio has not completed, and everything after Wait (the
// pipelined reader's refill rests on it). Write copies: used again only
// once their bio has completed, and never out of a registered arena.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <optional>
#include <random>
#include <set>
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
    batches.push_back(batch.size());
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
  // Completes up to poll_completes random requests in flight.
  Status Poll(std::vector<area::IoCompletion>* done) override {
    for (int i = 0; i < poll_completes && !pending_.empty(); ++i) CompleteOne(done);
    return Status::Ok();
  }
  int poll_completes = 0;
  // Writes: the first page whose data was not the pattern of its dblock
  // when its request completed (a copy reused too early), or none.
  std::optional<uint64_t> bad_write;
  std::set<const std::byte*> write_bufs;  // every page a write carried
  Status Discard(uint64_t, uint64_t) override { return Status::Ok(); }
  area::IoStats stats() const override { return {}; }
  const area::DeviceLimits& limits() const override { return limits_; }
  uint64_t wait_any_calls = 0;
  std::vector<size_t> batches;  // requests per Submit

 private:
  void CompleteOne(std::vector<area::IoCompletion>* done) {
    const size_t i = rng_() % pending_.size();
    const area::IoRequest r = pending_[i];
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    for (size_t k = 0; k < r.bufs.size(); ++k) {
      if (!r.write) {
        std::memset(r.bufs[k], static_cast<int>((r.page + k) & 0xff), kPageSize);
        continue;
      }
      write_bufs.insert(r.bufs[k]);
      uint64_t v;
      std::memcpy(&v, r.bufs[k], 8);
      if (v != r.page + k && !bad_write) bad_write = r.page + k;
    }
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

// WaitClosed waits for submitted bios only: the open bio and the closed
// ones short of the plug's flush stay queued, so the bios, the engine's
// Submit batches (the plug's merges), drains and partial waits are those of
// a batch that never called it; pages_done() counts only pages read.
TEST(Batcher, WaitClosedLeavesTheBiosAndTheSubmitsAsTheyWere) {
  auto run = [](ShuffledEngine& e, bool wait_closed) {
    constexpr uint64_t kPages = 700;
    RequestBatcher b(e, {BatchMode::kPerRun, CapacityMode::kExact, 16});
    std::vector<AlignedPage> dest(kPages);
    for (uint64_t k = 0; k < kPages; ++k) {
      const uint64_t dblock = 10 + k + (k / 37) * 3;  // runs of 37, bios of at most 16 pages
      b.QueueRead(dblock, dest[k].data());
      if (!wait_closed || k % 50 != 49) continue;
      // page k − max_unsubmitted() is in a submitted bio: it can be waited for
      const uint64_t want = k + 1 - b.max_unsubmitted();
      while (b.pages_done() < want) EXPECT_TRUE(b.WaitClosed().ok());
      for (uint64_t j = 0; j < b.pages_done(); ++j)
        EXPECT_EQ(static_cast<uint8_t>(dest[j].data()[9]), (10 + j + (j / 37) * 3) & 0xff);
    }
    EXPECT_TRUE(b.Wait().ok());
    EXPECT_EQ(b.pages_done(), kPages);
    return b.stats();
  };
  ShuffledEngine plain, waited;
  const BatchStats a = run(plain, false), w = run(waited, true);
  EXPECT_GT(waited.wait_any_calls, 10u);
  EXPECT_EQ(w.bios, a.bios);
  EXPECT_EQ(w.bio_sizes, a.bio_sizes);
  EXPECT_EQ(w.drains, a.drains);
  EXPECT_EQ(w.partial_waits, 0u);
  EXPECT_EQ(waited.batches, plain.batches);
  // Only the open bio queued: nothing to wait for, nothing handed over.
  RequestBatcher b(waited, {BatchMode::kPerRun, CapacityMode::kExact, 16});
  AlignedPage page;
  b.QueueRead(5, page.data());
  const size_t submits = waited.batches.size();
  EXPECT_EQ(b.WaitClosed().code(), -EAGAIN);
  EXPECT_EQ(b.pages_done(), 0u);
  EXPECT_EQ(waited.batches.size(), submits);
  EXPECT_TRUE(b.Wait().ok());
  EXPECT_EQ(b.stats().bios, 1u);
  EXPECT_EQ(b.stats().drains, 1u);
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

// Writes `pages` pages at dblocks 10.. (runs of 37) whose data names the
// dblock, through `b`, then drains.
void WriteNamedPages(RequestBatcher& b, uint64_t pages) {
  for (uint64_t k = 0; k < pages; ++k) {
    const uint64_t dblock = 10 + k + (k / 37) * 3;
    AlignedPage page;
    std::memcpy(page.data(), &dblock, 8);
    b.QueueWrite(dblock, page.data());
  }
  ASSERT_TRUE(b.Wait().ok());
}

TEST(Batcher, HeapCopiesAreUsedAgainOnlyAfterTheirBioCompleted) {
  ShuffledEngine e;
  e.poll_completes = 1;  // one bio completes per look, in random order
  RequestBatcher b(e, {BatchMode::kPerRun, CapacityMode::kExact, 16});
  constexpr uint64_t kPages = 3000;
  WriteNamedPages(b, kPages);
  EXPECT_FALSE(e.bad_write.has_value()) << "dblock " << *e.bad_write << " was overwritten";
  // hib_end_io frees a copy at its bio's completion: far fewer pages than
  // writes (each look completes a bio; a new page is taken only when none
  // is free).
  EXPECT_LT(e.write_bufs.size(), kPages / 4);
  EXPECT_EQ(b.queued_copies(), 0u);
}

TEST(Batcher, WithoutEarlyCompletionsEveryCopyIsItsOwnPage) {
  ShuffledEngine e;  // completes only inside Wait
  RequestBatcher b(e, {BatchMode::kPerPage, CapacityMode::kExact, 1});
  WriteNamedPages(b, 500);
  EXPECT_FALSE(e.bad_write.has_value());
  EXPECT_EQ(e.write_bufs.size(), 500u);
}

// max_heap_copies: an engine that completes nothing on its own (Poll)
// would take a page per write; bounded, a copy waits for a submitted bio
// instead (heap pages are made kHeapChunk = 64 at a time), with the bios
// and the Submit batches of the unbounded batch.
TEST(Batcher, BoundedHeapCopiesWaitForSubmittedWrites) {
  ShuffledEngine plain, bounded;
  RequestBatcher a(plain, {BatchMode::kPerRun, CapacityMode::kExact, 16});
  BatchOptions o{BatchMode::kPerRun, CapacityMode::kExact, 16};
  o.max_heap_copies = 100;
  RequestBatcher b(bounded, o);
  WriteNamedPages(a, 3000);
  WriteNamedPages(b, 3000);
  EXPECT_FALSE(bounded.bad_write.has_value()) << "dblock " << *bounded.bad_write;
  EXPECT_EQ(plain.write_bufs.size(), 3000u);
  EXPECT_LE(bounded.write_bufs.size(), 128u);
  EXPECT_GT(bounded.wait_any_calls, 10u);
  EXPECT_EQ(b.stats().bios, a.stats().bios);
  EXPECT_EQ(b.stats().bio_sizes, a.stats().bio_sizes);
  EXPECT_EQ(b.stats().drains, a.stats().drains);
  EXPECT_EQ(b.stats().partial_waits, 0u);
  EXPECT_EQ(bounded.batches, plain.batches);
}

TEST(Batcher, ArenaCopiesWaitForTheDrain) {
  ShuffledEngine e;
  e.poll_completes = 1;
  auto arena = CopyArena::Make(256);
  ASSERT_TRUE(arena.ok());
  BatchOptions o{BatchMode::kPerRun, CapacityMode::kExact, 16};
  o.arena = arena->get();
  RequestBatcher b(e, o);
  WriteNamedPages(b, 600);  // 256 arena pages, then the heap
  EXPECT_FALSE(e.bad_write.has_value());
  size_t in_arena = 0;
  for (const std::byte* p : e.write_bufs)
    in_arena += p >= (*arena)->base() && p < (*arena)->base() + 256 * kPageSize;
  EXPECT_EQ(in_arena, 256u);  // each arena page once: handed out in order, not reused
  // After the drain the arena is handed out from its start again.
  e.write_bufs.clear();
  WriteNamedPages(b, 10);
  EXPECT_TRUE(e.write_bufs.count((*arena)->base()));
}

}  // namespace
}  // namespace swaplab::hibernate
