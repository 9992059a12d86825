// SPDX-License-Identifier: MIT
// Generators that age a swap device the way the seeds' experiments did
// (design.md "workload/"): fill then free in shuffled order, holes, mTHP
// swap-out mixes, a usemem-like anonymous hammer, a build-like churn, and
// two equal-priority devices for the rotation of seed 004.
//
// Every generator drives the SwapSystem through a TraceRunner, so swap-out
// has the caller fallback of allocator spec §2.10 (split, swpout_fallback,
// order-0 pages) exactly as `swaplab replay` has it. Every random choice
// comes from the Workload's Rng, seeded by the caller.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/workload/trace_runner.h"

namespace swaplab::workload {

// alloc::SplitMix64Next as a type: one seeded generator, passed
// explicitly (conventions). The same seed gives the same sequence on every
// platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t Next();
  uint64_t Below(uint64_t n);  // uniform in [0, n), n > 0
  double Unit();               // uniform in [0, 1)
  uint64_t seed_state() const { return s_; }

 private:
  uint64_t s_;
};

// A permutation of 0..n-1 (Fisher-Yates with `rng`), n ≤ 2^32: 4 bytes an
// entry (a shuffled fill of a 16 TiB region would otherwise hold 8).
std::vector<uint32_t> ShuffledOrder(uint64_t n, Rng& rng);

// The folios a fill swapped out: consecutive ids (Workload::NewFolio), so
// kept as the first and the count rather than a list.
struct FolioIds {
  uint64_t first = 0, count = 0;
  uint64_t size() const { return count; }
  uint64_t operator[](uint64_t i) const { return first + i; }
  struct Iter {  // the ids in order
    uint64_t id;
    uint64_t operator*() const { return id; }
    Iter& operator++() {
      ++id;
      return *this;
    }
    bool operator==(const Iter&) const = default;
  };
  Iter begin() const { return {first}; }
  Iter end() const { return {first + count}; }
};

// One private anonymous "process": the folios a generator swapped out.
// Drives one TraceRunner; not thread-safe (one Workload per thread).
class Workload {
 public:
  Workload(alloc::SwapSystem& sys, uint64_t seed);
  alloc::SwapSystem& sys() { return sys_; }
  TraceRunner& runner() { return runner_; }
  Rng& rng() { return rng_; }
  uint64_t seed() const { return seed_; }
  // A folio id never used before in this workload.
  uint64_t NewFolio() { return next_folio_++; }
  // The trace operations (design.md semantics), errors named
  // "generator:N" with N the operation's number.
  Status Alloc(uint64_t folio, int order, int cpu);
  Status Free(uint64_t folio, uint64_t page, uint64_t n);
  Status FreeAll(uint64_t folio);
  Status DropCache(uint64_t folio);
  // The slot of one page of a folio; invalid when not in swap.
  alloc::SwapEntry SlotOf(uint64_t folio, uint64_t page) const;
  uint64_t ops() const { return line_; }

 private:
  Status Apply(TraceRecord& r);
  alloc::SwapSystem& sys_;
  TraceRunner runner_;
  Rng rng_;
  uint64_t seed_;
  uint64_t next_folio_ = 1;
  uint64_t line_ = 0;
};

// Folio sizes are given in pages (4 KiB each); the order is log2.
int OrderOfPages(uint64_t pages);  // -1 if not a power of two

// fill-free: swap out `region_pages` in folios of 2^order pages (page 0 of
// the region first; CPU i % cpus for folio i), drop them from the swap
// cache (writeback done), then free `free_share` of the folios, in shuffled
// order or in fill order. Seed 001's "5.4G of 2M tmpfs files swapped out,
// then all removed in random order".
struct FillFreeSpec {
  uint64_t region_pages = 0;
  int order = 0;
  double free_share = 1.0;
  bool shuffled = true;
  int cpus = 1;
};
struct FillFreeResult {
  FolioIds folios;              // fill order
  std::vector<uint32_t> freed;  // indices into folios, in free order
};
Result<FillFreeResult> FillFree(Workload& w, const FillFreeSpec& s);

// holes: swap out `region_pages` (folios of 2^order pages, one CPU),
// drop the cache, then free every other `hole_pages` of the region,
// starting with the second stretch: [h, 2h), [3h, 4h), ... Seed 001's "one
// 4G file swapped out, every other 64K of it freed". hole_pages must be a
// multiple of the folio size.
struct HolesSpec {
  uint64_t region_pages = 0;
  int order = 0;
  uint64_t hole_pages = 16;
  int cpus = 1;
};
struct HolesResult {
  FolioIds folios;  // fill order; region page p is in folio p >> order
  uint64_t freed_pages = 0;
};
Result<HolesResult> Holes(Workload& w, const HolesSpec& s);

// An mTHP size with a weight (sizes 4 KiB..2 MiB).
struct SizeWeight {
  uint64_t pages = 1;
  double weight = 1;
};
// Picks a size by weight.
uint64_t PickSize(const std::vector<SizeWeight>& mix, Rng& rng);

// mthp-mix: swap out `total_pages` in folios drawn from `mix` on CPUs
// round robin; each folio is written back (dropped from the swap cache).
// A size that cannot be placed falls back to order 0 (§2.10, counted in
// swpout_fallback) and the pages that find no slot stay in memory.
struct MthpSpec {
  uint64_t total_pages = 0;
  std::vector<SizeWeight> mix;
  int cpus = 1;
};
struct MthpResult {
  std::vector<uint64_t> folios;
};
Result<MthpResult> MthpMix(Workload& w, const MthpSpec& s);

// build-churn: `processes` short-lived processes, at most `concurrent`
// alive. Each swaps out between min_pages and max_pages (folios from
// `mix`, its own CPU), then zaps `partial_free_share` of its 4 KiB pages
// at random; the oldest exits (frees the rest) when a new one would exceed
// `concurrent` (or a random one, random_exit). Seed 003's "make -j96"
// under a memory limit, on swap.
struct ChurnSpec {
  uint64_t processes = 0;
  uint64_t concurrent = 1;
  uint64_t min_pages = 1, max_pages = 1;
  std::vector<SizeWeight> mix;
  double partial_free_share = 0.0;
  int cpus = 1;
  // Which process exits when one must: the oldest (a batch, make's jobs
  // finishing in order) or a random one (jobs of random length).
  bool random_exit = false;
  // At the end every process exits (a finished build); false leaves the
  // live ones swapped out (an aged device).
  bool exit_at_end = true;
  // Swap in use (all devices, in pages) the build keeps, 0 for no limit:
  // before each folio's swap-out, processes exit while more is in use. A
  // memcg-limited "make -j96" keeps about the same amount swapped out
  // whatever the device (what exceeds the memory limit), so one build is
  // near full on seed 003's 8G ZRAM and has room on its 10G one.
  uint64_t swapped_pages = 0;
  // Processes swapping out at the same time (at most `concurrent`). 1: each
  // process's pages go out in one piece, one process after the other.
  // More: reclaim takes
  // batch_pages from one of them at a time (picked at random), as the
  // kernel's LRU mixes the pages of every running job, so a cluster holds
  // pages of several processes and an exit leaves holes in it.
  uint64_t growing = 1;
  uint64_t batch_pages = 32;  // per turn when growing > 1 (SWAP_CLUSTER_MAX)
};
struct ChurnResult {
  uint64_t processes = 0;
  uint64_t pages_swapped = 0, pages_zapped = 0;
  // Turns of reclaim that swapped out another process than the turn before
  // (processes − 1 when they go out one after the other).
  uint64_t switches = 0;
};
Result<ChurnResult> BuildChurn(Workload& w, const ChurnSpec& s);

// usemem: like vm-scalability's usemem under a memory cgroup limit: each
// of `processes` touches its `pages_per_process` (in folios of 2^order
// pages) `passes` times, sequentially or at random; at most `limit_pages`
// are resident, the least recently faulted folio is swapped out (alloc +
// writeback) to make room, and a touch of a swapped-out folio swaps it in
// (its slots freed: exclusive swap-in). Every swap-out and swap-in is one
// allocator operation.
struct UsememSpec {
  uint64_t processes = 1;
  uint64_t pages_per_process = 0;
  int order = 0;
  bool random = true;
  uint64_t passes = 1;
  uint64_t limit_pages = 0;
  int cpu = 0;  // the CPU this hammer runs on
};
struct UsememResult {
  uint64_t swapouts = 0, swapins = 0, touches = 0;
};
Result<UsememResult> Usemem(Workload& w, const UsememSpec& s);

// rotation: `allocations` order-0 swap-outs on CPUs round robin over
// devices of equal priority; for each CPU, the stretches of consecutive
// allocations on one device. Seed 004: "the only behavior change is the
// swap device allocation rotation".
struct RotationResult {
  std::vector<uint64_t> per_device;  // allocations per device type
  double mean_stretch = 0;           // allocations per device switch, per CPU
  uint64_t switches = 0;
};
Result<RotationResult> Rotation(Workload& w, uint64_t allocations, int cpus);

// occupy: device `type` of `sys` (the only device) with exactly the slots
// of `in_use` taken, as far as the model can make it: order-0 swap-outs on
// CPU 0 take slots in the allocator's order until every slot of `in_use`
// is taken (clusters it never reaches stay as swapon left them, as on a
// machine whose allocator never went there), each folio leaving the swap
// cache with its page-table reference kept (reclaim of a clean, written
// folio); then every slot taken that is not in `in_use` is zapped in disk
// order (swap_put_entries_direct). Nothing in use: nothing is done.
// What a real area's allocator state is — which clusters its CPUs hold,
// the order of its lists — is not known from its used slots; this is the
// state closest to "these slots are taken" (docs/fidelity.md, "swaplab
// doctor"). `in_use` lists slots (any order, repeats allowed); slot 0 and
// slots past the device are ignored. Returns the slots left taken. Needs no
// TraceRunner: a few bits a slot, for areas of many GiB.
Result<uint64_t> OccupySlots(alloc::SwapSystem& sys, int type, const std::vector<uint64_t>& in_use);

// A real area rebuilt in the model: a one-CPU SwapSystem with `policy`,
// the area swapped on from its header (area::ModelSwaponOptions; slots are
// the area's pages, dblock = slot: its extents are left out), then
// OccupySlots with `in_use`. -EINVAL when the header is not one swapon
// takes. Shared by `swaplab map` of an area without an image and doctor's
// layout prediction.
struct ModelArea {
  std::unique_ptr<alloc::SwapSystem> sys;
  int type = -1;
  uint64_t pages = 0;  // the device's, header included
  uint64_t taken = 0;  // slots of in_use taken (OccupySlots)
};
Result<ModelArea> RebuildArea(const area::AreaInfo& info, const std::vector<uint64_t>& in_use,
                              const alloc::Policy& policy);

}  // namespace swaplab::workload
#pragma GCC visibility pop
