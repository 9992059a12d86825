// SPDX-License-Identifier: MIT
// Concurrency stress of SwapSystem (label "concurrency"; the tsan preset
// runs it under ThreadSanitizer).
//
// Two devices (an SSD with PAGE_DISCARD, a rotating disk without discard),
// two or three worker threads, each owning its CPU ids, mixing order-0 and
// order-4 swap-out (with split fallback), unmap (dup), fault (put), cache
// drops, zaps, swap-in, fork, folio_free_swap and reclaim
// (stress_worker.h), plus one thread doing hibernation slot alloc / free,
// RunDeferredWork and short storage suspensions. Every phase all threads
// meet at a barrier and the test checks, at quiescence, CheckInvariants()
// and that the devices' inuse equals what the threads hold. At the end every
// thread gives everything back: no slot may be lost (inuse 0, nr_swap_pages
// == total_swap_pages) and every device must swap off cleanly.
//
// Scale: ≥ 10^6 API calls per configuration in the release build, 1/4
// under ThreadSanitizer, 1/2 under AddressSanitizer. SWAPLAB_STRESS_SCALE (a factor) and
// SWAPLAB_STRESS_SEED override.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "alloc/stress_worker.h"
#include "swaplab/alloc/swap_system.h"

#if defined(__SANITIZE_THREAD__)
#define SWAPLAB_TSAN 1
#elif defined(__SANITIZE_ADDRESS__)
#define SWAPLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SWAPLAB_TSAN 1
#elif __has_feature(address_sanitizer)
#define SWAPLAB_ASAN 1
#endif
#endif

namespace swaplab::alloc::stress {
namespace {

#if defined(SWAPLAB_TSAN)
constexpr double kDefaultScale = 0.25;
#elif defined(SWAPLAB_ASAN)
constexpr double kDefaultScale = 0.5;
#else
constexpr double kDefaultScale = 1.0;
#endif

double Scale() {
  const char* s = std::getenv("SWAPLAB_STRESS_SCALE");
  return s ? std::atof(s) : kDefaultScale;
}

uint64_t Seed() {
  const char* s = std::getenv("SWAPLAB_STRESS_SEED");
  return s ? std::strtoull(s, nullptr, 0) : 0x5eed2026;
}

constexpr int kClusterShift = 6;  // 64 slots: lists churn
constexpr int kPhases = 16;

// Thread-safe: discards may come from any thread.
class CountingSink : public DiscardSink {
 public:
  void Discard(int type, uint64_t first, uint64_t nr) override {
    calls.fetch_add(1, std::memory_order_relaxed);
    if (first == 0) header.store(true);
    if (type < 0) bad_type.store(true);
    (void)nr;
  }
  std::atomic<uint64_t> calls{0};
  std::atomic<bool> header{false}, bad_type{false};
};

// Slots held by per-CPU slot caches (policy slot_cache, §10.1): counted in
// inuse but owned by nobody the test knows. Call at quiescence.
uint64_t SlotCacheHeld(const SwapSystem& sys, int type) {
  auto d = sys.Device(type);
  if (!d.ok()) return 0;
  uint64_t held = 0;
  for (uint64_t off = 0; off < d->max; ++off) {
    auto s = sys.Slot({type, off});
    held += s.ok() && s->kind == SlotKind::kCached && s->folio == nullptr ? 1 : 0;
  }
  return held;
}

// The hibernation thread: a few slots at a time on the given devices,
// deferred work, and rare, short storage suspensions.
class HibernationDriver {
 public:
  HibernationDriver(SwapSystem& sys, CpuId cpu, std::vector<int> types, uint64_t seed, bool suspend)
      : sys_(sys), cpu_(cpu), types_(std::move(types)), rng_(seed), suspend_(suspend) {}

  void Step() {
    const uint32_t r = rng_() % 100;
    if (r < 45) {
      if (slots_.size() >= 48) return FreeOne();
      const int t = types_[rng_() % types_.size()];
      ++calls_;
      const SwapEntry e = sys_.AllocHibernationSlot(cpu_, t);
      if (!e.valid()) return;
      if (e.type != t) Error("hibernation slot on device " + std::to_string(e.type));
      slots_.push_back(e);
    } else if (r < 85) {
      FreeOne();
    } else if (r < 95) {
      ++calls_;
      sys_.RunDeferredWork();
    } else if (r < 98 || !suspend_) {
      const int t = types_[rng_() % types_.size()];
      auto d = sys_.Device(t);
      if (!d.ok()) return;
      ++calls_;
      (void)sys_.TryToReclaimSwap({t, 1 + rng_() % (d->max - 1)}, kReclaimAnyway);
    } else {
      calls_ += 2;
      sys_.SetStorageSuspended(true);
      std::this_thread::yield();
      sys_.SetStorageSuspended(false);
    }
  }
  void FreeOne() {
    if (slots_.empty()) return;
    const size_t i = rng_() % slots_.size();
    ++calls_;
    const Status st = sys_.FreeHibernationSlot(slots_[i]);
    if (!st.ok()) Error("FreeHibernationSlot: " + st.ToString());
    slots_[i] = slots_.back();
    slots_.pop_back();
  }
  void FreeAll() {
    while (!slots_.empty()) FreeOne();
  }
  size_t held() const { return slots_.size(); }
  uint64_t api_calls() const { return calls_; }
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  void Error(const std::string& e) {
    if (errors_.size() < 20) errors_.push_back(e);
  }
  SwapSystem& sys_;
  CpuId cpu_;
  std::vector<int> types_;
  std::mt19937_64 rng_;
  bool suspend_;
  std::vector<SwapEntry> slots_;
  uint64_t calls_ = 0;
  std::vector<std::string> errors_;
};

struct StressParam {
  std::string preset;
  bool inline_work;
};

void PrintTo(const StressParam& p, std::ostream* os) {
  *os << p.preset << (p.inline_work ? " inline" : " deferred");
}

std::string ParamName(const ::testing::TestParamInfo<StressParam>& info) {
  std::string n = info.param.preset + (info.param.inline_work ? "_inline" : "_deferred");
  for (char& c : n) {
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

std::vector<StressParam> AllParams() {
  std::vector<StressParam> v;
  for (const std::string& p : Policy::PresetNames()) {
    v.push_back({p, true});
    v.push_back({p, false});
  }
  return v;
}

class SwapSystemStress : public ::testing::TestWithParam<StressParam> {};

// Gives every reference back, then checks that no slot was lost and that
// every device swaps off.
void DrainAndCheck(SwapSystem& sys, std::vector<std::unique_ptr<Worker>>& workers,
                   HibernationDriver* hib, const std::vector<int>& types) {
  for (auto& w : workers) w->DropAll();
  if (hib) hib->FreeAll();
  sys.SetStorageSuspended(false);
  sys.RunDeferredWork();
  const InvariantReport inv = sys.CheckInvariants();
  EXPECT_TRUE(inv.ok()) << inv.ToString();
  uint64_t slot_cache = 0;
  for (int t : types) {
    auto d = sys.Device(t);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    const uint64_t held = SlotCacheHeld(sys, t);
    slot_cache += held;
    EXPECT_EQ(d->inuse, held) << "device " << t << ": slots lost (" << held
                              << " held by slot caches)";
    EXPECT_EQ(d->discard_clusters, 0u) << "device " << t;
  }
  EXPECT_EQ(sys.nr_swap_pages() + static_cast<int64_t>(slot_cache), sys.total_swap_pages());
  EXPECT_FALSE(sys.HasDeferredWork());
  if (sys.policy().slot_cache) {
    EXPECT_GT(sys.counters().slot_cache_hits + sys.counters().slot_cache_refills, 0u)
        << "the slot cache was never used";
  }
  // Swapoff drains the slot caches; nothing else may remain.
  for (int t : types) {
    const Status st = sys.Swapoff(t, [](SwapEntry e) {
      ADD_FAILURE() << "unuse(" << e.type << ", " << e.offset
                    << ") after every reference was dropped";
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  EXPECT_EQ(sys.nr_swap_pages(), 0);
  EXPECT_EQ(sys.total_swap_pages(), 0);
  EXPECT_TRUE(sys.active_devices().empty());
  EXPECT_TRUE(sys.CheckInvariants().ok()) << sys.CheckInvariants().ToString();
}

TEST_P(SwapSystemStress, MixedWorkloadLosesNoSlot) {
  const StressParam& param = GetParam();
  auto policy = Policy::Preset(param.preset);
  ASSERT_TRUE(policy.ok());
  SystemOptions o;
  o.cluster_shift = kClusterShift;
  o.nr_cpus = 5;
  o.policy = *policy;
  o.run_deferred_work_inline = param.inline_work;
  SwapSystem sys(o);
  CountingSink sink;

  // SSD with PAGE_DISCARD and three bad pages; rotating disk, no discard.
  SwaponOptions a;
  a.name = "ssd-discard";
  a.pages = 40 * 64 - 10;
  a.ssd = true;
  a.discard = DiscardMode::kPages;
  a.bad_pages = {100, 1000, 2047};
  a.discard_sink = &sink;
  SwaponOptions b;
  b.name = "rotating";
  b.pages = 24 * 64;
  b.ssd = false;
  b.discard_sink = &sink;
  auto ta = sys.Swapon(a);
  auto tb = sys.Swapon(b);
  ASSERT_TRUE(ta.ok() && tb.ok());
  const std::vector<int> types = {*ta, *tb};

  const uint64_t seed = Seed();
  constexpr int kWorkers = 2;
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < kWorkers; ++i) {
    WorkerOptions wo;
    // Without mTHP swap-out (linux-6.1) the large folios are PMD-sized.
    if (!sys.policy().mthp_swap) wo.large_order = kClusterShift;
    wo.cpus = {2 * i, 2 * i + 1};
    wo.seed = seed * 31 + i;
    wo.max_slots = 1400;
    wo.reclaim_types = types;
    workers.push_back(std::make_unique<Worker>(sys, wo));
  }
  HibernationDriver hib(sys, /*cpu=*/4, types, seed * 31 + 99, /*suspend=*/true);

  // ≥ 10^6 API calls in all: each step is one call or more.
  const uint64_t steps = static_cast<uint64_t>(600'000 * Scale());
  const uint64_t per_phase = std::max<uint64_t>(1, steps / kPhases);
  std::mutex report_mu;
  std::vector<std::string> phase_errors;
  auto at_barrier = [&]() noexcept {
    // Quiescent: every thread waits in the barrier.
    const InvariantReport inv = sys.CheckInvariants();
    uint64_t inuse = 0, expect = hib.held();
    for (int t : types) {
      inuse += sys.Device(t)->inuse;
      expect += SlotCacheHeld(sys, t);
    }
    for (auto& w : workers) expect += w->SlotsInUse();
    std::lock_guard g(report_mu);
    if (!inv.ok() && phase_errors.size() < 10)
      phase_errors.push_back("invariant " + inv.ToString());
    if (inuse != expect && phase_errors.size() < 10) {
      phase_errors.push_back("Σ inuse " + std::to_string(inuse) + " but the threads hold " +
                             std::to_string(expect));
    }
    if (sys.nr_swap_pages() + static_cast<int64_t>(inuse) != sys.total_swap_pages() &&
        phase_errors.size() < 10) {
      phase_errors.push_back("nr_swap_pages + Σ inuse != total_swap_pages (G2)");
    }
  };
  std::barrier sync(kWorkers + 1, at_barrier);
  std::vector<std::thread> threads;
  for (auto& w : workers) {
    threads.emplace_back([&, wp = w.get()] {
      for (int ph = 0; ph < kPhases; ++ph) {
        for (uint64_t i = 0; i < per_phase; ++i) wp->Step();
        sync.arrive_and_wait();
      }
    });
  }
  threads.emplace_back([&] {
    for (int ph = 0; ph < kPhases; ++ph) {
      for (uint64_t i = 0; i < per_phase / 8; ++i) hib.Step();
      sync.arrive_and_wait();
    }
  });
  for (auto& t : threads) t.join();

  uint64_t calls = hib.api_calls(), allocs = 0, failures = 0, lost = 0;
  for (auto& w : workers) {
    calls += w->api_calls();
    allocs += w->allocs();
    failures += w->alloc_failures();
    lost += w->lost_to_reclaim();
    for (const std::string& e : w->errors()) ADD_FAILURE() << "worker: " << e;
  }
  for (const std::string& e : hib.errors()) ADD_FAILURE() << "hibernation thread: " << e;
  for (const std::string& e : phase_errors) ADD_FAILURE() << "at a phase barrier: " << e;
  const SwapCounters c = sys.counters();
  std::printf(
      "[ stats    ] %s: %lu API calls, %lu swap-outs (%lu failed), %lu folios lost to "
      "others' reclaim, reclaimed %lu, discarded %lu clusters, fast path %lu/%lu\n",
      ParamName({param, 0}).c_str(), static_cast<unsigned long>(calls),
      static_cast<unsigned long>(allocs), static_cast<unsigned long>(failures),
      static_cast<unsigned long>(lost), static_cast<unsigned long>(c.folios_reclaimed),
      static_cast<unsigned long>(c.clusters_discarded),
      static_cast<unsigned long>(c.fast_path_hits), static_cast<unsigned long>(c.fast_path_misses));
  if (Scale() >= 1.0) {
    EXPECT_GE(calls, 1'000'000u);
  }
  EXPECT_FALSE(sink.header.load()) << "a discard covered the header page";
  EXPECT_FALSE(sink.bad_type.load());

  DrainAndCheck(sys, workers, &hib, types);
}

INSTANTIATE_TEST_SUITE_P(Presets, SwapSystemStress, ::testing::ValuesIn(AllParams()), ParamName);

// A third device is swapped off and on again while the workers allocate
// from all three: swapoff either succeeds (nothing of it in use) or
// reports -EBUSY and puts the device back; nothing is lost either way.
TEST(SwapSystemStressSwapoff, SwapoffUnderLoad) {
  SystemOptions o;
  o.cluster_shift = kClusterShift;
  o.nr_cpus = 5;
  SwapSystem sys(o);
  CountingSink sink;
  SwaponOptions a, b, c;
  a.name = "ssd";
  a.pages = 16 * 64;
  a.discard = DiscardMode::kPages;
  a.discard_sink = &sink;
  b.name = "rotating";
  b.pages = 16 * 64;
  b.ssd = false;
  c.name = "churn";
  c.pages = 8 * 64 - 3;
  c.discard = DiscardMode::kBoth;
  c.discard_sink = &sink;
  a.prio = b.prio = c.prio = 7;  // equal priority: allocation rotates over all three
  const int ta = *sys.Swapon(a), tb = *sys.Swapon(b);
  int tc = *sys.Swapon(c);
  const uint64_t seed = Seed();
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < 2; ++i) {
    WorkerOptions wo;
    wo.cpus = {2 * i, 2 * i + 1};
    wo.seed = seed * 17 + i;
    wo.max_slots = 600;
    wo.unmap_percent = 25;  // mostly cache-only folios, which swapoff may reclaim
    wo.reclaim_types = {ta, tb, tc};
    workers.push_back(std::make_unique<Worker>(sys, wo));
  }
  const uint64_t steps = static_cast<uint64_t>(600'000 * Scale());
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> offs{0}, busy{0};
  std::vector<std::string> churn_errors;
  std::thread churn([&] {
    bool on = true;
    while (!stop.load(std::memory_order_acquire)) {
      if (on) {
        const Status st = sys.Swapoff(tc, {});
        if (st.ok()) {
          on = false;
          offs.fetch_add(1);
        } else if (st.code() == -EBUSY) {
          busy.fetch_add(1);
        } else if (churn_errors.size() < 10) {
          churn_errors.push_back("Swapoff: " + st.ToString());
        }
      } else {
        auto r = sys.Swapon(c);
        if (!r.ok()) {
          if (churn_errors.size() < 10) churn_errors.push_back("Swapon: " + r.status().ToString());
        } else {
          tc = *r;  // the lowest free record: the same one again
          on = true;
        }
      }
      std::this_thread::yield();
    }
    if (!on) {
      auto r = sys.Swapon(c);
      if (r.ok()) tc = *r;
    }
  });
  std::vector<std::thread> threads;
  for (auto& w : workers) {
    threads.emplace_back([&, wp = w.get()] {
      for (uint64_t i = 0; i < steps; ++i) wp->Step();
    });
  }
  for (auto& t : threads) t.join();
  stop.store(true, std::memory_order_release);
  churn.join();
  for (auto& w : workers) {
    for (const std::string& e : w->errors()) ADD_FAILURE() << "worker: " << e;
  }
  for (const std::string& e : churn_errors) ADD_FAILURE() << "churn: " << e;
  uint64_t on_churn = 0, calls = 0;
  for (auto& w : workers) {
    on_churn += w->placed_on(tc);
    calls += w->api_calls();
  }
  std::printf(
      "[ stats    ] swapoff: %lu succeeded, %lu busy; %lu folios placed on the churn "
      "device; %lu API calls\n",
      static_cast<unsigned long>(offs.load()), static_cast<unsigned long>(busy.load()),
      static_cast<unsigned long>(on_churn), static_cast<unsigned long>(calls));
  EXPECT_GT(on_churn, 0u) << "the churn device was never used";
  EXPECT_FALSE(sink.header.load());
  DrainAndCheck(sys, workers, nullptr, {ta, tb, tc});
}

}  // namespace
}  // namespace swaplab::alloc::stress
