// SPDX-License-Identifier: MIT
// Benchmarks for the allocator issue's goals (docs/performance.md):
//   * an order-0 and an order-4 allocate + free pair on the per-CPU fast
//     path, in steady state (a ring of live folios on an SSD block device);
//   * filling a 12 GiB device at order 0 from one CPU;
//   * memory: an empty 1 TiB device per cluster, a filled device per slot
//     (mallinfo2() deltas, glibc);
//   * the order-0 pair under each policy preset, and with two CPUs;
//   * `swaplab replay`'s cost per record (BM_ReplayPerRecord), next to the
//     pair it is measured against, and its two halves: the trace reader
//     (BM_ReplayReader) and the runner with the allocator (BM_ReplayRunner),
//     and its floor: the same allocator calls alone (BM_ReplayCalls).
//
// Every folio operation runs under the folio lock, as the kernel's caller
// holds it (shrink_folio_list / __remove_mapping); the lock and unlock are
// inside the timed loop. BM_FolioLockUnlock times that lock alone.
//
// Run: bench/run_alloc_bench.sh OUT.json (repetitions, medians).
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "swaplab/alloc/swap_system.h"
#include "swaplab/workload/call_tape.h"
#include "swaplab/workload/replay.h"
#include "swaplab/workload/trace.h"
#include "swaplab/workload/trace_runner.h"

namespace {

using swaplab::Status;
using swaplab::alloc::CpuId;
using swaplab::alloc::Folio;
using swaplab::alloc::Policy;
using swaplab::alloc::SwapCounters;
using swaplab::alloc::SwaponOptions;
using swaplab::alloc::SwapSystem;
using swaplab::alloc::SystemOptions;

// Device sizes in pages (4 KiB), header page included.
constexpr uint64_t kPages4GiB = uint64_t{1} << 20;
constexpr uint64_t kPages12GiB = uint64_t{3} << 20;  // 3,145,728
constexpr uint64_t kPages1TiB = uint64_t{1} << 28;   // 268,435,456
// Live pages kept by the steady-state pair benchmarks: half a cluster, so
// the per-CPU cluster is never empty and never fills with live folios
// (order 0: 256 folios; order 4: 16 folios).
constexpr int kRingPages = 256;
// Pairs run before timing so the cluster has wrapped at least once.
constexpr int kWarmupPairs = 8192;
// The goals' policy: the tree the allocator spec describes.
constexpr const char* kGoalPreset = "mm-new";

// inline_work false: deferred work (the reclaim work a full device
// schedules) waits for RunDeferredWork(), as the kernel's workqueue runs it
// off the allocating CPU; the fills must not time it.
SystemOptions Options(const std::string& preset, int nr_cpus, bool inline_work = true) {
  SystemOptions o;
  o.nr_cpus = nr_cpus;
  o.run_deferred_work_inline = inline_work;
  auto p = Policy::Preset(preset);
  if (p.ok()) o.policy = *p;  // an unknown name is caught by the caller
  return o;
}

SwaponOptions SsdBlockDevice(const std::string& name, uint64_t pages) {
  SwaponOptions o;
  o.name = name;
  o.pages = pages;
  o.ssd = true;
  o.blkdev = true;
  return o;
}

// A SwapSystem with one SSD block device, or null after SkipWithError.
std::unique_ptr<SwapSystem> MakeSystem(benchmark::State& state, const std::string& preset,
                                       int nr_cpus, uint64_t pages, bool inline_work = true) {
  if (!Policy::Preset(preset).ok()) {
    state.SkipWithError(("unknown preset " + preset).c_str());
    return nullptr;
  }
  auto sys = std::make_unique<SwapSystem>(Options(preset, nr_cpus, inline_work));
  auto type = sys->Swapon(SsdBlockDevice("bench-ssd", pages));
  if (!type.ok()) {
    state.SkipWithError(type.status().ToString().c_str());
    return nullptr;
  }
  return sys;
}

// Heap bytes in use: small chunks plus mmap'd chunks (glibc).
uint64_t HeapInUse() {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

// Allocates swap for a locked folio: the caller side of folio_alloc_swap().
inline Status AllocLocked(SwapSystem& sys, CpuId cpu, Folio& f) {
  f.Lock();
  Status st = sys.FolioAllocSwap(cpu, f);
  f.Unlock();
  return st;
}

// Reclaim drops a folio whose slots have count 0: its slots are freed.
inline Status FreeLocked(SwapSystem& sys, Folio& f) {
  f.Lock();
  Status st = sys.SwapCacheDelFolio(f);
  f.Unlock();
  return st;
}

// A window of live folios in the swap cache. Each Cycle() frees the oldest
// and allocates it again as the newest, so the per-CPU cluster is never
// empty and the allocation front moves forward like a reclaim stream.
class FolioRing {
 public:
  FolioRing(int n, int order) : n_(n), folios_(new Folio[static_cast<size_t>(n)]) {
    for (int i = 0; i < n_; ++i) folios_[i].set_order(order);
  }

  Status Fill(SwapSystem& sys, CpuId cpu) {
    for (int i = 0; i < n_; ++i) {
      Status st = AllocLocked(sys, cpu, folios_[i]);
      if (!st.ok()) return st;
    }
    return Status::Ok();
  }

  // One free + one allocation: the pair the goals time.
  inline bool Cycle(SwapSystem& sys, CpuId cpu) {
    Folio& f = folios_[next_];
    next_ = next_ + 1 == n_ ? 0 : next_ + 1;
    const bool freed = FreeLocked(sys, f).ok();
    return AllocLocked(sys, cpu, f).ok() && freed;
  }

  // The same pair with every folio lock held for the whole run, as reclaim
  // holds it across its work on a folio: the allocator's own cost.
  void LockAll() {
    for (int i = 0; i < n_; ++i) folios_[i].Lock();
  }
  void UnlockAll() {
    for (int i = 0; i < n_; ++i) folios_[i].Unlock();
  }
  inline bool CycleHeld(SwapSystem& sys, CpuId cpu) {
    Folio& f = folios_[next_];
    next_ = next_ + 1 == n_ ? 0 : next_ + 1;
    const bool freed = sys.SwapCacheDelFolio(f).ok();
    return sys.FolioAllocSwap(cpu, f).ok() && freed;
  }

  void Drain(SwapSystem& sys) {
    for (int i = 0; i < n_; ++i) {
      if (folios_[i].in_swap_cache()) (void)FreeLocked(sys, folios_[i]);
    }
  }

 private:
  int n_;
  int next_ = 0;
  std::unique_ptr<Folio[]> folios_;
};

// Where the allocations of a timed loop were served (counter deltas), per
// folio allocation. hint and slow count slots, so with the slot cache they
// count its refills (64 slots each) rather than folio allocations.
struct Sources {
  double allocs = 0, fast = 0, hint = 0, slot_cache = 0, slow = 0;

  static Sources Between(const SwapCounters& a, const SwapCounters& b, double allocs) {
    Sources s;
    s.allocs = allocs;
    s.fast = static_cast<double>(b.fast_path_hits - a.fast_path_hits);
    s.hint = static_cast<double>(b.served_by_hint - a.served_by_hint);
    s.slot_cache = static_cast<double>(b.slot_cache_hits - a.slot_cache_hits);
    for (size_t i = 0; i < a.served_by_step.size(); ++i)
      s.slow += static_cast<double>(b.served_by_step[i] - a.served_by_step[i]);
    return s;
  }
  // Ratios of the allocations; `flags` lets threaded runs average them.
  void Report(benchmark::State& state,
              benchmark::Counter::Flags flags = benchmark::Counter::kDefaults) const {
    if (allocs == 0) return;
    state.counters["fast_path_hit_ratio"] = benchmark::Counter(fast / allocs, flags);
    state.counters["hint_ratio"] = benchmark::Counter(hint / allocs, flags);
    state.counters["slot_cache_ratio"] = benchmark::Counter(slot_cache / allocs, flags);
    state.counters["slow_path_ratio"] = benchmark::Counter(slow / allocs, flags);
  }
};

// The steady-state pair on one CPU: free the oldest folio, allocate one;
// `live` folios stay in the swap cache.
// held: every folio lock is held by the caller for the whole run (as
// reclaim holds it across its work on a folio), so only the allocator's own
// cost is timed; otherwise each call takes and drops it.
void RunPair(benchmark::State& state, const std::string& preset, int order, int live,
             bool held = false) {
  auto sys = MakeSystem(state, preset, /*nr_cpus=*/2, kPages4GiB);
  if (!sys) return;
  constexpr CpuId kCpu = 0;
  FolioRing ring(live, order);
  if (Status st = ring.Fill(*sys, kCpu); !st.ok()) {
    state.SkipWithError(st.ToString().c_str());
    return;
  }
  if (held) ring.LockAll();
  auto cycle = [&] { return held ? ring.CycleHeld(*sys, kCpu) : ring.Cycle(*sys, kCpu); };
  for (int i = 0; i < kWarmupPairs; ++i) {
    if (!cycle()) {
      state.SkipWithError("warm-up pair failed");
      return;
    }
  }
  const SwapCounters before = sys->counters();
  for (auto _ : state) {
    if (!cycle()) {
      state.SkipWithError("free + allocate pair failed");
      break;
    }
  }
  const SwapCounters after = sys->counters();
  Sources::Between(before, after, static_cast<double>(state.iterations())).Report(state);
  state.SetItemsProcessed(state.iterations());
  if (held) ring.UnlockAll();
  ring.Drain(*sys);
}

void BM_Order0PairHeld(benchmark::State& state) {
  RunPair(state, kGoalPreset, 0, static_cast<int>(state.range(0)), /*held=*/true);
}
BENCHMARK(BM_Order0PairHeld)->Arg(kRingPages);
void BM_Order4PairHeld(benchmark::State& state) {
  RunPair(state, kGoalPreset, 4, static_cast<int>(state.range(0)), /*held=*/true);
}
BENCHMARK(BM_Order4PairHeld)->Arg(kRingPages >> 4);

// Argument: live folios (the goal figures use kRingPages pages).
void BM_Order0Pair(benchmark::State& state) {
  RunPair(state, kGoalPreset, 0, static_cast<int>(state.range(0)));
}
BENCHMARK(BM_Order0Pair)->Arg(kRingPages);

// 16 folios = 256 pages. Avoid a window that is an exact number of
// clusters (e.g. 256 order-4 folios = 8 clusters): then every free leaves
// the only hole of a full cluster, the nonfull-first search refills it
// through the slow path, the cluster is full again, the hint is cleared,
// and the fast path never hits (docs/performance.md).
void BM_Order4Pair(benchmark::State& state) {
  RunPair(state, kGoalPreset, 4, static_cast<int>(state.range(0)));
}
BENCHMARK(BM_Order4Pair)->Arg(kRingPages >> 4);

// The preset comparison; registered in main() from Policy::PresetNames().
void BM_Order0PairPreset(benchmark::State& state, const std::string& preset) {
  RunPair(state, preset, 0, kRingPages);
}

// The folio lock + unlock alone, as a floor: each pair takes it twice.
void BM_FolioLockUnlock(benchmark::State& state) {
  Folio f;
  for (auto _ : state) {
    f.Lock();
    benchmark::ClobberMemory();
    f.Unlock();
  }
}
BENCHMARK(BM_FolioLockUnlock);

// --- two CPUs, one thread each -------------------------------------------

// The system both threads share: the first thread in creates it, the last
// one out destroys it (threads start their timed loops together).
struct SharedSystem {
  std::mutex mu;
  int users = 0;
  std::unique_ptr<SwapSystem> sys;

  SwapSystem* Acquire(int nr_cpus) {
    std::lock_guard g(mu);
    if (users++ == 0) {
      sys = std::make_unique<SwapSystem>(Options(kGoalPreset, nr_cpus));
      if (!sys->Swapon(SsdBlockDevice("bench-ssd", kPages4GiB)).ok()) sys.reset();
    }
    return sys.get();
  }
  void Release() {
    std::lock_guard g(mu);
    if (--users == 0) sys.reset();
  }
};
SharedSystem g_shared;

void BM_Order0PairThreads(benchmark::State& state) {
  const int threads = state.threads();
  SwapSystem* sys = g_shared.Acquire(threads);
  const CpuId cpu = state.thread_index();
  FolioRing ring(kRingPages, 0);
  bool ok = sys != nullptr && ring.Fill(*sys, cpu).ok();
  for (int i = 0; ok && i < kWarmupPairs; ++i) ok = ring.Cycle(*sys, cpu);
  const SwapCounters before = ok ? sys->counters() : SwapCounters{};
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (!ok || !ring.Cycle(*sys, cpu)) {
      state.SkipWithError("setup or free + allocate pair failed");
      ok = false;
      break;
    }
  }
  const auto t1 = std::chrono::steady_clock::now();
  if (ok) {
    const SwapCounters after = sys->counters();
    // Counter deltas are system-wide; every thread reports them, averaged.
    Sources::Between(before, after, static_cast<double>(state.iterations()) * threads)
        .Report(state, benchmark::Counter::kAvgThreads);
    const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    state.counters["ns_per_pair_per_thread"] = benchmark::Counter(
        ns / static_cast<double>(state.iterations()), benchmark::Counter::kAvgThreads);
    state.SetItemsProcessed(state.iterations());
  }
  if (sys) ring.Drain(*sys);
  g_shared.Release();
}
BENCHMARK(BM_Order0PairThreads)->Threads(2)->UseRealTime();

// --- filling a device ------------------------------------------------------

// Folio objects reused across fills: constructed once, reset outside timing.
class FolioPool {
 public:
  explicit FolioPool(uint64_t n) : n_(n), folios_(new Folio[n]) {}
  uint64_t size() const { return n_; }
  Folio& operator[](uint64_t i) { return folios_[i]; }
  // Re-constructs every folio in place: order 0, out of the swap cache.
  void Reset() {
    static_assert(std::is_trivially_destructible_v<Folio>);
    for (uint64_t i = 0; i < n_; ++i) std::construct_at(&folios_[i], 0);
  }

 private:
  uint64_t n_;
  std::unique_ptr<Folio[]> folios_;
};

// Fills every usable slot at order 0 from CPU 0; false on any failure.
bool FillDevice(SwapSystem& sys, FolioPool& pool) {
  bool ok = true;
  for (uint64_t i = 0; i < pool.size(); ++i) ok &= AllocLocked(sys, 0, pool[i]).ok();
  return ok && sys.nr_swap_pages() == 0;
}

void BM_Fill12GiB(benchmark::State& state) {
  FolioPool pool(kPages12GiB - 1);  // every page but the header
  double fast = 0, allocs = 0;
  for (auto _ : state) {
    pool.Reset();
    auto sys = MakeSystem(state, kGoalPreset, /*nr_cpus=*/2, kPages12GiB, /*inline_work=*/false);
    if (!sys) break;
    const auto t0 = std::chrono::steady_clock::now();
    const bool ok = FillDevice(*sys, pool);
    const auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    if (!ok) {
      state.SkipWithError("the fill did not place every page");
      break;
    }
    fast += static_cast<double>(sys->counters().fast_path_hits);
    allocs += static_cast<double>(pool.size());
    sys.reset();  // outside timing; the folios are reset before the next fill
  }
  if (allocs > 0) state.counters["fast_path_hit_ratio"] = fast / allocs;
  state.counters["pages"] = static_cast<double>(pool.size());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * pool.size()));
}
BENCHMARK(BM_Fill12GiB)->UseManualTime()->Iterations(3)->Unit(benchmark::kMillisecond);

// --- memory ----------------------------------------------------------------

// An empty 1 TiB device: what swapon allocates, per cluster. Time: swapon.
void BM_MemEmpty1TiB(benchmark::State& state) {
  double per_cluster = 0, clusters = 0, bytes = 0;
  for (auto _ : state) {
    SwapSystem sys(Options(kGoalPreset, 2));
    const uint64_t before = HeapInUse();
    auto type = sys.Swapon(SsdBlockDevice("bench-1tib", kPages1TiB));
    const uint64_t after = HeapInUse();
    if (!type.ok()) {
      state.SkipWithError(type.status().ToString().c_str());
      break;
    }
    clusters = static_cast<double>(sys.Device(*type)->nr_clusters);
    bytes = static_cast<double>(after - before);
    per_cluster = bytes / clusters;
  }
  state.counters["clusters"] = clusters;
  state.counters["heap_bytes"] = bytes;
  state.counters["bytes_per_cluster"] = per_cluster;
}
BENCHMARK(BM_MemEmpty1TiB)->Iterations(1)->Unit(benchmark::kMillisecond);

// A 4 GiB device filled at order 0: every cluster holds a table.
//   empty_bytes_per_cluster: swapon's cost (records; cluster 0's table)
//   table_bytes_per_slot:    what the fill added, per slot of the clusters
//                            that gained a table (all but cluster 0)
//   total_bytes_per_slot:    everything, per slot of the device
//   budget_ratio:            total / (8 B × slots + 64 B × clusters)
void BM_MemFilled4GiB(benchmark::State& state) {
  FolioPool pool(kPages4GiB - 1);
  double empty_per_cluster = 0, table_per_slot = 0, total_per_slot = 0, budget = 0;
  for (auto _ : state) {
    pool.Reset();
    SwapSystem sys(Options(kGoalPreset, 2, /*inline_work=*/false));
    const uint64_t h0 = HeapInUse();
    auto type = sys.Swapon(SsdBlockDevice("bench-4gib", kPages4GiB));
    const uint64_t h1 = HeapInUse();
    const bool ok = type.ok() && FillDevice(sys, pool);
    const uint64_t h2 = HeapInUse();
    if (!ok) {
      state.SkipWithError("swapon or fill failed");
      break;
    }
    const double clusters = static_cast<double>(sys.Device(*type)->nr_clusters);
    const double slots = clusters * sys.cluster_size();
    empty_per_cluster = static_cast<double>(h1 - h0) / clusters;
    table_per_slot = static_cast<double>(h2 - h1) / (slots - sys.cluster_size());
    total_per_slot = static_cast<double>(h2 - h0) / slots;
    budget = static_cast<double>(h2 - h0) / (8 * slots + 64 * clusters);
  }
  state.counters["empty_bytes_per_cluster"] = empty_per_cluster;
  state.counters["table_bytes_per_slot"] = table_per_slot;
  state.counters["total_bytes_per_slot"] = total_per_slot;
  state.counters["budget_ratio"] = budget;
}
BENCHMARK(BM_MemFilled4GiB)->Iterations(1)->Unit(benchmark::kMillisecond);

// --- replay per record ------------------------------------------------------

// `swaplab replay`'s code path (workload::Replay: the TraceReader on a file
// and the TraceRunner) on a trace written once to a temporary file, timed
// per record: the goal is at most 2x BM_Order0PairHeld per record.
// The generated trace mixes like bench/make_replay_trace.py: one 1 GiB SSD
// device kept 40 % full by folios of order 0 (70 %) and 2, 3, 4; whole and
// one-page frees, one-page swap-ins, per-folio cache drops, and a global
// drop-cache every 20,000 records. SWAPLAB_REPLAY_TRACES (paths separated by
// ':') adds one benchmark per trace file (BM_ReplayPerRecord/<file>).
constexpr uint64_t kReplayRecords = 200'000;

std::string WriteReplayTrace(uint64_t records) {
  char path[] = "/tmp/swaplab-replay-bench-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return {};
  FILE* out = fdopen(fd, "w");
  constexpr uint64_t kPages = 262144;
  const uint64_t target = (kPages - 1) * 4 / 10;
  std::mt19937_64 rnd(1);
  auto below = [&](uint64_t n) { return static_cast<uint64_t>(rnd() % n); };
  std::vector<uint64_t> live;
  std::vector<int> order_of;  // by folio id
  uint64_t used = 0;
  std::fprintf(out, "swaplab-trace 1\nswapon dev=0 pages=%llu\n",
               static_cast<unsigned long long>(kPages));
  static constexpr int kOrders[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 3, 4, 4};
  for (uint64_t n = 1; n < records; ++n) {
    if (n % 20000 == 0) {
      std::fputs("drop-cache\n", out);
    } else if (used < target || live.empty()) {
      const int order = kOrders[below(std::size(kOrders))];
      std::fprintf(out, "alloc folio=%zu order=%d cpu=%d\n", order_of.size(), order,
                   static_cast<int>(below(4)));
      live.push_back(order_of.size());
      order_of.push_back(order);
      used += uint64_t{1} << order;
    } else {
      const uint64_t r = below(100);
      const size_t i = below(live.size());
      const uint64_t f = live[i];
      const uint64_t pages = uint64_t{1} << order_of[f];
      if (r < 75) {
        live[i] = live.back();
        live.pop_back();
        used -= pages;
        std::fprintf(out, "free folio=%llu\n", static_cast<unsigned long long>(f));
      } else if (r < 80 && pages > 1) {
        // Not the last page: a folio stays live until freed whole.
        std::fprintf(out, "free folio=%llu page=%llu n=1\n", static_cast<unsigned long long>(f),
                     static_cast<unsigned long long>(below(pages - 1)));
      } else if (r < 93) {
        std::fprintf(out, "cache folio=%llu page=%llu n=1\n", static_cast<unsigned long long>(f),
                     static_cast<unsigned long long>(below(pages)));
      } else {
        std::fprintf(out, "drop-cache folio=%llu\n", static_cast<unsigned long long>(f));
      }
    }
  }
  std::fclose(out);
  return path;
}

// A binary copy of `trace` (docs/formats.md §5.1) beside it in /tmp, or ""
// when it cannot be made. The caller removes it.
std::string WriteBinaryCopy(const std::string& trace) {
  auto reader = swaplab::workload::TraceReader::Open(trace);
  if (!reader.ok()) return {};
  char path[] = "/tmp/swaplab-replay-bench-bin-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return {};
  std::string out = swaplab::workload::BinaryTraceHeader();
  swaplab::workload::TraceRecord rec;
  for (;;) {
    auto more = (*reader)->Next(&rec);
    if (!more.ok() || !*more) break;
    swaplab::workload::AppendBinaryRecord(rec, &out);
  }
  const bool ok = write(fd, out.data(), out.size()) == static_cast<ssize_t>(out.size());
  close(fd);
  if (!ok) {
    std::remove(path);
    return {};
  }
  return path;
}

void BM_ReplayPerRecord(benchmark::State& state, const std::string& trace) {
  swaplab::workload::ReplayOptions o;
  o.trace = trace;
  o.policy = Policy::Preset(swaplab::alloc::kDefaultPreset).value();  // replay's default
  uint64_t records = 0;
  for (auto _ : state) {
    auto res = swaplab::workload::Replay(o);
    if (!res.ok()) {
      state.SkipWithError(res.status().ToString().c_str());
      return;
    }
    records = res->summary.records;
    benchmark::DoNotOptimize(res->counters);
  }
  state.SetItemsProcessed(static_cast<int64_t>(records * state.iterations()));
  state.counters["records"] = static_cast<double>(records);
  // Seconds per record (the report prints it in ns with the default unit).
  state.counters["per_record"] =
      benchmark::Counter(static_cast<double>(records * state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// The two halves of BM_ReplayPerRecord, per record, to show where a
// replay's time goes against the pair:
// BM_ReplayReader/<trace>: the TraceReader alone (open, every record read).
// BM_ReplayRunner/<trace>: the TraceRunner and the allocator alone, on the
// trace's records read into memory once before timing (a fresh SwapSystem
// with Replay's options per iteration, as Replay makes one).
void ReportPerRecord(benchmark::State& state, uint64_t records) {
  state.SetItemsProcessed(static_cast<int64_t>(records * state.iterations()));
  state.counters["records"] = static_cast<double>(records);
  state.counters["per_record"] =
      benchmark::Counter(static_cast<double>(records * state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_ReplayReader(benchmark::State& state, const std::string& trace) {
  uint64_t records = 0;
  for (auto _ : state) {
    auto reader = swaplab::workload::TraceReader::Open(trace);
    if (!reader.ok()) {
      state.SkipWithError(reader.status().ToString().c_str());
      return;
    }
    records = 0;
    swaplab::workload::TraceRecord rec;
    for (;;) {
      auto more = (*reader)->Next(&rec);
      if (!more.ok()) {
        state.SkipWithError(more.status().ToString().c_str());
        return;
      }
      if (!*more) break;
      benchmark::DoNotOptimize(rec);
      ++records;
    }
  }
  ReportPerRecord(state, records);
}

// The trace's records, read into memory (empty after SkipWithError).
std::vector<swaplab::workload::TraceRecord> ReadRecords(benchmark::State& state,
                                                        const std::string& trace) {
  std::vector<swaplab::workload::TraceRecord> recs;
  auto reader = swaplab::workload::TraceReader::Open(trace);
  if (!reader.ok()) {
    state.SkipWithError(reader.status().ToString().c_str());
    return {};
  }
  for (swaplab::workload::TraceRecord rec;;) {
    auto more = (*reader)->Next(&rec);
    if (!more.ok()) {
      state.SkipWithError(more.status().ToString().c_str());
      return {};
    }
    if (!*more) break;
    recs.push_back(rec);
  }
  return recs;
}

// The system Replay makes with its default options for these records:
// the CPUs of a leading `cpus` record, else Replay's default.
SystemOptions ReplaySystemOptions(const std::vector<swaplab::workload::TraceRecord>& recs) {
  using swaplab::workload::TraceOp;
  swaplab::workload::ReplayOptions o;
  SystemOptions so;
  so.policy = Policy::Preset(swaplab::alloc::kDefaultPreset).value();
  so.nr_cpus = !recs.empty() && recs[0].op == TraceOp::kCpus && recs[0].n
                   ? static_cast<int>(*recs[0].n)
                   : swaplab::workload::kDefaultReplayCpus;
  so.cluster_shift = o.cluster_shift;
  return so;
}

// Applies every record to a TraceRunner on `sys` (recording into *tape
// when given); false after SkipWithError.
bool RunRecords(benchmark::State& state, SwapSystem& sys,
                const std::vector<swaplab::workload::TraceRecord>& recs, const std::string& trace,
                swaplab::workload::CallTape* tape = nullptr) {
  swaplab::workload::TraceRunner runner(sys);
  runner.set_tape(tape);
  for (const auto& rec : recs) {
    if (Status st = runner.Apply(rec, trace); !st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return false;
    }
  }
  return true;
}

void BM_ReplayRunner(benchmark::State& state, const std::string& trace) {
  const auto recs = ReadRecords(state, trace);
  if (recs.empty()) return;
  const SystemOptions so = ReplaySystemOptions(recs);
  for (auto _ : state) {
    SwapSystem sys(so);
    if (!RunRecords(state, sys, recs, trace)) return;
    benchmark::DoNotOptimize(sys.counters());
  }
  ReportPerRecord(state, recs.size());
}

// BM_ReplayCalls/<trace>: the replay's floor — the allocator calls the
// runner made on the trace (a CallTape recorded before timing, then
// checked call by call on a fresh system), made again on a fresh system
// per iteration: no reader, no runner. Per record of the trace.
void BM_ReplayCalls(benchmark::State& state, const std::string& trace) {
  const auto recs = ReadRecords(state, trace);
  if (recs.empty()) return;
  const SystemOptions so = ReplaySystemOptions(recs);
  swaplab::workload::CallTape tape;
  {
    SwapSystem sys(so);
    if (!RunRecords(state, sys, recs, trace, &tape)) return;
  }
  {
    SwapSystem sys(so);
    if (Status st = swaplab::workload::CallReplay(tape, sys).Run(); !st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
  }
  for (auto _ : state) {
    SwapSystem sys(so);
    swaplab::workload::CallReplay replay(tape, sys);
    if (Status st = replay.Run(/*check=*/false); !st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(sys.counters());
  }
  ReportPerRecord(state, recs.size());
  state.counters["calls"] = static_cast<double>(tape.calls().size());
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  for (const std::string& name : Policy::PresetNames()) {
    benchmark::RegisterBenchmark(("BM_Order0PairPreset/" + name).c_str(), BM_Order0PairPreset,
                                 name);
  }
  // Each trace text and binary: BM_Replay*/<name> and BM_Replay*/<name>.bin
  // (the runner's records are the same, so it runs on the text only).
  std::vector<std::string> binaries;
  auto register_trace = [&binaries](const std::string& name, const std::string& path) {
    benchmark::RegisterBenchmark(("BM_ReplayPerRecord/" + name).c_str(), BM_ReplayPerRecord, path)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_ReplayReader/" + name).c_str(), BM_ReplayReader, path)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_ReplayRunner/" + name).c_str(), BM_ReplayRunner, path)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_ReplayCalls/" + name).c_str(), BM_ReplayCalls, path)
        ->Unit(benchmark::kMillisecond);
    const std::string bin = WriteBinaryCopy(path);
    if (bin.empty()) return;
    binaries.push_back(bin);
    benchmark::RegisterBenchmark(("BM_ReplayPerRecord/" + name + ".bin").c_str(),
                                 BM_ReplayPerRecord, bin)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_ReplayReader/" + name + ".bin").c_str(), BM_ReplayReader, bin)
        ->Unit(benchmark::kMillisecond);
  };
  static const std::string generated = WriteReplayTrace(kReplayRecords);
  if (!generated.empty()) register_trace("generated", generated);
  if (const char* list = std::getenv("SWAPLAB_REPLAY_TRACES")) {
    std::string_view rest(list);
    while (!rest.empty()) {
      const std::string path(rest.substr(0, rest.find(':')));
      rest.remove_prefix(std::min(rest.size(), path.size() + 1));
      if (path.empty()) continue;
      register_trace(path.substr(path.rfind('/') + 1), path);
    }
  }
  // Echo the configuration at the top of the report (conventions: options).
  benchmark::AddCustomContext("swaplab.goal_policy", Options(kGoalPreset, 2).policy.Describe());
  benchmark::AddCustomContext("swaplab.ring_pages", std::to_string(kRingPages));
  benchmark::AddCustomContext("swaplab.pair_device_pages", std::to_string(kPages4GiB));
  benchmark::AddCustomContext("swaplab.cluster_size", std::to_string(SwapSystem().cluster_size()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!generated.empty()) std::remove(generated.c_str());
  for (const auto& bin : binaries) std::remove(bin.c_str());
  return 0;
}
