// SPDX-License-Identifier: MIT
// SwapSystem: every swap device, ordered by priority, with the per-CPU
// cluster hints and the entry points of mm/swapfile.c — allocate, dup, put,
// swap cache add / drop, reclaim, swapon, swapoff, hibernation hooks.
//
// Behaviour: ../shared/spec/allocator.md (cited as §). Thread safety: each
// CpuId is driven by at most one thread at a time; everything else is safe
// to call from any thread (locks as in §9). Driven by one thread, results
// are deterministic.
#pragma once
#pragma GCC visibility push(default)

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "swaplab/alloc/folio.h"
#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/status.h"
#include "swaplab/alloc/types.h"

namespace swaplab::alloc {

// Receives the discards the allocator issues (§3.6). The area layer turns
// a slot range into device blocks through its extent map.
class DiscardSink {
 public:
  virtual ~DiscardSink() = default;
  // Discard slots [first, first + nr) of device `type`. Never slot 0.
  virtual void Discard(int type, uint64_t first, uint64_t nr) = 0;
};

// One extent of the slot → disk block map (kernel: struct swap_extent).
struct SwapExtent {
  uint64_t start_page = 0;
  uint64_t nr_pages = 0;
  uint64_t start_block = 0;
};

struct SwaponOptions {
  // Identity shown as /proc/swaps Filename; two active devices may not
  // share it (swapon of the same area twice is -EBUSY).
  std::string name;
  // Whole area in pages, header included: last_page + 1 (§5.1 step 3).
  uint64_t pages = 0;
  // Bad pages from the header, each in [1, pages - 1].
  std::vector<uint64_t> bad_pages;
  bool ssd = true;     // non-rotational: per-CPU fast path
  bool blkdev = true;  // a block device: may hold large folios (O3)
  DiscardMode discard = DiscardMode::kNone;
  bool discard_supported = true;  // the device accepts discard
  std::optional<int> prio;        // 0..kMaxSwapPrio, or default
  // Block device the area is on, and the block of slot 0 (hibernation
  // lookups, §6). With no extents, slot s is block first_block + s.
  uint64_t bdev = 0;
  uint64_t first_block = 0;
  std::vector<SwapExtent> extents;
  DiscardSink* discard_sink = nullptr;  // not owned
  // hibernate=reserve[:SIZE] (seed 001 patches 9-10, hibernation spec
  // §9.7): pages to hold back for the image at swapon, 0 for none.
  uint64_t hibernation_reserve_pages = 0;
};

struct SystemOptions {
  int cluster_shift = kDefaultClusterShift;  // CLUSTER = 2^cluster_shift
  int nr_cpus = 4;
  Policy policy{};
  // Appendix A: deferred work (discard work, reclaim work) runs at a
  // defined point. true: at the end of the public call that scheduled it.
  // false: only when the caller calls RunDeferredWork().
  bool run_deferred_work_inline = true;
  // Largest device the architecture allows, in pages (§5.1 step 3).
  uint64_t max_swapfile_pages = uint64_t{1} << 32;
  // Fault injection: extend-table allocations fail, so a dup past the
  // inline count returns -ENOMEM (§3.2 "without memory").
  bool fail_extend_table_alloc = false;
  // Policy ssd_swap_map_scan (6.1): the seed of each SSD's random scan
  // bases (the per-CPU cluster_next_cpu drawn at swapon and by
  // set_cluster_next()'s jumps); a device's generator is this seed mixed
  // with its type, so a run is deterministic. SetScanBase overrides a draw.
  uint64_t scan_base_seed = 0;
};

// Every counter, one table (§7): each row declares a field of SwapCounters
// and the same rows give counters() its aggregation, ForEachCounter its
// names and docs (reports, the tests' monotonic check and model), so a
// counter cannot be added to one and forgotten in another. Names are the
// kernel's where one exists.
//   COUNTER(name, shape, home, kind, summary, doc)
// shape   kScalar, kPerOrder (one per folio order, kMaxOrders), kPerStep
//         (one per SearchStep, kNumSearchSteps)
// home    CPU: a CPU's own copy, written under its local lock and summed
//         over the CPUs; SYS: one atomic for the system
// kind    kCounter never decreases; kGauge may
// summary kSummary: in the short reports (replay's "counters"); kDetail: not
// Where slots came from: each step counts what it served (conventions).
#define SWAPLAB_COUNTERS(COUNTER)                                                                  \
  COUNTER(pswpout, kScalar, SYS, kCounter, kSummary, "pages written to swap (vmstat pswpout)")     \
  COUNTER(swpout, kPerOrder, SYS, kCounter, kSummary,                                              \
          "folios of each order swapped out in one piece (mTHP stats/swpout)")                     \
  COUNTER(swpout_fallback, kPerOrder, SYS, kCounter, kSummary,                                     \
          "large folios of each order split because no slots were found (stats/swpout_fallback)")  \
  COUNTER(thp_swpout, kScalar, SYS, kCounter, kSummary,                                            \
          "PMD-order folios swapped out in one piece")                                             \
  COUNTER(thp_swpout_fallback, kScalar, SYS, kCounter, kSummary,                                   \
          "PMD-order folios split (vmstat)")                                                       \
  COUNTER(fast_path_hits, kScalar, CPU, kCounter, kSummary, "slots served by the per-CPU cluster") \
  COUNTER(fast_path_misses, kScalar, CPU, kCounter, kDetail, "fast path tried and fell through")   \
  COUNTER(served_by_hint, kScalar, CPU, kCounter, kDetail,                                         \
          "served by the per-device hint/seq_next")                                                \
  COUNTER(served_by_step, kPerStep, CPU, kCounter, kDetail, "served by each device search step")   \
  COUNTER(slot_cache_hits, kScalar, CPU, kCounter, kDetail, "§10.1: served by the slot cache")     \
  COUNTER(slot_cache_refills, kScalar, CPU, kCounter, kDetail, "§10.1: slot cache refills")        \
  COUNTER(alloc_failures, kScalar, CPU, kCounter, kDetail, "folio_alloc_swap returned -ENOMEM")    \
  COUNTER(sync_discard_retries, kScalar, SYS, kCounter, kDetail,                                   \
          "§2.9: order-0 retries after running pending discards")                                  \
  COUNTER(clusters_discarded, kScalar, SYS, kCounter, kDetail,                                     \
          "clusters the discard work discarded")                                                   \
  COUNTER(folios_reclaimed, kScalar, SYS, kCounter, kDetail, "swap cache folios freed by reclaim")

enum class CounterShape : uint8_t { kScalar, kPerOrder, kPerStep };
enum class CounterKind : uint8_t { kCounter, kGauge };
enum class CounterSummary : uint8_t { kSummary, kDetail };

constexpr size_t CounterSize(CounterShape shape) {
  return shape == CounterShape::kScalar     ? 1
         : shape == CounterShape::kPerOrder ? kMaxOrders
                                            : kNumSearchSteps;
}
// A field of SwapCounters: one value, or one per order / search step.
template <CounterShape S>
using CounterField =
    std::conditional_t<S == CounterShape::kScalar, uint64_t, std::array<uint64_t, CounterSize(S)>>;

// One row of the table.
struct CounterInfo {
  std::string_view name;
  CounterShape shape;
  CounterKind kind;
  CounterSummary summary;
  std::string_view doc;
};

inline constexpr CounterInfo kCounterTable[] = {
#define SWAPLAB_COUNTER_INFO(n, shape, home, kind, summary, doc) \
  {#n, CounterShape::shape, CounterKind::kind, CounterSummary::summary, doc},
    SWAPLAB_COUNTERS(SWAPLAB_COUNTER_INFO)
#undef SWAPLAB_COUNTER_INFO
};

struct SwapCounters {
#define SWAPLAB_COUNTER_FIELD(n, shape, home, kind, summary, doc) \
  CounterField<CounterShape::shape> n{};
  SWAPLAB_COUNTERS(SWAPLAB_COUNTER_FIELD)
#undef SWAPLAB_COUNTER_FIELD
};

inline std::span<const uint64_t> CounterSpan(const uint64_t& v) { return {&v, 1}; }
template <size_t N>
std::span<const uint64_t> CounterSpan(const std::array<uint64_t, N>& v) {
  return v;
}

// fn(const CounterInfo&, std::span<const uint64_t> values) for every row in
// table order: one value for a scalar, kMaxOrders or kNumSearchSteps else.
template <typename Fn>
void ForEachCounter(const SwapCounters& c, Fn&& fn) {
  const CounterInfo* info = kCounterTable;
#define SWAPLAB_COUNTER_VISIT(n, shape, home, kind, summary, doc) fn(*info++, CounterSpan(c.n));
  SWAPLAB_COUNTERS(SWAPLAB_COUNTER_VISIT)
#undef SWAPLAB_COUNTER_VISIT
}

struct DeviceInfo {
  int type = -1;
  std::string name;
  uint64_t max = 0;    // number of offsets
  uint64_t pages = 0;  // usable slots
  uint64_t inuse = 0;  // without the off-list bit
  int prio = 0;
  bool ssd = false, blkdev = false, writeok = false, on_avail_list = false;
  bool page_discard = false, area_discard = false, hibernation_pinned = false;
  uint64_t nr_clusters = 0;
  // Number of clusters per list: free, nonfull (all orders), frag (all
  // orders), full, discard; and off every list (transient).
  uint64_t free_clusters = 0, nonfull_clusters = 0, frag_clusters = 0;
  uint64_t full_clusters = 0, discard_clusters = 0, isolated_clusters = 0;
};

struct ClusterInfo {
  ClusterFlag flag = ClusterFlag::kNone;
  int order = 0;
  uint32_t count = 0;
  bool has_table = false;
  bool has_extend_table = false;
};

struct SlotInfo {
  SlotKind kind = SlotKind::kEmpty;
  uint32_t count = 0;            // real count, extend table included
  const Folio* folio = nullptr;  // kCached only; null = held by the slot cache
};

struct PerCpuHint {
  int type = -1;  // -1: none
  uint64_t offset = 0;
};

// What CheckInvariants() found: the §8 id ("C2") and where.
struct InvariantReport {
  std::string id;
  std::string where;
  bool ok() const { return id.empty(); }
  std::string ToString() const { return ok() ? "ok" : id + ": " + where; }
};

// §4.2 flags. kReclaimDirect (TTRS_DIRECT): the freed slots bypass the
// slot cache's return buffer (policy slot_cache_return; no effect without).
enum ReclaimFlags : unsigned {
  kReclaimAnyway = 1,
  kReclaimUnmapped = 2,
  kReclaimFull = 4,
  kReclaimDirect = 8
};

// What SwapOutFolio did (§2.10).
struct SwapOutResult {
  bool split = false;  // the large folio fell back to order 0
  int pages_placed = 0;
};

class SwapSystem {
 public:
  // Checks cluster_shift (1..15), nr_cpus (1..1024) and the policy.
  static Status ValidateOptions(const SystemOptions& options);
  // Aborts with a message on options that ValidateOptions refuses.
  explicit SwapSystem(SystemOptions options = {});
  ~SwapSystem();
  SwapSystem(const SwapSystem&) = delete;
  SwapSystem& operator=(const SwapSystem&) = delete;

  const SystemOptions& options() const;
  const Policy& policy() const;
  uint32_t cluster_size() const;

  // --- swapon / swapoff (§5) -----------------------------------------
  // Returns the device type. Errors: -EINVAL (bad size, bad page out of
  // range or duplicated, bad priority), -EBUSY (same name active, or its
  // blocks overlap an active area on the same bdev),
  // -EPERM (no free device record).
  Result<int> Swapon(const SwaponOptions& opts);
  // Called by Swapoff for each slot still referenced (kernel: try_to_unuse):
  // the owner must bring the page back and drop its references (put /
  // SwapPutEntriesDirect / cache drop). May be empty.
  using UnuseFn = std::function<void(SwapEntry)>;
  // Errors: -EINVAL (unknown device), -EBUSY (pinned for hibernation, or
  // slots still referenced after unuse; the device is then re-enabled).
  Status Swapoff(int type, const UnuseFn& unuse = {});

  // --- allocation (§2) -------------------------------------------------
  // Mirrors folio_alloc_swap(). The folio must be locked and not in the
  // swap cache. On success every slot is CACHED(folio, 0) and folio.swap()
  // is the first slot. Errors: -EINVAL (order > cluster order, not locked,
  // already cached), -ENOMEM (no slots).
  Status FolioAllocSwap(CpuId cpu, Folio& folio);
  // The CPU that the calls naming none (frees, swap-cache drops, reclaim)
  // run on from now, as a task's frees run on its CPU: under
  // slot_cache_return their order-0 slots wait in that CPU's return buffer
  // (6.12 free_swap_slot() takes this_cpu's slots_ret). The calls that
  // name a CPU set it as well. -EINVAL for a CPU outside 0..nr_cpus-1.
  Status RunOn(CpuId cpu);
  // The caller side of §2.10 (mm/vmscan.c shrink_folio_list): allocate; on
  // failure of a large folio, count swpout_fallback (and thp_swpout_
  // fallback at PMD order), split, and allocate each page at order 0 using
  // split_pages[i] (2^order unlocked order-0 folios, page 0 first, each
  // listed once; `folio` itself is left out of the cache): page 0 first,
  // then the others in page order or last-first (Policy::
  // split_tails_last_first, as reclaim meets them).
  // The split pages stay locked for the whole call, as reclaim holds them,
  // so no placement reclaims a page placed earlier in the same call.
  // Successful placements count swpout / pswpout as written. "Nothing
  // placed" is not an error: an order-0 folio without a slot returns
  // {split = false, pages_placed = 0} (reclaim keeps the page), and a split
  // folio reports how many of its pages got a slot. Errors: -EINVAL (bad
  // arguments, changes nothing); never -ENOMEM.
  Result<SwapOutResult> SwapOutFolio(CpuId cpu, Folio& folio,
                                     std::span<Folio* const> split_pages = {});

  // --- references (§3) -------------------------------------------------
  // +1 on every slot of the folio (page < 0) or one page's slot.
  Status FolioDupSwap(Folio& folio, int page = -1);
  // -1 likewise; never frees (the folio stays cached).
  Status FolioPutSwap(Folio& folio, int page = -1);
  // +1 on a slot that already has a count (fork). -ENOENT if unused.
  Status SwapDupEntryDirect(SwapEntry entry);
  // Zap nr slots from entry (kernel: swap_put_entries_direct).
  Status SwapPutEntriesDirect(SwapEntry entry, uint64_t nr = 1);

  // --- swap cache (§3.4, §4) ------------------------------------------
  // Reclaim removes the folio from the swap cache; slots with count 0 are
  // freed. Requires the folio lock.
  Status SwapCacheDelFolio(Folio& folio);
  // Mirrors folio_free_swap(): only if freeable and every count is 0.
  bool FolioFreeSwap(Folio& folio);
  // Swap-in: put a locked folio in the swap cache over slots [entry,
  // entry + 2^order), all SHADOW, counts kept.
  Status SwapCacheAddFolio(Folio& folio, SwapEntry entry);
  // Mirrors __try_to_reclaim_swap(): +n reclaimed, -n kept, 0 no folio.
  int TryToReclaimSwap(SwapEntry entry, unsigned flags);
  // Mirrors swap_reclaim_full_clusters().
  Status ReclaimFullClusters(int type, bool force);
  // §4.6: while set, no folio leaves the swap cache.
  void SetStorageSuspended(bool suspended);
  bool storage_suspended() const;

  // --- deferred work (Appendix A) -------------------------------------
  // Runs every device's pending discard work and reclaim work now.
  void RunDeferredWork();
  bool HasDeferredWork() const;

  // --- hibernation hooks (§6) -----------------------------------------
  // One order-0 slot on exactly that device; invalid entry if none.
  SwapEntry AllocHibernationSlot(CpuId cpu, int type);
  Status FreeHibernationSlot(SwapEntry entry);
  // 2^order aligned hibernation slots on that device through the normal
  // allocator (this CPU's cluster of that order, then the device search):
  // the reviewer's "generic PMD-sized allocation" of seed 000. Large orders
  // only on block devices. Free with FreeHibernationRun.
  SwapEntry AllocHibernationRange(CpuId cpu, int type, int order);
  // --- the RFC's hibernation session (seed 001, hibernation spec §9.5-9.8)
  // Bind the image to one device: claimed clusters of an earlier binding go
  // back; the reservation is re-armed. sort_claimed: patch 6 (disk order).
  // -ENODEV if the device is not active.
  Status HibernationBind(int type, bool sort_claimed = true);
  // Returns claimed, unused clusters to the tail of the free list; unbinds.
  void HibernationUnbind();
  // Bind the same device again (kernel: swap_hibernation_reset).
  void HibernationReset();
  // One run for the image: the reservation (once per session), else a
  // claimed free cluster whole (claiming the whole free list only while
  // storage is suspended), else one slot from AllocHibernationSlot.
  // nr == 0: nothing left, or no device bound.
  struct HibernationRun {
    SwapEntry first{};
    uint64_t nr = 0;
  };
  HibernationRun AllocHibernationRun(CpuId cpu);
  // Gives back [first, first + nr), split at cluster boundaries: reserved
  // clusters are left alone, whole clusters are returned by count, single
  // slots freed as FreeHibernationSlot does.
  Status FreeHibernationRun(SwapEntry first, uint64_t nr);
  // The reservation of a device in clusters: (start, count); (0, 0) none.
  std::pair<uint64_t, uint64_t> HibernationReserve(int type) const;

  // First WRITEOK device on block device `bdev` whose slot 0 is `block`.
  Result<int> FindHibernationSwapType(uint64_t bdev, uint64_t block);
  Result<int> PinHibernationSwapType(uint64_t bdev, uint64_t block);
  Result<int> RepinHibernationSwapType(int old_type, uint64_t bdev, uint64_t block);
  void UnpinHibernationSwapType(int type);
  // First WRITEOK device; -ENODEV if none.
  Result<int> FindFirstSwap();
  // Disk block of a slot, 0 if the device is missing or not WRITEOK.
  uint64_t SwapdevBlock(int type, uint64_t offset);
  // pages, or pages - inuse with free, plus a hibernation reservation;
  // 0 unless WRITEOK.
  uint64_t CountSwapPages(int type, bool free);

  // --- what a user sees (§7) ------------------------------------------
  SwapCounters counters() const;
  int64_t nr_swap_pages() const;
  int64_t total_swap_pages() const;
  bool vm_swap_full() const;
  std::vector<int> active_devices() const;  // priority order
  std::vector<int> avail_devices() const;   // priority order
  Result<DeviceInfo> Device(int type) const;
  // Policy ssd_swap_map_scan (6.1): sets CPU `cpu`'s scan base on SSD
  // `type` (the kernel's cluster_next_cpu, which its linear scan starts
  // from once no free cluster is left) to `offset`. Errors: -EINVAL (no
  // such device, cpu outside [0, nr_cpus), offset outside [1, max), or the
  // policy or the device has no such base: not ssd_swap_map_scan, not SSD).
  Status SetScanBase(int type, int cpu, uint64_t offset);
  // The base SetScanBase sets (0 where there is none).
  uint64_t ScanBase(int type, int cpu) const;
  Result<ClusterInfo> Cluster(int type, uint64_t index) const;
  // Cluster indices on a list, head first (order ignored for free / full /
  // discard).
  Result<std::vector<uint64_t>> List(int type, ListId list, int order = 0) const;
  Result<SlotInfo> Slot(SwapEntry entry) const;
  PerCpuHint Hint(CpuId cpu, int order) const;
  // /proc/swaps text.
  std::string ProcSwaps() const;

  // Every invariant of §8 (S1-S4, C1-C6, D1-D5, G1-G4). Call at
  // quiescence (no operation in progress).
  InvariantReport CheckInvariants() const;

  // Hidden in a shared library, as its definition (system_state.h).
  struct __attribute__((visibility("hidden"))) State;  // implementation, src/alloc/system_state.h

 private:
  std::unique_ptr<State> s_;
};

}  // namespace swaplab::alloc
#pragma GCC visibility pop
