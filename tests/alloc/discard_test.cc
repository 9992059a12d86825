// SPDX-License-Identifier: MIT
// §3.5 step 5 / §3.6 discard of freed clusters on PAGE_DISCARD devices, and
// §2.9 the synchronous discard retry.
#include <gtest/gtest.h>

#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

SwaponOptions DiscardDev(std::string name, uint64_t pages, DiscardSink* sink,
                         std::optional<int> prio = {}) {
  SwaponOptions o = Dev(std::move(name), pages);
  o.discard = DiscardMode::kPages;
  o.discard_sink = sink;
  o.prio = prio;
  return o;
}

SystemOptions Held(int cpus = 2) {
  SystemOptions o = Options(4, cpus);
  o.run_deferred_work_inline = false;
  return o;
}

// §3.5 step 5: an emptied cluster goes to the tail of the discard list with
// its table; §3.6: the worker discards all CLUSTER slots, then the cluster
// is FREE (no table, order 0) at the tail of the free list.
TEST(Discard_3_6, FreedClusterGoesThroughDiscardList) {
  RecordingSink sink;
  Harness h(Held());
  const int t = h.On(DiscardDev("a", 64, &sink));
  Folio* f = h.AllocNew(0, 2);
  ASSERT_EQ(f->swap().offset, 16u);
  ASSERT_TRUE(h.Del(*f).ok());
  ClusterInfo c = h.Cl(t, 1);
  EXPECT_EQ(c.flag, ClusterFlag::kDiscard);
  EXPECT_EQ(c.count, 0u);
  EXPECT_TRUE(c.has_table);
  EXPECT_EQ(h.L(t, ListId::kDiscard), (Offs{1}));
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{2, 3}));
  EXPECT_TRUE(sink.calls.empty());
  EXPECT_TRUE(h.sys.HasDeferredWork());
  EXPECT_EQ(h.Dv(t).inuse, 0u);
  EXPECT_EQ(h.sys.nr_swap_pages(), 63);  // slots are counted free already (§3.5 step 4)
  h.sys.RunDeferredWork();
  ASSERT_INVARIANTS(h.sys);
  ASSERT_EQ(sink.calls.size(), 1u);
  EXPECT_EQ(sink.calls[0].type, t);
  EXPECT_EQ(sink.calls[0].first, 16u);
  EXPECT_EQ(sink.calls[0].nr, 16u);
  c = h.Cl(t, 1);
  EXPECT_EQ(c.flag, ClusterFlag::kFree);
  EXPECT_FALSE(c.has_table);
  EXPECT_EQ(c.order, 0);
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{2, 3, 1}));
  EXPECT_TRUE(h.L(t, ListId::kDiscard).empty());
  EXPECT_EQ(h.sys.counters().clusters_discarded, 1u);
  EXPECT_FALSE(h.sys.HasDeferredWork());
}

// Appendix A: with inline deferred work the discard has run when the call
// that scheduled it returns.
TEST(Discard_3_6, InlineWorkRunsAtEndOfCall) {
  RecordingSink sink;
  Harness h(Options(4, 1));
  const int t = h.On(DiscardDev("a", 64, &sink));
  Folio* f = h.AllocNew(0, 4);
  ASSERT_TRUE(h.Del(*f).ok());
  EXPECT_EQ(h.Cl(t, 1).flag, ClusterFlag::kFree);
  ASSERT_EQ(sink.calls.size(), 1u);
  EXPECT_EQ(sink.calls[0].first, 16u);
  EXPECT_FALSE(h.sys.HasDeferredWork());
}

// §3.6: the discard list is FIFO; clusters return to the free list in order.
TEST(Discard_3_6, DiscardListIsFifo) {
  RecordingSink sink;
  Harness h(Held());
  const int t = h.On(DiscardDev("a", 80, &sink));
  Folio* a = h.AllocNew(0, 4);  // cluster 1
  Folio* b = h.AllocNew(0, 4);  // cluster 2
  ASSERT_EQ(b->swap().offset, 32u);
  ASSERT_TRUE(h.Del(*b).ok());
  ASSERT_TRUE(h.Del(*a).ok());
  EXPECT_EQ(h.L(t, ListId::kDiscard), (Offs{2, 1}));
  h.sys.RunDeferredWork();
  ASSERT_INVARIANTS(h.sys);
  ASSERT_EQ(sink.calls.size(), 2u);
  EXPECT_EQ(sink.calls[0].first, 32u);
  EXPECT_EQ(sink.calls[1].first, 16u);
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{3, 4, 2, 1}));
}

// §1.7 "DISCARD → DISCARD (off list)": while its discard is issued the
// cluster keeps flag DISCARD but is no longer on the discard list.
class ObservingSink : public DiscardSink {
 public:
  void Discard(int type, uint64_t first, uint64_t nr) override {
    auto c = sys->Cluster(type, first / sys->cluster_size());
    flag_ok = c.ok() && c->flag == ClusterFlag::kDiscard;
    auto l = sys->List(type, ListId::kDiscard);
    off_list = l.ok() && l->empty();
    nr_seen = nr;
  }
  SwapSystem* sys = nullptr;
  bool flag_ok = false, off_list = false;
  uint64_t nr_seen = 0;
};

TEST(Discard_3_6, ClusterOffListWhileDiscarding) {
  ObservingSink sink;
  Harness h(Held());
  sink.sys = &h.sys;
  h.On(DiscardDev("a", 64, &sink));
  Folio* f = h.AllocNew(0, 4);
  ASSERT_TRUE(h.Del(*f).ok());
  h.sys.RunDeferredWork();
  ASSERT_INVARIANTS(h.sys);
  EXPECT_TRUE(sink.flag_ok);
  EXPECT_TRUE(sink.off_list);
  EXPECT_EQ(sink.nr_seen, 16u);
}

// A PAGE_DISCARD device of 31 slots whose only free slots are cluster 1,
// waiting for discard.
int DiscardPending(Harness& h, const std::string& name, DiscardSink* sink,
                   std::optional<int> prio = {}) {
  const int t = h.On(DiscardDev(name, 32, sink, prio));
  for (int i = 0; i < 31; ++i) EXPECT_EQ(h.SwapOut(0).type, t);
  EXPECT_TRUE(h.PutDirect(SwapEntry{t, 16}, 16).ok());
  EXPECT_EQ(h.L(t, ListId::kDiscard), (Offs{1}));
  return t;
}

// §2.9: an order-0 allocation that failed everywhere runs the pending
// discards synchronously and retries.
TEST(Discard_2_9, SyncDiscardRetryForOrder0) {
  RecordingSink sink;
  Harness h(Held());
  const int t = DiscardPending(h, "a", &sink);
  EXPECT_EQ(h.Ent(1), (SwapEntry{t, 16}));
  EXPECT_EQ(h.sys.counters().sync_discard_retries, 1u);
  EXPECT_EQ(h.sys.counters().clusters_discarded, 1u);
  ASSERT_EQ(sink.calls.size(), 1u);
  EXPECT_EQ(sink.calls[0].first, 16u);
}

// §2.9: large folios never get the retry.
TEST(Discard_2_9, NoRetryForLargeFolios) {
  RecordingSink sink;
  Harness h(Held());
  const int t = DiscardPending(h, "a", &sink);
  Folio& f = h.NewFolio(1);
  EXPECT_ERRNO(h.Alloc(1, f), -ENOMEM);
  EXPECT_EQ(h.L(t, ListId::kDiscard), (Offs{1}));
  EXPECT_TRUE(sink.calls.empty());
  EXPECT_EQ(h.sys.counters().sync_discard_retries, 0u);
}

// §2.9: the walk is in priority order and stops at the first device that
// discarded something; lower devices keep their pending discards.
TEST(Discard_2_9, StopsAtFirstDeviceThatDiscarded) {
  RecordingSink sa, sb;
  Harness h(Held());
  const int A = DiscardPending(h, "a", &sa, 10);
  const int B = DiscardPending(h, "b", &sb, 5);
  EXPECT_EQ(h.Ent(1), (SwapEntry{A, 16}));
  EXPECT_EQ(h.L(B, ListId::kDiscard), (Offs{1}));
  EXPECT_EQ(sa.calls.size(), 1u);
  EXPECT_TRUE(sb.calls.empty());
}

// §2.4 / §10.2 step 5: the linux-6.15 preset restarts inside the device
// search after a synchronous discard (kSyncDiscardRestart) instead of the
// §2.9 retry; the allocation succeeds either way.
TEST(Discard_10_2, OldPresetRestartsSearchAfterDiscard) {
  Result<Policy> p = Policy::Preset("linux-6.15");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  SystemOptions o = Options(4, 2, *p);
  o.run_deferred_work_inline = false;
  RecordingSink sink;
  Harness h(o);
  const int t = DiscardPending(h, "a", &sink);
  EXPECT_EQ(h.Ent(1), (SwapEntry{t, 16}));
  EXPECT_EQ(sink.calls.size(), 1u);
}

}  // namespace
}  // namespace swaplab::alloc::test

namespace swaplab::alloc::test {
namespace {

// A device whose discard fails at call `fail_at` (the fault sweep:
// every discard request failing in turn). The kernel ignores discard errors
// (discard_swap_cluster()): whichever call fails, every slot comes back,
// every emptied cluster ends FREE, the invariants hold.
struct FailingSink : DiscardSink {
  explicit FailingSink(size_t at) : fail_at(at) {}
  void Discard(int, uint64_t, uint64_t) override {
    if (calls++ == fail_at) ++failed;
  }
  size_t fail_at, calls = 0, failed = 0;
};

TEST(DiscardFaults, EveryDiscardFailingInTurnLeavesNoSlotAndFreeClusters) {
  size_t total = 0;
  for (size_t at = 0; at == 0 || at < total; ++at) {
    FailingSink sink(at);
    Harness h(Held());
    const int t = h.On(DiscardDev("a", 256, &sink));
    std::vector<Folio*> folios;
    for (int i = 0; i < 12; ++i) folios.push_back(h.AllocNew(i % 2, i % 3 == 0 ? 2 : 0));
    for (Folio* f : folios) ASSERT_TRUE(h.Del(*f).ok());
    h.sys.RunDeferredWork();
    ASSERT_INVARIANTS(h.sys);
    if (at == 0) total = sink.calls;
    ASSERT_GT(total, 1u);
    EXPECT_EQ(sink.failed, 1u) << "call " << at;
    EXPECT_EQ(h.Dv(t).inuse, 0u) << "call " << at;
    EXPECT_TRUE(h.L(t, ListId::kDiscard).empty()) << "call " << at;
    // every cluster but the header's (16 slots each here) is FREE again
    EXPECT_EQ(h.L(t, ListId::kFree).size(), 256u / 16 - 1) << "call " << at;
    EXPECT_EQ(h.sys.nr_swap_pages(), 255) << "call " << at;
  }
}

}  // namespace
}  // namespace swaplab::alloc::test
