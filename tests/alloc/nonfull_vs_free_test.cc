// SPDX-License-Identifier: MIT
// §2.4 "prefer nonfull over free" (seed 003, Aug 2025) versus the older
// free-first order (§10.2), by rule and by its measured effect on 64 KiB
// (order 4) swap-out fallbacks on a fragmented non-discard device.
#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

Policy MustPreset(const char* name) {
  Result<Policy> p = Policy::Preset(name);
  EXPECT_TRUE(p.ok()) << name << ": " << p.status().ToString();
  return p.ok() ? *p : Policy{};
}

// 15 slots swapped out on CPU 0 (one cluster's worth: cluster 0 when
// nonfull comes first, cluster 1 when the free list comes first or on a
// discard device), then the fifth of them zapped. CPU 1, without a hint,
// asks for one order-0 slot.
uint64_t NextSlotAfterOneFreed(Policy p, DiscardMode discard, uint64_t* victim) {
  Harness h(Options(4, 2, std::move(p)));
  SwaponOptions o = Dev("a", 64);
  o.discard = discard;
  const int t = h.On(o);
  std::vector<SwapEntry> e;
  for (int i = 0; i < 15; ++i) e.push_back(h.SwapOut(0));
  *victim = e[4].offset;
  EXPECT_TRUE(h.PutDirect(e[4]).ok());
  const Offs nonfull = h.L(t, ListId::kNonfull, 0);
  EXPECT_TRUE(!nonfull.empty() && nonfull.back() == *victim / 16);
  return h.Off(1);
}

// §2.4: without PAGE_DISCARD nonfull[k] comes before the free list.
TEST(Alloc_2_4, NonfullBeforeFreeWithoutDiscard) {
  for (Policy p : {PrimaryPolicy(), MustPreset("linux-6.18"), MustPreset("mm-new")}) {
    uint64_t victim = 0;
    EXPECT_EQ(NextSlotAfterOneFreed(p, DiscardMode::kNone, &victim), 5u) << p.name;
    EXPECT_EQ(victim, 5u) << p.name;
  }
}

// §2.4: PAGE_DISCARD devices still prefer a free cluster.
TEST(Alloc_2_4, FreeBeforeNonfullWithDiscard) {
  uint64_t victim = 0;
  EXPECT_EQ(NextSlotAfterOneFreed(PrimaryPolicy(), DiscardMode::kPages, &victim), 32u);
  EXPECT_EQ(victim, 20u);  // the fill went to cluster 1 (free list first)
}

// §10.2: before v6.18 the free list came first on every device.
TEST(Alloc_10_2, FreeBeforeNonfullOnOldKernels) {
  uint64_t victim = 0;
  EXPECT_EQ(NextSlotAfterOneFreed(MustPreset("linux-6.15"), DiscardMode::kNone, &victim), 32u);
  EXPECT_EQ(victim, 20u);
}

// Seed 003 workload: swap out order-4 (64 KiB) and order-0 folios and
// free them again, on a 64-cluster non-discard SSD block device (CLUSTER
// 64, so 4 order-4 folios per cluster), usage kept between 60% and 95%.
// A free either zaps a whole swapped-out folio (70%: munmap / exit) or one
// random 4 KiB page of it (30%: partial zap), which fragments clusters.
// The random stream is drawn identically whatever the allocator does, so
// both policies see the same decisions. Every step checks the invariants.
struct ChurnResult {
  uint64_t order4_attempts = 0;
  uint64_t fallbacks = 0;
};

ChurnResult Churn(const Policy& policy, uint64_t seed, int steps) {
  constexpr uint64_t kCluster = 64, kClusters = 64;
  Harness h(Options(6, 2, policy));
  const int t = h.On(Dev("zram0", kCluster * kClusters));
  const uint64_t pages = h.Dv(t).pages;
  std::mt19937_64 rng(seed);
  std::vector<std::vector<SwapEntry>> live;  // per folio: SHADOW slots, count 1
  ChurnResult r;
  // Swapped out: unmapped (count 1 per page) and dropped from the cache.
  auto finish = [&](Folio& f) {
    const SwapEntry e = f.swap();
    EXPECT_TRUE(h.Dup(f).ok());
    EXPECT_TRUE(h.Del(f).ok());
    std::vector<SwapEntry> v;
    for (int p = 0; p < f.nr_pages(); ++p) v.push_back(SwapEntry{e.type, e.offset + p});
    live.push_back(std::move(v));
  };
  for (int step = 0; step < steps && !::testing::Test::HasFailure(); ++step) {
    const uint64_t used = h.Dv(t).inuse;
    const bool below = used<pages * 60 / 100, above = used> pages * 95 / 100;
    const uint64_t dice = rng() % 100;
    if (!above && (below || dice < 50)) {
      const bool large = rng() % 100 < 50;
      const CpuId cpu = static_cast<CpuId>(rng() % 2);
      if (large) {
        ++r.order4_attempts;
        Folio& f = h.NewFolio(4);
        std::vector<Folio*> split;
        for (int i = 0; i < 16; ++i) split.push_back(&h.NewFolio(0));
        f.Lock();
        Result<SwapOutResult> res = h.sys.SwapOutFolio(cpu, f, split);
        f.Unlock();
        h.Check("SwapOutFolio");
        if (!res.ok()) continue;
        if (res->split) {
          for (Folio* s : split)
            if (s->in_swap_cache()) finish(*s);
        } else if (f.in_swap_cache()) {
          finish(f);
        }
      } else {
        Folio* f = h.AllocNew(cpu, 0);
        if (f) finish(*f);
      }
    } else if (!live.empty()) {
      const size_t k = rng() % live.size();
      const bool whole = rng() % 100 < 70;
      std::vector<SwapEntry>& v = live[k];
      if (whole) {
        for (const SwapEntry& e : v) EXPECT_TRUE(h.PutDirect(e).ok());
        v.clear();
      } else {
        const size_t j = rng() % v.size();
        EXPECT_TRUE(h.PutDirect(v[j]).ok());
        v[j] = v.back();
        v.pop_back();
      }
      if (v.empty()) {
        live[k] = std::move(live.back());
        live.pop_back();
      }
    }
  }
  r.fallbacks = h.sys.counters().swpout_fallback[4];
  EXPECT_EQ(h.sys.counters().swpout[4] + r.fallbacks, r.order4_attempts);
  return r;
}

// Seed 003: "prefer nonfull over free" lowers the 64 KiB swpout_fallback
// count on a non-discard device. Only the direction is asserted (the
// linux-6.18 preset also scans one frag cluster instead of all, which on
// its own raises fallbacks under heavy fragmentation; this workload keeps
// fragmentation moderate, as in the seed's measurements).
TEST(Seed003, NonfullFirstFallsBackLessThanFreeFirst) {
  constexpr uint64_t kSeed = 3;
  constexpr int kSteps = 8000;
  const ChurnResult old_kernel = Churn(MustPreset("linux-6.15"), kSeed, kSteps);
  const ChurnResult new_kernel = Churn(MustPreset("linux-6.18"), kSeed, kSteps);
  ASSERT_FALSE(::testing::Test::HasFailure());
  EXPECT_GT(old_kernel.order4_attempts, 1000u);
  EXPECT_GT(old_kernel.fallbacks, 0u) << "the workload does not fragment";
  EXPECT_LT(new_kernel.fallbacks, old_kernel.fallbacks)
      << "linux-6.18: " << new_kernel.fallbacks << "/" << new_kernel.order4_attempts
      << " fallbacks, linux-6.15: " << old_kernel.fallbacks << "/" << old_kernel.order4_attempts;
  std::cout << "[ seed 003 ] 64 KiB swpout_fallback: linux-6.15 " << old_kernel.fallbacks << "/"
            << old_kernel.order4_attempts << ", linux-6.18 " << new_kernel.fallbacks << "/"
            << new_kernel.order4_attempts << "\n";
}

}  // namespace
}  // namespace swaplab::alloc::test
