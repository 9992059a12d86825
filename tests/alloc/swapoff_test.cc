// SPDX-License-Identifier: MIT
// §5.2 swapoff: counters, unuse, failure re-enables, per-CPU hints
// cleared, no discard while not WRITEOK.
#include <gtest/gtest.h>

#include <thread>

#include "alloc/system_state.h"
#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

// get_swap_device/put_swap_device against swapon/swapoff: a TryGet that
// fails on a dead device adds 1 and then takes it back. Swapon's enable
// may fall between the two halves; it must leave that decrement owed, so
// that the count is 0 once it is paid and the next swapoff still waits
// for every reference. (The stress test SwapoffUnderLoad found this under
// TSan: a store of 0 made the count -1, the next swapoff's wait ended
// while a reference was held, and it freed the clusters under it.)
TEST(Swapoff_5_2, ReferenceCountSurvivesAFailedGetAcrossSwapon) {
  SwapDevice d;
  EXPECT_FALSE(d.TryGet());                         // dead until swapon
  d.users.fetch_add(1, std::memory_order_acquire);  // first half of a failing TryGet
  d.Revive();                                       // swapon's enable between the halves
  d.users.fetch_sub(1, std::memory_order_release);  // the second half
  EXPECT_EQ(d.users.load(), 0);
  ASSERT_TRUE(d.TryGet());
  std::atomic<bool> killed{false};
  std::thread off([&] {
    d.KillAndWait();
    killed.store(true);
  });
  while (d.users.load() < kDeadRef) std::this_thread::yield();  // killed
  EXPECT_FALSE(d.TryGet());                                     // no new reference once killed
  for (int i = 0; i < 100; ++i) std::this_thread::yield();
  EXPECT_FALSE(killed.load());  // the kill waits for the held reference
  d.Put();
  off.join();
  EXPECT_TRUE(killed.load());
  EXPECT_FALSE(d.TryGet());
}

// §5.2 steps 2, 6: an empty device leaves both lists and the totals; its
// record is reused by the next swapon.
TEST(Swapoff_5_2, EmptyDevice) {
  Harness h(Options(4, 1));
  const int a = h.On(Dev("a", 64));
  const int b = h.On(Dev("b", 48));
  ASSERT_TRUE(h.SwapOff(a).ok());
  EXPECT_EQ(h.sys.active_devices(), (std::vector<int>{b}));
  EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{b}));
  EXPECT_EQ(h.sys.total_swap_pages(), 47);
  EXPECT_EQ(h.sys.nr_swap_pages(), 47);
  EXPECT_EQ(h.On(Dev("c", 32)), a);
  EXPECT_EQ(h.sys.total_swap_pages(), 47 + 31);
}

// §5.2 steps 2-4, G2: while unuse runs the device is not WRITEOK, off both
// lists, and nr_swap_pages = Σ other free − this device's inuse.
TEST(Swapoff_5_2, UnuseBringsEverythingBack) {
  Harness h(Options(4, 2));
  const int other = h.On(Dev("other", 32));  // 31 pages, stays
  SwaponOptions o = Dev("/dev/swapA", 64);
  o.prio = 10;
  const int t = h.On(o);
  Folio* cache_only = h.AllocNew(0);
  Folio* mapped = h.AllocNew(0, 2);
  ASSERT_TRUE(h.Dup(*mapped).ok());
  ASSERT_TRUE(h.Dup(*mapped, 1).ok());
  const SwapEntry s1 = h.SwapOut(1);
  const SwapEntry s3 = h.SwapOut(1, 1);
  ASSERT_TRUE(h.DupDirect(s3).ok());
  ASSERT_TRUE(h.DupDirect(s3).ok());
  ASSERT_EQ(s1.type, t);
  const uint64_t inuse = h.Dv(t).inuse;
  ASSERT_EQ(inuse, 1u + 4u + 1u + 2u);
  int calls = 0;
  bool first_checked = false;
  SwapSystem::UnuseFn drop = h.DropAll();
  Status st = h.sys.Swapoff(t, [&](SwapEntry e) {
    ++calls;
    EXPECT_EQ(e.type, t);
    if (!first_checked) {
      first_checked = true;
      auto d = h.sys.Device(t);
      EXPECT_TRUE(d.ok());
      if (d.ok()) {
        EXPECT_FALSE(d->writeok);
        EXPECT_FALSE(d->on_avail_list);
        // swapoff may already have dropped cache-only slots itself.
        EXPECT_LE(d->inuse, inuse);
        EXPECT_GT(d->inuse, 0u);
        EXPECT_EQ(h.sys.nr_swap_pages(), 31 - int64_t(d->inuse));  // G2
      }
      EXPECT_EQ(h.sys.total_swap_pages(), 31);
      EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{other}));
      EXPECT_EQ(h.sys.active_devices(), (std::vector<int>{other}));
      EXPECT_NE(h.sys.ProcSwaps().find("/dev/swapA"), std::string::npos);  // §5.2 last para
      EXPECT_EQ(h.sys.CountSwapPages(t, false), 0u);                       // not WRITEOK
      EXPECT_EQ(h.sys.SwapdevBlock(t, 1), 0u);
    }
    drop(e);
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  ASSERT_INVARIANTS(h.sys);
  EXPECT_GE(calls, 1);
  EXPECT_FALSE(cache_only->in_swap_cache());
  EXPECT_FALSE(mapped->in_swap_cache());
  EXPECT_EQ(h.sys.active_devices(), (std::vector<int>{other}));
  EXPECT_EQ(h.sys.nr_swap_pages(), 31);
  EXPECT_EQ(h.sys.total_swap_pages(), 31);
  EXPECT_EQ(h.sys.ProcSwaps().find("/dev/swapA"), std::string::npos);
}

// §5.2 step 4: if unuse leaves references, swapoff fails and the device is
// re-enabled exactly as in §5.1 step 9.
TEST(Swapoff_5_2, FailureReenablesDevice) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(h.SwapOut(0).valid());
  Status st = h.SwapOff(t, [](SwapEntry) {});
  EXPECT_ERRNO(st, -EBUSY);
  const DeviceInfo d = h.Dv(t);
  EXPECT_TRUE(d.writeok);
  EXPECT_TRUE(d.on_avail_list);
  EXPECT_EQ(d.inuse, 3u);
  EXPECT_EQ(h.sys.nr_swap_pages(), 63 - 3);
  EXPECT_EQ(h.sys.total_swap_pages(), 63);
  EXPECT_EQ(h.sys.active_devices(), (std::vector<int>{t}));
  EXPECT_EQ(h.Off(0), 4u);  // still allocatable
}

// §1.6 / §5.2 step 5 / D4: every CPU's per-CPU entries pointing at the
// device are cleared; entries pointing at other devices stay.
TEST(Swapoff_5_2, PerCpuHintsCleared) {
  Harness h(Options(4, 3));
  SwaponOptions a = Dev("a", 64);
  a.prio = 10;
  const int A = h.On(a);
  const int B = h.On(Dev("b", 64));
  h.Off(0);
  h.Off(0, 2);
  h.Off(1);
  ASSERT_EQ(h.sys.Hint(0, 2).type, A);
  ASSERT_TRUE(h.SwapOff(A, h.DropAll()).ok());
  EXPECT_EQ(h.sys.Hint(2, 0).type, -1);
  // CPU 2 never allocated; CPU 0/1 pointed at A.
  EXPECT_EQ(h.sys.Hint(0, 0).type, -1);
  EXPECT_EQ(h.sys.Hint(0, 2).type, -1);
  EXPECT_EQ(h.sys.Hint(1, 0).type, -1);
  EXPECT_EQ(h.Ent(0), (SwapEntry{B, 1}));
  EXPECT_EQ(h.sys.Hint(0, 0).type, B);
}

// §3.6 / §5.2 step 3: clusters freed while not WRITEOK go straight to the
// free list, without a discard.
TEST(Swapoff_5_2, NoDiscardWhileNotWriteok) {
  RecordingSink sink;
  Harness h(Options(4, 1));
  SwaponOptions o = Dev("a", 64);
  o.discard = DiscardMode::kPages;
  o.discard_sink = &sink;
  const int t = h.On(o);
  Folio* f = h.AllocNew(0, 4);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(h.SwapOff(t, h.DropAll()).ok());
  EXPECT_FALSE(f->in_swap_cache());
  EXPECT_TRUE(sink.calls.empty());
  EXPECT_EQ(h.sys.counters().clusters_discarded, 0u);
}

}  // namespace
}  // namespace swaplab::alloc::test
