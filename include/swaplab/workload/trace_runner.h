// SPDX-License-Identifier: MIT
// Runs trace records against a SwapSystem with the caller behaviour of one
// private anonymous mapping (design.md "Semantics"; allocator spec §2.10,
// §3): swap-out with the reclaim fallback, zap, swap-in, cache drop, fork.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "swaplab/alloc/swap_system.h"
#include "swaplab/workload/call_tape.h"
#include "swaplab/workload/trace.h"

namespace swaplab::workload {

struct Disagreement {
  uint64_t line = 0;
  uint64_t folio = 0, page = 0;
  uint64_t expected_dev = 0, expected_offset = 0;
  std::string got;  // "dev 0 offset 1234", or "not in swap"
};

struct ReplaySummary {
  uint64_t records = 0;
  uint64_t folios = 0;          // alloc records
  uint64_t pages_placed = 0;    // pages that got a slot at swap-out
  uint64_t pages_unplaced = 0;  // pages that stayed in memory (no slot)
  uint64_t folio_runs = 0;      // Σ contiguous slot runs per allocated folio
  uint64_t expected = 0, agree = 0;
  std::vector<Disagreement> disagreements;  // the first ones
  uint64_t skipped_cache_drops = 0;         // refused while storage suspended
  // `foreign` records (slots another process took on a real kernel): the
  // model's swap-out of one page outside the trace on the record's CPU,
  // compared with where the kernel put it; not counted in expected/agree.
  uint64_t foreign_expected = 0, foreign_agree = 0;
  uint64_t foreign_released = 0;  // `foreign-free` slots given back
};

// MemAvailable from /proc/meminfo in bytes; 0 when it cannot be read.
uint64_t AvailableMemoryBytes();

class TraceRunner {
 public:
  // `dev` ids of the trace map to device types in swapon order.
  // compact: keep order-0 folios that hold nothing but one swapped-out
  // slot as that slot alone (FolioIndex); off, every live folio keeps a
  // table entry — the same behaviour at more memory, which the tests
  // compare against.
  explicit TraceRunner(alloc::SwapSystem& sys, size_t keep_disagreements = 20, bool compact = true);
  ~TraceRunner();
  // The model's memory, estimated at each swapon record
  // (kModelBytesPerCluster per cluster of every device on), is refused
  // with -ENOMEM over this many bytes; 0 (the default): the machine's
  // MemAvailable, not checked when /proc/meminfo cannot be read nor while
  // the estimate is under kUncheckedModelBytes.
  void set_memory_limit(uint64_t bytes) { memory_limit_ = bytes; }
  // park: a global drop parks the folios it passes over (Park); off,
  // every drop walks them again — the same behaviour, slower, which the
  // tests compare against. parked(): folios parked so far.
  void set_park(bool on) { park_ = on; }
  uint64_t parked() const { return parked_; }
  // Measured: 2^32 pages in 512-page clusters took ~327 MB of RSS, 2^28
  // pages in 16-page clusters ~780 MB (issue 31): about 40-47 bytes a
  // cluster, almost nothing a page.
  static constexpr uint64_t kModelBytesPerCluster = 48;
  // Less than the replay process holds before its first record (its code
  // and the trace reader's buffer, about 6 MB of RSS): a model this small
  // (up to ~87,000 clusters, 170 GiB in 2 MiB clusters) is not checked
  // against MemAvailable, whose read of /proc/meminfo cost a small
  // replay more than its records.
  static constexpr uint64_t kUncheckedModelBytes = uint64_t{4} << 20;
  // Records every allocator call from now on into *tape (null: none;
  // call_tape.h). The tape must outlive the records applied.
  void set_tape(CallTape* tape) { calls_.set_tape(tape); }
  // Applies one record; errors name the trace line (FILE:LINE: ...).
  Status Apply(const TraceRecord& r, const std::string& trace_name = "trace");
  const ReplaySummary& summary() const { return sum_; }
  // The slot of page `page` of a live folio; invalid (offset 0) when the
  // folio is unknown or the page is not in swap.
  alloc::SwapEntry SlotOf(uint64_t folio, uint64_t page) const;
  // Whether folio `id` is live (allocated and not yet forgotten).
  bool Live(uint64_t id) const { return index_.Find(id) != FolioIndex::kAbsent; }
  // Trace device id → device type.
  const std::map<uint64_t, int>& devices() const { return devs_; }
  // A swap-out of one order-0 page outside the trace on `cpu` (what a
  // `foreign` record does for each of its slots): the slot the model gave
  // it, held with one reference and out of the swap cache until a
  // `foreign-free` of (its dev, its offset) or a swapoff; invalid (offset
  // 0) when no slot was free. Kept under (dev, offset) of `as` when given
  // (the kernel's placement), else under the model's own.
  Result<alloc::SwapEntry> TakeForeignSlot(int cpu,
                                           std::optional<std::pair<uint64_t, uint64_t>> as = {});
  // Slots held by `foreign` records now.
  size_t foreign_slots() const { return foreign_.size(); }

  // A record's place, FILE:LINE in messages.
  struct Where {
    const std::string* trace;
    uint64_t line;
  };

 private:
  Status CheckModelMemory(uint64_t pages, const Where& where);
  uint64_t memory_limit_ = 0;  // set_memory_limit
  uint64_t model_bytes_ = 0;   // the estimate for the devices swapped on so far
  // What the mapping keeps of one page, 16 bytes (a 2 MiB folio's pages
  // take 8 KiB): its slot (offsets below 2^40, kMaxSlotOffset), the swap
  // references it holds, whether it is mapped in memory, and its swap-cache
  // folio as a number of pool_ (CacheOf).
  struct Page {
    static constexpr uint64_t kMaxSlotOffset = (uint64_t{1} << 40) - 1;
    Page() = default;
    Page(alloc::SwapEntry s, uint32_t cache_folio, uint32_t r, bool m)
        : refs(r), cache(cache_folio), in_memory(m) {
      set_slot(s);
    }
    alloc::SwapEntry slot() const {
      return {type_, offset_lo_ | (static_cast<uint64_t>(offset_hi_) << 32)};
    }
    void set_slot(alloc::SwapEntry s) {  // s.offset <= kMaxSlotOffset (DoAlloc checks)
      type_ = static_cast<int8_t>(s.type);
      offset_lo_ = static_cast<uint32_t>(s.offset);
      offset_hi_ = static_cast<uint8_t>(s.offset >> 32);
    }
    uint32_t refs = 0;   // swap references the mapping holds
    uint32_t cache = 0;  // the swap-cache folio holding the slot: pool_ number, 0: none

   private:
    uint32_t offset_lo_ = 0;
    uint8_t offset_hi_ = 0;
    int8_t type_ = -1;  // alloc::kMaxSwapfiles types

   public:
    bool in_memory = false;  // mapped in memory
  };
  static_assert(sizeof(Page) == 16, "a page record grew");
  // Where a folio is in the reclaim order (DropAllCaches): not in it, in
  // it, parked beside it (Park), or taken back from the parked list and
  // waiting to be put back in its place (Unpark).
  enum class Lru : uint8_t { kOff, kInOrder, kParked, kPending };
  // A folio of the mapping: one page held inline (order 0), or a page
  // array of 2^order used again for later folios of that order. Folios
  // live in slab_ and are named by their index there.
  struct TFolio {
    uint64_t id = 0;
    int order = -1;  // -1: the slab entry is free
    // Links of the reclaim order (lru_head_ … lru_tail_): the live folios
    // that may hold swap-cache folios, least recently swapped out or in
    // first; or of the parked list (Park). `lru` says which.
    Lru lru = Lru::kOff;
    // The CPU of its alloc: its frees, swap-ins and drops run there, as the
    // kernel run's worker runs them pinned to it (SwapSystem::RunOn).
    uint16_t cpu = 0;
    uint32_t lru_prev = kNil, lru_next = kNil;
    uint64_t stamp = 0;  // when it last became the youngest (Touch): its place in the order
    Page one;
    std::vector<Page> many;
    std::span<Page> pages() {
      return order == 0 ? std::span<Page>(&one, 1) : std::span<Page>(many);
    }
    std::span<const Page> pages() const {
      return order == 0 ? std::span<const Page>(&one, 1) : std::span<const Page>(many);
    }
  };
  static constexpr uint32_t kNil = ~uint32_t{0};
  static_assert(sizeof(TFolio) <= 80, "the folio table's entry grew");

  // Folio id → what the runner keeps of the folio. The value is a slab
  // index, or — for an order-0 folio whose page is swapped out with one
  // reference and no swap-cache folio, the state a generated folio stays
  // in after its swap-out (generators' SwapOut) — that page's slot itself
  // with kCompact set, and no slab entry: 8 bytes of index per such folio
  // instead of an 80-byte entry besides.
  class FolioIndex {
   public:
    static constexpr uint64_t kAbsent = ~uint64_t{0};
    static constexpr uint64_t kCompact = uint64_t{1} << 63;
    FolioIndex();
    ~FolioIndex();
    uint64_t Find(uint64_t id) const;          // kAbsent when absent
    void Insert(uint64_t id, uint64_t value);  // id not present
    void Set(uint64_t id, uint64_t value);     // id present
    void Erase(uint64_t id);                   // id present
    // The (id, value) of every compact value, into *out.
    void Compacts(std::vector<std::pair<uint64_t, uint64_t>>* out) const;

   private:
    // Ids below kDirectIds (trace and generated ids are mostly dense from
    // 0) live in blocks of 64 values, made when an id of the block comes
    // and freed with its last id: 8 bytes per id of a block in use, and a
    // lookup reads the directory and one value. Other ids go to a table
    // by open addressing (linear probing, Fibonacci hashing).
    static constexpr uint64_t kBlockIds = 64;
    static constexpr uint64_t kDirectIds = uint64_t{1} << 26;  // a directory of ≤ 8 MiB
    struct Block;
    std::vector<std::unique_ptr<Block>> blocks_;     // to the largest direct id seen
    static constexpr uint64_t kNone = ~uint64_t{0};  // trace ids stop at 2^63 - 1
    struct Slot {
      uint64_t id = kNone;
      uint64_t value = kAbsent;
    };
    size_t Home(uint64_t id) const;
    size_t SlotOf(uint64_t id) const;  // id present
    void Grow();
    std::vector<Slot> slots_;  // a power of two, at most three quarters used
    size_t used_ = 0;
    int shift_ = 64;
  };
  // A compact value: the slot's type (below 128, as kMaxSwapfiles is) in
  // bits 56-62, the folio's CPU (below 1024) in bits 40-55 and the slot's
  // offset (below 2^40, Page's limit) in bits 0-39.
  static constexpr int kCompactCpuShift = 40;
  static uint64_t Compact(alloc::SwapEntry slot, uint16_t cpu) {
    return FolioIndex::kCompact | uint64_t(slot.type) << 56 | uint64_t{cpu} << kCompactCpuShift |
           slot.offset;
  }
  static alloc::SwapEntry SlotOfCompact(uint64_t v) {
    return {static_cast<int>((v >> 56) & 0x7f), v & ((uint64_t{1} << kCompactCpuShift) - 1)};
  }
  static uint16_t CpuOfCompact(uint64_t v) { return static_cast<uint16_t>(v >> kCompactCpuShift); }

  // One step per record kind (Apply), the folio's records in ApplyToFolio.
  Status DoSwapon(const TraceRecord& r, const Where& where);
  Status CheckCpus(const TraceRecord& r, const Where& where) const;
  Status DropFolioCache(uint64_t id, const Where& where);
  Status ApplyToFolio(const TraceRecord& r, const Where& where);
  Status DoDup(TFolio& f, const Where& where);
  Status DoExpect(const TraceRecord& r, uint32_t folio, const Where& where);
  std::string DescribeSlot(const Page& p) const;
  // alloc, in steps: the record checked, the folio swapped out, its slab
  // entry made, its pages recorded (as the order-0 folios `split` when it
  // fell back), the summary counted.
  Status DoAlloc(const TraceRecord& r, const Where& where);
  Status CheckAlloc(const TraceRecord& r, const Where& where) const;
  uint32_t AddFolio(const TraceRecord& r);
  void RecordSwapOut(alloc::Folio& f, std::span<alloc::Folio* const> split, std::span<Page> pages);
  void Unmap(alloc::Folio& cf);
  void CountPlacement(std::span<const Page> pages);
  void CountWhole(uint64_t pages);
  Status DoFree(const TraceRecord& r, TFolio& f, const Where& where);
  // *in: some page came back into memory.
  Status DoCache(const TraceRecord& r, TFolio& f, const Where& where, bool* in);
  // keep_mapped: reclaim (a global drop) leaves mapped folios in the cache.
  Status DoDropCache(TFolio& f, const Where& where, bool keep_mapped);
  Status DropAllCaches(const Where& where);
  // What a global drop would do to a folio on the reclaim order: nothing
  // and take it off (no page has a cache folio), nothing (every cache
  // folio is mapped and in the swap cache), or drop some cache folio.
  enum class Reclaim { kNoCache, kAllMapped, kSome };
  Reclaim ReclaimOf(const TFolio& f);
  Status DoSwapoff(const TraceRecord& r, const Where& where);
  Status DoForeign(const TraceRecord& r, const Where& where);
  Status DoForeignFree(const TraceRecord& r, const Where& where);
  Status DoScanBase(const TraceRecord& r, const Where& where);
  alloc::Folio* NewFolio(int order);
  alloc::Folio* FreshFolio(int order);
  void Release(alloc::Folio* f);
  // The distinct cache folios `pages` refer to, in page order, into *out.
  void CacheFolios(std::span<const Page> pages, std::vector<alloc::Folio*>* out);
  // The live folio `id`'s slab index, a compact folio given a slab entry
  // first; kNil for an unknown id.
  uint32_t Resolve(uint64_t id);
  uint32_t Resolve(uint64_t id, uint64_t value);  // value: index_.Find(id)
  Status FreeCompact(uint64_t id, uint64_t value, const Where& where);
  uint32_t NewEntry();  // a free slab entry (used again first)
  // Forgets the folio when nothing refers to it any more, or makes it
  // compact when it can be (MaybeCompact).
  void ForgetIfDone(uint32_t folio);
  void MaybeCompact(uint32_t folio);
  // The reclaim order: `folio` becomes the most recently used (lru_ tail).
  void Touch(uint32_t folio);
  // Takes `folio` out of the order, the parked list or the pending ones.
  void LruUnlink(uint32_t folio);
  // The head and tail of the order (kInOrder) or of the parked list
  // (kParked), and `folio` put at the tail of one of them.
  std::pair<uint32_t&, uint32_t&> Ends(Lru list);
  void Append(uint32_t folio, Lru list);
  // A folio a global drop passed over (every cache folio it refers to
  // mapped and in the swap cache) leaves the order for the parked list,
  // which drops do not walk, until a record changes it (Unpark, UnparkAll);
  // then, at the next drop, it goes back to its place (PutBackPending).
  void Park(uint32_t folio);
  void Unpark(uint32_t folio);
  void UnparkAll();
  void PutBackPending();

  alloc::SwapSystem& sys_;
  AllocCalls calls_{sys_};  // every call that changes the system goes through it
  size_t keep_;
  bool compact_;
  ReplaySummary sum_;
  std::map<uint64_t, int> devs_;
  // Slots of `foreign` records: (dev, the kernel's offset) → the model's slot.
  std::map<std::pair<uint64_t, uint64_t>, alloc::SwapEntry> foreign_;
  // Entries in chunks of 2^kShift: they never move, and a table of
  // millions grows without a doubling's copy and slack.
  template <typename T, int kShift>
  class Chunked {
   public:
    T& operator[](uint32_t i) { return chunks_[i >> kShift][i & kMask]; }
    const T& operator[](uint32_t i) const { return chunks_[i >> kShift][i & kMask]; }
    uint32_t size() const { return size_; }
    uint32_t Add() {  // a new default entry's index
      if ((size_ & kMask) == 0) chunks_.push_back(std::make_unique<T[]>(kMask + 1));
      return size_++;
    }

   private:
    static constexpr uint32_t kMask = (1u << kShift) - 1;
    std::vector<std::unique_ptr<T[]>> chunks_;
    uint32_t size_ = 0;
  };
  // Chunks of 256 entries (20 KiB): a replay of a few thousand records
  // makes and frees one or two, not a 320 KiB one it barely uses.
  Chunked<TFolio, 8> slab_;            // live folios and free entries
  std::vector<uint32_t> free_folios_;  // free entries of slab_
  FolioIndex index_;                   // live folios: id → slab_ index or compact slot
  uint32_t lru_head_ = kNil, lru_tail_ = kNil;
  uint32_t parked_head_ = kNil, parked_tail_ = kNil;
  std::vector<uint32_t> pending_;  // unparked, to be put back (may repeat or be stale)
  uint64_t lru_clock_ = 0;         // the last TFolio::stamp given
  bool park_ = true;
  uint64_t parked_ = 0;
  // Cache folios, kept alive, in chunks (a folio each would be a malloc per
  // folio of the trace). Each knows its number (index + 1), so a page names
  // its cache folio in 4 bytes.
  struct PoolFolio : alloc::Folio {
    uint32_t number = 0;  // set once, by NewFolio
  };
  Chunked<PoolFolio, 8> pool_;
  alloc::Folio* CacheOf(const Page& p) { return p.cache == 0 ? nullptr : &pool_[p.cache - 1]; }
  // The number of a folio NewFolio made (every cache folio is one).
  static uint32_t NumberOf(const alloc::Folio* f) {
    return static_cast<const PoolFolio*>(f)->number;
  }
  // Order-0 folios of pool_ never put in the swap cache: an alloc's split
  // pages are its last 2^order.
  std::vector<alloc::Folio*> spare_;
  std::vector<alloc::Folio*> released_;             // folios of pool_ no page refers to any more
  std::vector<std::vector<Page>> spare_pages_[16];  // page arrays of forgotten folios, by order
  // Scratch lists kept from record to record (no allocation per record).
  std::vector<alloc::Folio*> caches_, touched_;
};

}  // namespace swaplab::workload
#pragma GCC visibility pop
