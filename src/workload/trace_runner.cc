// SPDX-License-Identifier: MIT
// Trace semantics for one private anonymous mapping (design.md).
#include "swaplab/workload/trace_runner.h"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <unordered_set>

#include "swaplab/alloc/printable.h"

namespace swaplab::workload {

using alloc::Folio;
using alloc::FolioLockGuard;
using alloc::SwapEntry;

TraceRunner::TraceRunner(alloc::SwapSystem& sys, size_t keep, bool compact)
    : sys_(sys), keep_(keep), compact_(compact) {}
TraceRunner::~TraceRunner() = default;

Folio* TraceRunner::NewFolio(int order) {
  if (order == 0 && !spare_.empty()) {  // a split page that was never used
    Folio* f = spare_.back();
    spare_.pop_back();
    return f;
  }
  return FreshFolio(order);
}

// A folio of pool_ that is not a spare split page: one released, or a new one.
Folio* TraceRunner::FreshFolio(int order) {
  if (!released_.empty()) {  // as new: out of the swap cache, mapped, clean
    Folio* f = released_.back();
    released_.pop_back();
    f->set_order(order);
    f->mapped = true;
    f->writeback = false;
    f->dirty = false;
    return f;
  }
  const uint32_t i = pool_.Add();
  PoolFolio& f = pool_[i];
  f.number = i + 1;
  f.set_order(order);
  return &f;
}

// Folios out of the swap cache that no page refers to any more (each folio
// belongs to one mapping's TFolio) are used again by NewFolio.
void TraceRunner::Release(Folio* f) { released_.push_back(f); }

// The distinct cache folios `pages` refer to, in page order (pages of one
// folio need not be adjacent: a page faulted back in gets a folio of its own).
void TraceRunner::CacheFolios(std::span<const Page> pages, std::vector<Folio*>* out) {
  std::vector<Folio*>& v = *out;
  v.clear();
  for (const Page& p : pages) {
    Folio* cf = CacheOf(p);
    if (cf != nullptr && (v.empty() || v.back() != cf)) v.push_back(cf);
  }
  if (v.size() <= 1) return;
  if (v.size() <= 32) {  // a few: keep the first of each by a linear search
    size_t n = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      if (std::find(v.begin(), v.begin() + static_cast<ptrdiff_t>(n), v[i]) ==
          v.begin() + static_cast<ptrdiff_t>(n))
        v[n++] = v[i];
    }
    v.resize(n);
    return;
  }
  std::unordered_set<Folio*> seen(v.size());
  std::erase_if(v, [&](Folio* f) { return !seen.insert(f).second; });
}

namespace {

Status At(const TraceRunner::Where& where, const std::string& what, int code = -EINVAL) {
  return Status(code,
                Printable(*where.trace, kPathMax) + ":" + std::to_string(where.line) + ": " + what);
}

}  // namespace

struct TraceRunner::FolioIndex::Block {
  uint64_t value[kBlockIds];
  uint32_t used = 0;
  Block() { std::fill(std::begin(value), std::end(value), kAbsent); }
};

TraceRunner::FolioIndex::FolioIndex() = default;
TraceRunner::FolioIndex::~FolioIndex() = default;

size_t TraceRunner::FolioIndex::Home(uint64_t id) const {
  // Fibonacci hashing: the top bits of the product spread ids over the table.
  return shift_ >= 64 ? 0 : static_cast<size_t>((id * 0x9E3779B97F4A7C15ull) >> shift_);
}

uint64_t TraceRunner::FolioIndex::Find(uint64_t id) const {
  if (id < kDirectIds) {
    const uint64_t b = id / kBlockIds;
    return b < blocks_.size() && blocks_[b] ? blocks_[b]->value[id % kBlockIds] : kAbsent;
  }
  if (slots_.empty()) return kAbsent;
  const size_t mask = slots_.size() - 1;
  for (size_t i = Home(id);; i = (i + 1) & mask) {
    if (slots_[i].id == id) return slots_[i].value;
    if (slots_[i].id == kNone) return kAbsent;
  }
}

size_t TraceRunner::FolioIndex::SlotOf(uint64_t id) const {
  const size_t mask = slots_.size() - 1;
  size_t i = Home(id);
  while (slots_[i].id != id) i = (i + 1) & mask;
  return i;
}

void TraceRunner::FolioIndex::Set(uint64_t id, uint64_t value) {
  if (id < kDirectIds) {
    blocks_[id / kBlockIds]->value[id % kBlockIds] = value;
  } else {
    slots_[SlotOf(id)].value = value;
  }
}

void TraceRunner::FolioIndex::Compacts(std::vector<std::pair<uint64_t, uint64_t>>* out) const {
  for (uint64_t b = 0; b < blocks_.size(); ++b) {
    if (!blocks_[b]) continue;
    for (uint64_t k = 0; k < kBlockIds; ++k) {
      const uint64_t v = blocks_[b]->value[k];
      if (v != kAbsent && (v & kCompact)) out->emplace_back(b * kBlockIds + k, v);
    }
  }
  for (const Slot& s : slots_) {
    if (s.id != kNone && (s.value & kCompact)) out->emplace_back(s.id, s.value);
  }
}

void TraceRunner::FolioIndex::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
  shift_ = 64 - std::countr_zero(slots_.size());
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.id == kNone) continue;
    size_t i = Home(s.id);
    while (slots_[i].id != kNone) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

void TraceRunner::FolioIndex::Insert(uint64_t id, uint64_t value) {
  if (id < kDirectIds) {
    const uint64_t b = id / kBlockIds;
    if (b >= blocks_.size()) blocks_.resize(b + 1);
    if (!blocks_[b]) blocks_[b] = std::make_unique<Block>();
    blocks_[b]->value[id % kBlockIds] = value;
    ++blocks_[b]->used;
    return;
  }
  if (4 * (used_ + 1) > 3 * slots_.size()) Grow();
  const size_t mask = slots_.size() - 1;
  size_t i = Home(id);
  while (slots_[i].id != kNone) i = (i + 1) & mask;
  slots_[i] = Slot{id, value};
  ++used_;
}

// Backward-shift deletion: each slot after the hole whose probe path from
// its home crosses the hole moves into it, so no probe stops early and no
// tombstone is left.
void TraceRunner::FolioIndex::Erase(uint64_t id) {
  if (id < kDirectIds) {
    std::unique_ptr<Block>& block = blocks_[id / kBlockIds];
    block->value[id % kBlockIds] = kAbsent;
    if (--block->used == 0) block.reset();
    return;
  }
  const size_t mask = slots_.size() - 1;
  size_t hole = SlotOf(id);
  for (size_t j = (hole + 1) & mask; slots_[j].id != kNone; j = (j + 1) & mask) {
    const size_t home = Home(slots_[j].id);
    if (((j - home) & mask) >= ((j - hole) & mask)) {  // the hole is on its path
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = Slot{};
  --used_;
}

std::pair<uint32_t&, uint32_t&> TraceRunner::Ends(Lru list) {
  if (list == Lru::kInOrder) return {lru_head_, lru_tail_};
  return {parked_head_, parked_tail_};
}

void TraceRunner::LruUnlink(uint32_t i) {
  TFolio& f = slab_[i];
  if (f.lru == Lru::kInOrder || f.lru == Lru::kParked) {
    auto [head, tail] = Ends(f.lru);
    (f.lru_prev == kNil ? head : slab_[f.lru_prev].lru_next) = f.lru_next;
    (f.lru_next == kNil ? tail : slab_[f.lru_next].lru_prev) = f.lru_prev;
  }  // kPending: its entry in pending_ is passed over (PutBackPending)
  f.lru_prev = f.lru_next = kNil;
  f.lru = Lru::kOff;
}

void TraceRunner::Append(uint32_t i, Lru list) {
  LruUnlink(i);
  auto [head, tail] = Ends(list);
  TFolio& f = slab_[i];
  f.lru_prev = tail;
  (tail == kNil ? head : slab_[tail].lru_next) = i;
  tail = i;
  f.lru = list;
}

void TraceRunner::Touch(uint32_t i) {
  Append(i, Lru::kInOrder);
  slab_[i].stamp = ++lru_clock_;
}

// Parked, the folio keeps its stamp: the place it goes back to.
void TraceRunner::Park(uint32_t i) {
  Append(i, Lru::kParked);
  ++parked_;
}

void TraceRunner::Unpark(uint32_t i) {
  if (slab_[i].lru != Lru::kParked) return;
  LruUnlink(i);
  slab_[i].lru = Lru::kPending;
  pending_.push_back(i);
}

void TraceRunner::UnparkAll() {
  while (parked_head_ != kNil) Unpark(parked_head_);
}

// The pending folios back into the order, each before the first folio
// made youngest after it: the order is as if they had never left it.
void TraceRunner::PutBackPending() {
  if (pending_.empty()) return;
  std::erase_if(pending_, [this](uint32_t i) { return slab_[i].lru != Lru::kPending; });
  std::sort(pending_.begin(), pending_.end(),
            [this](uint32_t a, uint32_t b) { return slab_[a].stamp < slab_[b].stamp; });
  uint32_t at = lru_head_;
  for (uint32_t i : pending_) {
    TFolio& f = slab_[i];
    if (f.lru != Lru::kPending) continue;  // a repeat, already back
    while (at != kNil && slab_[at].stamp < f.stamp) at = slab_[at].lru_next;
    f.lru_next = at;
    f.lru_prev = at == kNil ? lru_tail_ : slab_[at].lru_prev;
    (f.lru_prev == kNil ? lru_head_ : slab_[f.lru_prev].lru_next) = i;
    (at == kNil ? lru_tail_ : slab_[at].lru_prev) = i;
    f.lru = Lru::kInOrder;
  }
  pending_.clear();
}

alloc::SwapEntry TraceRunner::SlotOf(uint64_t folio, uint64_t page) const {
  const uint64_t v = index_.Find(folio);
  if (v == FolioIndex::kAbsent) return {};
  if (v & FolioIndex::kCompact) return page == 0 ? SlotOfCompact(v) : SwapEntry{};
  const uint32_t i = static_cast<uint32_t>(v);
  if (page >= slab_[i].pages().size()) return {};
  const Page& p = slab_[i].pages()[page];
  return p.refs != 0 && !p.in_memory ? p.slot() : SwapEntry{};
}

uint32_t TraceRunner::NewEntry() {
  if (free_folios_.empty()) return slab_.Add();
  const uint32_t i = free_folios_.back();
  free_folios_.pop_back();
  return i;
}

uint32_t TraceRunner::Resolve(uint64_t id) { return Resolve(id, index_.Find(id)); }

uint32_t TraceRunner::Resolve(uint64_t id, uint64_t v) {
  if (v == FolioIndex::kAbsent) return kNil;
  if (!(v & FolioIndex::kCompact)) return static_cast<uint32_t>(v);
  const uint32_t i = NewEntry();
  TFolio& f = slab_[i];
  f.id = id;
  f.order = 0;
  f.one = Page{SlotOfCompact(v), 0, 1, false};
  f.cpu = CpuOfCompact(v);
  index_.Set(id, i);
  return i;
}

// An order-0 folio swapped out with one reference and no cache folio
// becomes compact: its slot is all there is to keep. It is off the reclaim
// order already or leaves it (a global drop passes over a folio with no
// cache folio without changing anything).
void TraceRunner::MaybeCompact(uint32_t i) {
  TFolio& f = slab_[i];
  const Page& p = f.one;
  if (!compact_ || f.order != 0 || p.refs != 1 || p.in_memory || p.cache != 0 ||
      p.slot().type < 0 || p.slot().type >= 128 ||
      p.slot().offset >= (uint64_t{1} << kCompactCpuShift))
    return;
  LruUnlink(i);
  index_.Set(f.id, Compact(p.slot(), f.cpu));
  f.order = -1;
  free_folios_.push_back(i);
}

// A folio whose pages hold nothing any more is forgotten (its id may be
// used again).
void TraceRunner::ForgetIfDone(uint32_t i) {
  TFolio& f = slab_[i];
  for (const Page& p : f.pages()) {
    if (p.refs != 0 || p.in_memory || (p.cache != 0 && CacheOf(p)->in_swap_cache()))
      return MaybeCompact(i);
  }
  CacheFolios(f.pages(), &caches_);
  for (Folio* cf : caches_) Release(cf);
  if (f.order > 0) spare_pages_[f.order].push_back(std::move(f.many));
  LruUnlink(i);
  f.order = -1;
  index_.Erase(f.id);
  free_folios_.push_back(i);
}

// A global drop-cache is reclaim of every folio of the mapping: it visits
// the folios that may hold swap-cache folios in the order they were last
// swapped out or in, oldest first (reclaim scans an LRU list from its old
// end, shrink_lruvec). A folio none of whose pages refers to a cache folio
// any more leaves that order: a drop changes nothing in it, and it is not
// done (a folio is forgotten as soon as a record leaves it done; only a
// cache folio leaving the swap cache behind the runner's back makes one
// done unseen, and then a page still refers to it). A folio whose cache
// folios are all mapped and in the swap cache is passed over untouched:
// reclaim keeps each of them (DoDropCache), so nothing in it would change.
// It is parked (Park): later drops do not walk it until a record on it, or
// a swapoff, changes it; then it goes back to its place in the order
// (PutBackPending), as if it had never left. What else can change it is
// the allocator taking one of its cache folios out of the swap cache
// (reclaim of a slot only the swap cache holds): a drop would then find
// nothing to drop in it either (that cache folio is out of the cache, the
// others mapped) and only forget the page's link to it, which waits for
// the folio's next visit (every reader of a page's link asks whether its
// cache folio is still in the swap cache).
// Each folio the drop changes is forgotten or made compact right after it
// (ForgetIfDone touches nothing the later folios' drops read).
Status TraceRunner::DropAllCaches(const Where& where) {
  PutBackPending();
  for (uint32_t i = lru_head_; i != kNil;) {
    TFolio& f = slab_[i];
    const uint32_t next = f.lru_next;
    if (next != kNil) __builtin_prefetch(&slab_[next]);  // the walk's next miss, early
    switch (ReclaimOf(f)) {
      case Reclaim::kNoCache:
        LruUnlink(i);
        break;
      case Reclaim::kAllMapped:
        if (park_) Park(i);
        break;
      case Reclaim::kSome:
        if (Status st = DoDropCache(f, where, /*keep_mapped=*/true); !st.ok()) return st;
        ForgetIfDone(i);
        break;
    }
    i = next;
  }
  return Status::Ok();
}

// What a global drop finds in the folio's pages' cache folios (read
// without their locks: the runner owns them, and DoDropCache reads them
// again under the lock).
TraceRunner::Reclaim TraceRunner::ReclaimOf(const TFolio& f) {
  Reclaim r = Reclaim::kNoCache;
  for (const Page& p : f.pages()) {
    if (p.cache == 0) continue;
    const alloc::Folio* cf = CacheOf(p);
    if (!cf->in_swap_cache() || !cf->mapped) return Reclaim::kSome;
    r = Reclaim::kAllMapped;
  }
  return r;
}

uint64_t AvailableMemoryBytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

// A device the model cannot hold is refused before it is made (8 devices
// of 2^32 pages took 2.6 GB, 32 took 10.5 GB).
Status TraceRunner::CheckModelMemory(uint64_t pages, const Where& where) {
  const uint64_t cluster = sys_.cluster_size();
  const uint64_t bytes = (pages / cluster + 1) * kModelBytesPerCluster;
  model_bytes_ += bytes;
  const bool given = memory_limit_ != 0;
  if (!given && model_bytes_ < kUncheckedModelBytes) return Status::Ok();
  const uint64_t limit = given ? memory_limit_ : AvailableMemoryBytes();
  if (limit == 0 || model_bytes_ <= limit) return Status::Ok();
  constexpr double kMiB = 1024.0 * 1024;
  return At(
      where,
      fmt::format("the model of this device ({} pages, {} per cluster) needs about {:.0f} MiB, "
                  "{:.0f} MiB with the devices before it: over {} ({:.0f} MiB)",
                  pages, cluster, static_cast<double>(bytes) / kMiB,
                  static_cast<double>(model_bytes_) / kMiB,
                  given ? "--memory-limit" : "the memory available (MemAvailable)",
                  static_cast<double>(limit) / kMiB),
      -ENOMEM);
}

// swapon: the trace's device `dev` becomes a swap area of the model.
Status TraceRunner::DoSwapon(const TraceRecord& r, const Where& where) {
  if (devs_.count(r.dev)) return At(where, "dev " + std::to_string(r.dev) + " is already on");
  if (r.pages > Page::kMaxSlotOffset + 1)  // the page record's offsets
    return At(where, "pages " + std::to_string(r.pages) + " is above the runner's limit of 2^40");
  if (Status st = CheckModelMemory(r.pages, where); !st.ok()) return st;
  alloc::SwaponOptions o;
  o.name = "trace-dev" + std::to_string(r.dev);
  o.pages = r.pages;
  o.ssd = r.ssd;
  o.blkdev = r.blkdev;
  o.discard = r.discard ? alloc::DiscardMode::kBoth : alloc::DiscardMode::kNone;
  o.prio = r.prio;
  auto t = calls_.Swapon(o);
  if (!t.ok()) return At(where, t.status().ToString(), t.status().code());
  devs_[r.dev] = *t;
  return Status::Ok();
}

// cpus: read by Replay before the system is made (ReplayOptions::cpus);
// here only checked: a statement about the whole trace comes first.
Status TraceRunner::CheckCpus(const TraceRecord& r, const Where& where) const {
  if (sum_.records != 1) return At(where, "'cpus' must come before every other record");
  if (*r.n < 1 || *r.n > kMaxTraceCpus)
    return At(where,
              "cpus n=" + std::to_string(*r.n) + " is outside 1.." + std::to_string(kMaxTraceCpus));
  return Status::Ok();
}

// drop-cache folio=F on the folio's CPU (a global drop is DropAllCaches).
Status TraceRunner::DropFolioCache(uint64_t id, const Where& where) {
  const uint32_t i = Resolve(id);
  if (i == kNil) return At(where, "unknown folio " + std::to_string(id));
  (void)calls_.RunOn(slab_[i].cpu);
  Unpark(i);
  Status st = DoDropCache(slab_[i], where, /*keep_mapped=*/false);
  ForgetIfDone(i);
  return st;
}

Status TraceRunner::Apply(const TraceRecord& r, const std::string& trace_name) {
  const Where where{&trace_name, r.line};  // made into text only for an error
  ++sum_.records;
  switch (r.op) {
    case TraceOp::kSwapon:
      return DoSwapon(r, where);
    case TraceOp::kSwapoff:
      return DoSwapoff(r, where);
    case TraceOp::kAlloc:
      return DoAlloc(r, where);
    case TraceOp::kSuspendStorage:
      calls_.SetStorageSuspended(true);
      return Status::Ok();
    case TraceOp::kResumeStorage:
      calls_.SetStorageSuspended(false);
      return Status::Ok();
    case TraceOp::kForeign:
      return DoForeign(r, where);
    case TraceOp::kForeignFree:
      return DoForeignFree(r, where);
    case TraceOp::kScanBase:
      return DoScanBase(r, where);
    case TraceOp::kCpus:
      return CheckCpus(r, where);
    case TraceOp::kDropCache:
      return r.folio ? DropFolioCache(*r.folio, where) : DropAllCaches(where);
    default:
      return ApplyToFolio(r, where);
  }
}

// The records about one live folio: free, cache, dup, expect.
Status TraceRunner::ApplyToFolio(const TraceRecord& r, const Where& where) {
  const uint64_t v = index_.Find(*r.folio);
  if ((v & FolioIndex::kCompact) && v != FolioIndex::kAbsent && r.op == TraceOp::kFree &&
      r.page == 0 && r.n.value_or(1) == 1)
    return FreeCompact(*r.folio, v, where);
  const uint32_t i = Resolve(*r.folio, v);
  if (i == kNil) {
    if (r.op == TraceOp::kExpect) {
      ++sum_.expected;
      if (sum_.disagreements.size() < keep_)
        sum_.disagreements.push_back({r.line, *r.folio, r.page, r.dev, r.offset, "unknown folio"});
      return Status::Ok();
    }
    return At(where, "unknown folio " + std::to_string(*r.folio) + " (no alloc before it)");
  }
  TFolio& f = slab_[i];
  // What the record does runs on the folio's CPU (RunOn); expect only looks.
  if (r.op != TraceOp::kExpect) {
    (void)calls_.RunOn(f.cpu);
    Unpark(i);  // the record may change what the next drop finds in it
  }
  switch (r.op) {
    case TraceOp::kFree: {
      Status st = DoFree(r, f, where);
      ForgetIfDone(i);
      return st;
    }
    case TraceOp::kCache: {
      bool in = false;
      Status st = DoCache(r, f, where, &in);
      if (in) Touch(i);  // a page faulted back in: the folio is the youngest
      return st;
    }
    case TraceOp::kDup:
      return DoDup(f, where);
    case TraceOp::kExpect:
      return DoExpect(r, i, where);
    default:
      return Status::Ok();
  }
}

// free of a compact folio's one page: what DoFree and ForgetIfDone do
// to it (its slot's reference put on its CPU, the folio forgotten),
// without the slab entry Resolve would make for it first.
Status TraceRunner::FreeCompact(uint64_t id, uint64_t v, const Where& where) {
  (void)calls_.RunOn(CpuOfCompact(v));
  if (Status st = calls_.SwapPutEntriesDirect(SlotOfCompact(v), 1); !st.ok())
    return At(where, st.ToString(), st.code());
  index_.Erase(id);
  return Status::Ok();
}

// dup: every swapped-out page gains a swap reference (a fork).
Status TraceRunner::DoDup(TFolio& f, const Where& where) {
  for (Page& p : f.pages()) {
    if (p.refs == 0 || p.in_memory) continue;  // only swapped-out pages
    if (Status st = calls_.SwapDupEntryDirect(p.slot()); !st.ok())
      return At(where, st.ToString(), st.code());
    ++p.refs;
  }
  return Status::Ok();
}

// expect: the page's slot compared with where the kernel put it.
Status TraceRunner::DoExpect(const TraceRecord& r, uint32_t i, const Where& where) {
  const TFolio& f = slab_[i];
  if (r.page >= f.pages().size())
    return At(where,
              "page " + std::to_string(r.page) + " is outside folio " + std::to_string(*r.folio));
  ++sum_.expected;
  const Page& p = f.pages()[r.page];
  auto dev = devs_.find(r.dev);
  const bool ok = p.slot().valid() && dev != devs_.end() && dev->second == p.slot().type &&
                  p.slot().offset == r.offset;
  if (ok) {
    ++sum_.agree;
  } else if (sum_.disagreements.size() < keep_) {
    sum_.disagreements.push_back({r.line, *r.folio, r.page, r.dev, r.offset, DescribeSlot(p)});
  }
  MaybeCompact(i);  // again, if it was
  return Status::Ok();
}

// Where a page is, as an expect disagreement says it ("dev 0 offset 1234").
std::string TraceRunner::DescribeSlot(const Page& p) const {
  if (!p.slot().valid()) return "not in swap";
  std::string got = "offset " + std::to_string(p.slot().offset) + " on device type " +
                    std::to_string(p.slot().type);
  for (auto& [id, t] : devs_) {
    if (t == p.slot().type)
      got = "dev " + std::to_string(id) + " offset " + std::to_string(p.slot().offset);
  }
  return got;
}

// alloc: swap out a folio of 2^order pages on `cpu` (allocator spec §2.10);
// each placed page then holds one swap reference (its page-table entry),
// the folio stays in the swap cache, clean and unmapped.
Status TraceRunner::DoAlloc(const TraceRecord& r, const Where& where) {
  if (Status st = CheckAlloc(r, where); !st.ok()) return st;
  Folio* f = NewFolio(r.order);
  // The order-0 folios it splits into if it falls back: the last 2^order
  // of spare_, which keeps them from alloc to alloc while they are not
  // used (a 2 MiB swap-out would otherwise leave 512 behind, and taking
  // them out and putting them back cost more than the swap-out of a small
  // folio).
  const size_t n = r.order > 0 ? size_t{1} << r.order : 0;
  while (spare_.size() < n) spare_.push_back(FreshFolio(0));
  const std::span<Folio* const> split(spare_.data() + (spare_.size() - n), n);
  alloc::SwapOutResult res;
  {
    FolioLockGuard g(*f);
    auto out = calls_.SwapOutFolio(r.cpu, *f, split);
    if (!out.ok()) return At(where, out.status().ToString(), out.status().code());
    res = *out;
  }
  // A folio that did not enter the swap cache is referred to by no page.
  const bool whole = f->in_swap_cache();
  if (!whole) Release(f);
  if (res.split) {
    for (Folio* p : split)
      if (!p->in_swap_cache()) Release(p);
  }
  const uint32_t index = AddFolio(r);
  const std::span<Page> pages = slab_[index].pages();
  RecordSwapOut(*f, res.split ? split : std::span<Folio* const>(), pages);
  if (res.split) spare_.resize(spare_.size() - n);  // the split pages are used
  if (whole) {  // swapped out whole: one run of slots, every page in the swap cache
    Touch(index);
    CountWhole(pages.size());
    return Status::Ok();
  }
  // Swapped out into the swap cache: the youngest in the reclaim order.
  if (std::any_of(pages.begin(), pages.end(), [](const Page& p) { return p.cache != 0; }))
    Touch(index);
  CountPlacement(pages);
  return Status::Ok();
}

// What an alloc record must be before anything changes.
Status TraceRunner::CheckAlloc(const TraceRecord& r, const Where& where) const {
  // The reader checks this; a record built by a caller may not be.
  if (r.order < 0 || r.order >= static_cast<int>(std::size(spare_pages_)))
    return At(where, "order " + std::to_string(r.order) + " is outside 0.." +
                         std::to_string(std::size(spare_pages_) - 1));
  if (Live(*r.folio))
    return At(where, "folio " + std::to_string(*r.folio) +
                         " is still live (allocated at an earlier line)");
  if (r.cpu >= sys_.options().nr_cpus)
    return At(where, "cpu " + std::to_string(r.cpu) + " but the model has " +
                         std::to_string(sys_.options().nr_cpus) + " CPUs (--cpus)");
  return Status::Ok();
}

// The slab entry of the alloc record's new folio, its pages all empty.
uint32_t TraceRunner::AddFolio(const TraceRecord& r) {
  const uint32_t index = NewEntry();
  index_.Insert(*r.folio, index);
  TFolio& tf = slab_[index];
  tf.id = *r.folio;
  tf.order = r.order;
  tf.cpu = static_cast<uint16_t>(r.cpu);
  if (r.order > 0) {
    std::vector<std::vector<Page>>& spare = spare_pages_[r.order];
    if (!spare.empty()) {
      tf.many = std::move(spare.back());
      spare.pop_back();
    }
    tf.many.assign(size_t{1} << r.order, Page{});
  } else {
    tf.one = Page{};
  }
  return index;
}

// The pages of a folio just swapped out as `f` (or, when it fell back, as
// the order-0 folios `split`, else empty): each placed page holds its
// slot's swap reference and its swap-cache folio, the others stay in memory.
void TraceRunner::RecordSwapOut(Folio& f, std::span<Folio* const> split, std::span<Page> pages) {
  if (f.in_swap_cache()) {
    Unmap(f);
    for (size_t i = 0; i < pages.size(); ++i)
      pages[i] = Page{SwapEntry{f.swap().type, f.swap().offset + i}, NumberOf(&f), 1, false};
  } else if (!split.empty()) {
    for (size_t i = 0; i < pages.size(); ++i) {
      Folio* p = split[i];
      if (!p->in_swap_cache()) {
        pages[i].in_memory = true;
        continue;
      }
      Unmap(*p);
      pages[i] = Page{p->swap(), NumberOf(p), 1, false};
    }
  } else {
    for (Page& p : pages) p.in_memory = true;
  }
}

// A swapped-out cache folio's page-table entries take their swap
// references; the folio is left unmapped.
void TraceRunner::Unmap(Folio& cf) {
  FolioLockGuard g(cf);
  (void)calls_.FolioDupSwap(cf);
  cf.mapped = false;
  calls_.Changed(cf);
}

// CountPlacement of a folio placed whole: its pages in one run.
void TraceRunner::CountWhole(uint64_t pages) {
  sum_.pages_placed += pages;
  ++sum_.folios;
  ++sum_.folio_runs;
}

// The summary's placed and unplaced pages, and the folio's slot runs.
void TraceRunner::CountPlacement(std::span<const Page> pages) {
  uint64_t runs = 0;
  for (size_t i = 0; i < pages.size(); ++i) {
    const Page& p = pages[i];
    if (!p.slot().valid()) {
      ++sum_.pages_unplaced;
      continue;
    }
    ++sum_.pages_placed;
    const bool continues = i > 0 && pages[i - 1].slot().valid() &&
                           pages[i - 1].slot().type == p.slot().type &&
                           pages[i - 1].slot().offset + 1 == p.slot().offset;
    if (!continues) ++runs;
  }
  ++sum_.folios;
  sum_.folio_runs += runs;
}

// free: the mapping drops those pages (zap / MADV_DONTNEED).
Status TraceRunner::DoFree(const TraceRecord& r, TFolio& f, const Where& where) {
  const std::span<Page> pages = f.pages();
  uint64_t first, count;
  if (!RecordPageRange(r, pages.size(), &first, &count))
    return At(where, "pages [" + std::to_string(r.page) + ", +" + std::to_string(count) +
                         ") are outside a folio of " + std::to_string(pages.size()) + " pages");
  std::vector<Folio*>& touched_in_memory = touched_;  // in page order, as the zap walks them
  touched_in_memory.clear();
  for (uint64_t i = first; i < first + count;) {
    Page& p = pages[i];
    if (p.in_memory) {  // a present page: unmapped; its swap cache may go
      p.in_memory = false;
      Folio* cf = CacheOf(p);
      if (cf && cf->in_swap_cache() &&
          std::find(touched_in_memory.begin(), touched_in_memory.end(), cf) ==
              touched_in_memory.end())
        touched_in_memory.push_back(cf);
      ++i;
      continue;
    }
    if (p.refs == 0) {
      ++i;
      continue;
    }
    // Batch consecutive swapped-out pages with consecutive slots, across
    // clusters as zap_pte_range()'s swap_pte_batch() does (a folio's pages
    // share one page table): 6.12's __swap_entries_free() then puts a batch
    // that crosses a cluster slot by slot, through the return buffer.
    uint64_t j = i + 1;
    while (j < first + count && !pages[j].in_memory && pages[j].refs > 0 &&
           pages[j].slot().type == p.slot().type &&
           pages[j].slot().offset == pages[j - 1].slot().offset + 1)
      ++j;
    if (Status st = calls_.SwapPutEntriesDirect(p.slot(), j - i); !st.ok())
      return At(where, st.ToString(), st.code());
    for (uint64_t k = i; k < j; ++k) --pages[k].refs;
    i = j;
  }
  // free_swap_cache(): a cached folio no longer mapped loses its swap.
  for (Folio* cf : touched_in_memory) {
    bool mapped = false;
    for (const Page& p : pages) mapped |= p.cache == NumberOf(cf) && p.in_memory;
    FolioLockGuard g(*cf);
    cf->mapped = mapped;
    calls_.Changed(*cf);
    if (!mapped && cf->in_swap_cache()) (void)calls_.FolioFreeSwap(*cf);
  }
  return Status::Ok();
}

// cache: pages swapped back in (fault) and kept in the swap cache.
Status TraceRunner::DoCache(const TraceRecord& r, TFolio& f, const Where& where, bool* in) {
  const std::span<Page> pages = f.pages();
  uint64_t first, count;
  if (!RecordPageRange(r, pages.size(), &first, &count))
    return At(where, "pages are outside a folio of " + std::to_string(pages.size()) + " pages");
  for (uint64_t i = first; i < first + count; ++i) {
    Page& p = pages[i];
    if (p.in_memory || p.refs == 0) continue;
    Folio* cf = CacheOf(p);
    if (cf == nullptr || !cf->in_swap_cache()) {
      cf = NewFolio(0);
      FolioLockGuard g(*cf);
      if (Status st = calls_.SwapCacheAddFolio(*cf, p.slot()); !st.ok())
        return At(where, st.ToString(), st.code());
      p.cache = NumberOf(cf);
    }
    FolioLockGuard g(*cf);
    const int page_in_folio = static_cast<int>(p.slot().offset - cf->swap().offset);
    if (Status st = calls_.FolioPutSwap(*cf, page_in_folio); !st.ok())
      return At(where, st.ToString(), st.code());
    cf->mapped = true;
    calls_.Changed(*cf);
    --p.refs;
    p.in_memory = true;
    *in = true;
  }
  return Status::Ok();
}

// drop-cache: reclaim removes the folio's swap-cache folios; slots with
// count 0 are freed. Refused (and counted) while storage is suspended.
Status TraceRunner::DoDropCache(TFolio& f, const Where& where, bool keep_mapped) {
  std::vector<Folio*>& caches = caches_;
  CacheFolios(f.pages(), &caches);
  for (Folio* cf : caches) {
    FolioLockGuard g(*cf);
    if (!cf->in_swap_cache()) continue;
    // A global drop is reclaim: it removes a folio from the swap cache only
    // once it is unmapped (shrink_folio_list: try_to_unmap, then
    // __remove_mapping), so a folio with a page still mapped in memory keeps
    // its slots (measured on 6.18: docs/fidelity.md "Agreement with the
    // running kernel"). `drop-cache folio=F` is folio_free_swap(): the folio
    // leaves the cache even when mapped (a swap-in that bypasses or frees
    // the swap cache, do_swap_page).
    if (keep_mapped && cf->mapped) continue;
    Status st = calls_.SwapCacheDelFolio(*cf);
    if (st.code() == -EBUSY) {
      ++sum_.skipped_cache_drops;
      continue;
    }
    if (!st.ok()) return At(where, st.ToString(), st.code());
  }
  for (Page& p : f.pages()) {
    if (p.cache != 0 && !CacheOf(p)->in_swap_cache()) {
      p.cache = 0;
      if (p.refs == 0) p.set_slot(SwapEntry{});
    }
  }
  for (Folio* cf : caches) {
    if (!cf->in_swap_cache()) Release(cf);
  }
  return Status::Ok();
}

// swapoff: every page still on the device is brought back into memory.
Result<SwapEntry> TraceRunner::TakeForeignSlot(int cpu,
                                               std::optional<std::pair<uint64_t, uint64_t>> as) {
  if (cpu < 0 || cpu >= sys_.options().nr_cpus)
    return Status(-EINVAL, "cpu " + std::to_string(cpu) + " but the model has " +
                               std::to_string(sys_.options().nr_cpus) + " CPUs (--cpus)");
  Folio* f = NewFolio(0);
  SwapEntry got;
  {
    FolioLockGuard g(*f);
    auto out = calls_.SwapOutFolio(cpu, *f);
    if (!out.ok()) {
      Release(f);
      return out.status();
    }
    if (f->in_swap_cache()) {
      // Its page-table entry's reference, then reclaim drops the clean folio.
      got = f->swap();
      (void)calls_.FolioDupSwap(*f);
      f->mapped = false;
      calls_.Changed(*f);
      (void)calls_.SwapCacheDelFolio(*f);
    }
  }
  Release(f);
  if (!got.valid()) return got;
  std::pair<uint64_t, uint64_t> key{~uint64_t{0}, got.offset};
  for (const auto& [id, t] : devs_)
    if (t == got.type) key.first = id;
  foreign_[as.value_or(key)] = got;
  return got;
}

// foreign: n pages of another process swapped out on `cpu` between the
// records around it; the kernel put them at offset.. of dev.
Status TraceRunner::DoForeign(const TraceRecord& r, const Where& where) {
  const uint64_t n = r.n.value_or(1);
  auto dev = devs_.find(r.dev);
  if (dev == devs_.end()) return At(where, "dev " + std::to_string(r.dev) + " is not on");
  // Checked whole before any slot is taken: a bad record changes nothing,
  // and n is bounded by the device (each slot is a model allocation).
  auto info = sys_.Device(dev->second);
  if (!info.ok()) return At(where, info.status().ToString(), info.status().code());
  if (r.offset == 0 || r.offset >= info->max || n > info->max - r.offset)
    return At(where, "slots " + std::to_string(r.offset) + ".." + std::to_string(r.offset) + "+" +
                         std::to_string(n) + " are outside dev " + std::to_string(r.dev) +
                         " (offsets 1.." + std::to_string(info->max - 1) + ")");
  for (uint64_t i = 0; i < n; ++i)
    if (foreign_.count({r.dev, r.offset + i}))
      return At(where, "dev " + std::to_string(r.dev) + " offset " + std::to_string(r.offset + i) +
                           " is already held by a foreign record");
  for (uint64_t i = 0; i < n; ++i) {
    const std::pair<uint64_t, uint64_t> key{r.dev, r.offset + i};
    auto e = TakeForeignSlot(r.cpu, key);
    if (!e.ok()) return At(where, e.status().ToString(), e.status().code());
    ++sum_.foreign_expected;
    if (e->valid() && e->type == dev->second && e->offset == key.second) ++sum_.foreign_agree;
  }
  return Status::Ok();
}

// scan-base: the kernel's per-CPU scan base on dev for cpu (6.1's random
// cluster_next_cpu) is offset; the model's is set to it.
Status TraceRunner::DoScanBase(const TraceRecord& r, const Where& where) {
  auto dev = devs_.find(r.dev);
  if (dev == devs_.end()) return At(where, "dev " + std::to_string(r.dev) + " is not on");
  if (Status st = calls_.SetScanBase(dev->second, r.cpu, r.offset); !st.ok())
    return At(where, st.ToString(), st.code());
  return Status::Ok();
}

// foreign-free: the other process's slots at offset.. of dev are given back
// (its pages swapped in and the slots freed, or the process gone).
Status TraceRunner::DoForeignFree(const TraceRecord& r, const Where& where) {
  const uint64_t n = r.n.value_or(1);
  // Every slot must be held before any is given back (a bad record changes
  // nothing); more slots than are held cannot be.
  if (n > foreign_.size())
    return At(where, std::to_string(n) + " slots from dev " + std::to_string(r.dev) + " offset " +
                         std::to_string(r.offset) + " but foreign records hold " +
                         std::to_string(foreign_.size()));
  for (uint64_t i = 0; i < n; ++i)
    if (!foreign_.count({r.dev, r.offset + i}))
      return At(where, "no foreign record holds dev " + std::to_string(r.dev) + " offset " +
                           std::to_string(r.offset + i));
  for (uint64_t i = 0; i < n; ++i) {
    auto it = foreign_.find({r.dev, r.offset + i});
    if (it->second.valid()) {
      if (Status st = calls_.SwapPutEntriesDirect(it->second, 1); !st.ok())
        return At(where, st.ToString(), st.code());
    }
    foreign_.erase(it);
    ++sum_.foreign_released;
  }
  return Status::Ok();
}

Status TraceRunner::DoSwapoff(const TraceRecord& r, const Where& where) {
  auto d = devs_.find(r.dev);
  if (d == devs_.end()) return At(where, "dev " + std::to_string(r.dev) + " is not on");
  const int type = d->second;
  UnparkAll();  // any folio may change
  // Foreign slots on the device: swapoff brings the other process's pages in.
  for (auto it = foreign_.begin(); it != foreign_.end();) {
    if (it->second.valid() && it->second.type == type) {
      if (Status st = calls_.SwapPutEntriesDirect(it->second, 1); !st.ok())
        return At(where, st.ToString(), st.code());
      it = foreign_.erase(it);
    } else {
      ++it;
    }
  }
  // Compact folios on this device get a slab entry like the others.
  std::vector<std::pair<uint64_t, uint64_t>> compact;
  index_.Compacts(&compact);
  for (const auto& [id, v] : compact) {
    if (SlotOfCompact(v).type == type) (void)Resolve(id);
  }
  // Every live folio, in slab order: the order is not seen (only slots of
  // the device going away are put, and they all go).
  for (uint32_t i = 0; i < slab_.size(); ++i) {
    TFolio& f = slab_[i];
    if (f.order < 0) continue;
    std::vector<Folio*> caches;  // in page order
    for (Page& p : f.pages()) {
      if (!p.slot().valid() || p.slot().type != type) continue;
      // try_to_unuse: every reference (this mapping's and forked ones) is
      // turned into a present page.
      while (p.refs > 0) {
        if (Status st = calls_.SwapPutEntriesDirect(p.slot(), 1); !st.ok())
          return At(where, st.ToString(), st.code());
        --p.refs;
      }
      Folio* cf = CacheOf(p);
      if (cf && std::find(caches.begin(), caches.end(), cf) == caches.end()) caches.push_back(cf);
    }
    for (Folio* cf : caches) {
      FolioLockGuard g(*cf);
      if (cf->in_swap_cache()) (void)calls_.SwapCacheDelFolio(*cf);
    }
    for (Page& p : f.pages()) {
      if (p.slot().valid() && p.slot().type == type) {
        p.set_slot(SwapEntry{});
        p.cache = 0;
        p.in_memory = true;
      }
    }
  }
  if (Status st = calls_.Swapoff(type); !st.ok()) return At(where, st.ToString(), st.code());
  devs_.erase(d);
  return Status::Ok();
}

}  // namespace swaplab::workload
