// SPDX-License-Identifier: MIT
// One thread of the concurrency stress test (stress_test.cc): it owns a set
// of CPU ids (contract: one thread per CpuId at a time), the folios it
// swapped out and the swap references it holds, and drives random
// operations on them. Everything it checks is something only it can
// change: its own folios' slots and counts. Folios whose counts are all 0
// may be reclaimed by any other thread at any time; the worker notices when
// it next locks the folio.
#pragma once

#include <array>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "swaplab/alloc/swap_system.h"

namespace swaplab::alloc::stress {

struct WorkerOptions {
  std::vector<CpuId> cpus;
  uint64_t seed = 1;
  uint64_t max_slots = 1024;  // swap out only while holding fewer slots
  int large_order = 4;
  int unmap_percent = 70;          // FolioDupSwap after allocation (the folio is mapped)
  std::vector<int> reclaim_types;  // devices for random TryToReclaimSwap
};

class Worker {
 public:
  Worker(SwapSystem& sys, WorkerOptions opts) : sys_(sys), o_(std::move(opts)), rng_(o_.seed) {}
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // One random operation (one or a few API calls).
  void Step();
  // Gives back every reference and cached folio. Call after the threads
  // stopped (or from the owning thread).
  void DropAll();
  // Slots this worker accounts for right now; call only at quiescence.
  uint64_t SlotsInUse() const;

  uint64_t api_calls() const { return calls_; }
  const std::vector<std::string>& errors() const { return errors_; }
  uint64_t allocs() const { return allocs_; }
  uint64_t alloc_failures() const { return alloc_failures_; }
  uint64_t lost_to_reclaim() const { return lost_to_reclaim_; }
  // Folios placed (allocation or split page) per device type.
  uint64_t placed_on(int type) const {
    return placed_on_[static_cast<size_t>(type) % placed_on_.size()];
  }

 private:
  // A folio this worker put in the swap cache; refs[p] = swap references
  // it holds on page p (mappings turned into swap entries).
  struct Held {
    std::unique_ptr<Folio> f;
    std::vector<uint32_t> refs;
    bool AllZero() const {
      for (uint32_t r : refs) {
        if (r) return false;
      }
      return true;
    }
  };
  // Pages whose folio left the swap cache; refs[p] == 0: no longer ours.
  struct Swapped {
    SwapEntry first;
    std::vector<uint32_t> refs;
    uint64_t live = 0;
  };

  uint32_t Rand(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }
  void Error(const std::string& what);
  std::unique_ptr<Folio> TakeFolio(int order);
  void Recycle(std::unique_ptr<Folio> f);  // f unlocked, known out of the cache
  // With h.f locked: false (and bookkeeping done) if another thread
  // reclaimed it.
  bool StillCached(Held& h);
  void RemoveHeld(size_t i);  // h.f locked and out of the cache
  void CheckPlacement(const Folio& f, const char* what);
  void Adopt(std::unique_ptr<Folio> f);  // f locked, freshly placed

  void Alloc();
  void DupPut();
  void DropCache();
  void Zap();
  void SwapIn();
  void FreeSwap();
  void Fork();
  void Flags();
  void Verify();

  SwapSystem& sys_;
  WorkerOptions o_;
  std::mt19937_64 rng_;
  std::vector<Held> held_;
  std::vector<Swapped> swapped_;
  std::vector<std::unique_ptr<Folio>> spare_;
  uint64_t held_slots_ = 0;  // approximate, for max_slots
  uint64_t calls_ = 0, allocs_ = 0, alloc_failures_ = 0, lost_to_reclaim_ = 0;
  std::array<uint64_t, kMaxSwapfiles> placed_on_{};
  std::vector<std::string> errors_;
};

inline void Worker::Error(const std::string& what) {
  if (errors_.size() < 20) errors_.push_back(what);
}

inline std::unique_ptr<Folio> Worker::TakeFolio(int order) {
  std::unique_ptr<Folio> f;
  if (!spare_.empty()) {
    f = std::move(spare_.back());
    spare_.pop_back();
  } else {
    f = std::make_unique<Folio>(order);
  }
  FolioLockGuard g(*f);
  f->set_order(order);
  f->mapped = true;
  f->writeback = false;
  f->dirty = false;
  return f;
}

inline void Worker::Recycle(std::unique_ptr<Folio> f) {
  if (spare_.size() < 64) {
    spare_.push_back(std::move(f));
    return;
  }
  // Destroy only while holding the lock and out of the cache (folio.h).
  f->Lock();
  if (f->in_swap_cache()) {
    f->Unlock();
    Error("recycled folio is in the swap cache");
    spare_.push_back(std::move(f));  // leak-free: keep it
    return;
  }
  f.reset();
}

inline bool Worker::StillCached(Held& h) {
  if (h.f->in_swap_cache()) return true;
  if (!h.AllZero()) Error("a folio with swap references left the swap cache (§4.2 step 5)");
  ++lost_to_reclaim_;
  return false;
}

inline void Worker::RemoveHeld(size_t i) {
  Held h = std::move(held_[i]);
  held_[i] = std::move(held_.back());
  held_.pop_back();
  held_slots_ -= std::min<uint64_t>(held_slots_, h.refs.size());
  h.f->Unlock();
  Recycle(std::move(h.f));
}

inline void Worker::CheckPlacement(const Folio& f, const char* what) {
  const SwapEntry e = f.swap();
  const uint64_t n = f.nr_pages();
  const uint64_t cs = sys_.cluster_size();
  if (!e.valid()) {
    Error(std::string(what) + ": cached folio without a valid entry");
  } else if (e.offset % n != 0 || e.offset / cs != (e.offset + n - 1) / cs) {
    Error(std::string(what) + ": order-" + std::to_string(f.order()) + " folio at offset " +
          std::to_string(e.offset) + " not aligned inside one cluster (S4)");
  }
}

inline void Worker::Adopt(std::unique_ptr<Folio> f) {
  ++placed_on_[static_cast<size_t>(f->swap().type) % placed_on_.size()];
  Held h;
  h.refs.assign(f->nr_pages(), 0);
  if (static_cast<int>(Rand(100)) < o_.unmap_percent) {
    ++calls_;
    Status st = sys_.FolioDupSwap(*f);
    if (st.ok()) {
      h.refs.assign(f->nr_pages(), 1);
      f->mapped = Rand(2) == 0;
    } else {
      Error("FolioDupSwap after allocation: " + st.ToString());
    }
  }
  held_slots_ += h.refs.size();
  f->Unlock();
  h.f = std::move(f);
  held_.push_back(std::move(h));
}

inline void Worker::Alloc() {
  const int order = Rand(10) < 7 ? 0 : o_.large_order;
  const CpuId cpu = o_.cpus[Rand(static_cast<uint32_t>(o_.cpus.size()))];
  std::unique_ptr<Folio> f = TakeFolio(order);
  f->Lock();
  ++allocs_;
  if (order > 0 && Rand(3) == 0) {
    std::vector<std::unique_ptr<Folio>> parts;
    std::vector<Folio*> ptrs;
    for (int i = 0; i < (1 << order); ++i) {
      parts.push_back(TakeFolio(0));
      ptrs.push_back(parts.back().get());
    }
    ++calls_;
    auto r = sys_.SwapOutFolio(cpu, *f, ptrs);
    if (!r.ok() && r.status().code() != -ENOMEM) Error("SwapOutFolio: " + r.status().ToString());
    if (r.ok() && !r->split && r->pages_placed > 0) {
      CheckPlacement(*f, "SwapOutFolio");
      Adopt(std::move(f));
    } else {
      if (f->in_swap_cache()) Error("SwapOutFolio split but left the folio cached");
      f->Unlock();
      Recycle(std::move(f));
      if (!r.ok() || r->pages_placed == 0) ++alloc_failures_;
    }
    for (auto& p : parts) {
      p->Lock();  // another CPU may have reclaimed it already (cache-only)
      if (p->in_swap_cache()) {
        CheckPlacement(*p, "SwapOutFolio split page");
        Adopt(std::move(p));
      } else {
        p->Unlock();
        Recycle(std::move(p));
      }
    }
    return;
  }
  ++calls_;
  const Status st = sys_.FolioAllocSwap(cpu, *f);
  if (!st.ok()) {
    if (st.code() != -ENOMEM) Error("FolioAllocSwap: " + st.ToString());
    ++alloc_failures_;
    f->Unlock();
    Recycle(std::move(f));
    return;
  }
  CheckPlacement(*f, "FolioAllocSwap");
  Adopt(std::move(f));
}

inline void Worker::DupPut() {
  if (held_.empty()) return;
  const size_t i = Rand(static_cast<uint32_t>(held_.size()));
  Held& h = held_[i];
  h.f->Lock();
  if (!StillCached(h)) return RemoveHeld(i);
  const int n = h.f->nr_pages();
  if (Rand(2) == 0) {
    const int page = static_cast<int>(Rand(n + 1)) - 1;
    bool capped = false;
    for (int p = 0; p < n; ++p) capped |= (page < 0 || p == page) && h.refs[p] > 40;
    if (!capped) {
      ++calls_;
      const Status st = sys_.FolioDupSwap(*h.f, page);
      if (!st.ok()) Error("FolioDupSwap: " + st.ToString());
      for (int p = 0; st.ok() && p < n; ++p) h.refs[p] += (page < 0 || p == page) ? 1 : 0;
    }
  } else {
    const int p = static_cast<int>(Rand(n));
    if (h.refs[p] > 0) {
      ++calls_;
      const Status st = sys_.FolioPutSwap(*h.f, p);
      if (!st.ok()) Error("FolioPutSwap: " + st.ToString());
      if (st.ok()) --h.refs[p];
    }
  }
  h.f->Unlock();
}

inline void Worker::DropCache() {
  if (held_.empty()) return;
  const size_t i = Rand(static_cast<uint32_t>(held_.size()));
  Held& h = held_[i];
  h.f->Lock();
  if (!StillCached(h)) return RemoveHeld(i);
  h.f->writeback = false;
  const SwapEntry first = h.f->swap();
  ++calls_;
  const Status st = sys_.SwapCacheDelFolio(*h.f);
  if (!st.ok()) {
    // Only the hibernation thread's storage suspension may refuse it.
    if (st.code() != -EBUSY) Error("SwapCacheDelFolio: " + st.ToString());
    h.f->Unlock();
    return;
  }
  Swapped s{first, h.refs, 0};
  for (uint32_t r : s.refs) s.live += r ? 1 : 0;
  held_slots_ += s.live;
  if (s.live) swapped_.push_back(std::move(s));
  RemoveHeld(i);
}

inline void Worker::Zap() {
  if (!swapped_.empty() && (held_.empty() || Rand(3) != 0)) {
    const size_t i = Rand(static_cast<uint32_t>(swapped_.size()));
    Swapped& s = swapped_[i];
    const uint32_t n = static_cast<uint32_t>(s.refs.size());
    uint32_t p = Rand(n);
    while (s.refs[p] == 0) p = (p + 1) % n;
    uint32_t len = 1;
    const uint32_t want = 1 + Rand(n);
    while (len < want && p + len < n && s.refs[p + len] > 0) ++len;
    ++calls_;
    const Status st = sys_.SwapPutEntriesDirect({s.first.type, s.first.offset + p}, len);
    if (!st.ok()) return Error("SwapPutEntriesDirect: " + st.ToString());
    for (uint32_t q = p; q < p + len; ++q) {
      if (--s.refs[q] == 0) {
        --s.live;
        --held_slots_;
      }
    }
    if (s.live == 0) {
      swapped_[i] = std::move(swapped_.back());
      swapped_.pop_back();
    }
    return;
  }
  if (held_.empty()) return;
  // Zap a mapped page of a folio that is still in the swap cache.
  const size_t i = Rand(static_cast<uint32_t>(held_.size()));
  Held& h = held_[i];
  h.f->Lock();
  if (!StillCached(h)) return RemoveHeld(i);
  const int p = static_cast<int>(Rand(h.f->nr_pages()));
  if (h.refs[p] == 0) return h.f->Unlock();
  const SwapEntry e{h.f->swap().type, h.f->swap().offset + p};
  h.f->Unlock();  // the zap may reclaim the folio (UNMAPPED|FULL)
  ++calls_;
  const Status st = sys_.SwapPutEntriesDirect(e, 1);
  if (!st.ok()) return Error("SwapPutEntriesDirect(cached): " + st.ToString());
  --h.refs[p];
}

inline void Worker::SwapIn() {
  if (swapped_.empty()) return;
  const size_t i = Rand(static_cast<uint32_t>(swapped_.size()));
  Swapped& s = swapped_[i];
  const uint32_t n = static_cast<uint32_t>(s.refs.size());
  // Whole folio back in one piece when every page is still swapped out.
  const bool whole = n > 1 && s.live == n && Rand(3) == 0;
  uint32_t p = whole ? 0 : Rand(n);
  while (s.refs[p] == 0) p = (p + 1) % n;
  int order = 0;
  while ((1u << order) < (whole ? n : 1)) ++order;
  std::unique_ptr<Folio> f = TakeFolio(order);
  f->Lock();
  ++calls_;
  const Status st = sys_.SwapCacheAddFolio(*f, {s.first.type, s.first.offset + p});
  if (!st.ok()) {
    Error("SwapCacheAddFolio: " + st.ToString());
    f->Unlock();
    return Recycle(std::move(f));
  }
  Held h;
  h.refs.assign(s.refs.begin() + p, s.refs.begin() + p + (1u << order));
  for (uint32_t q = p; q < p + (1u << order); ++q) s.refs[q] = 0;
  s.live -= 1u << order;
  held_slots_ -= 1u << order;
  if (s.live == 0) {
    swapped_[i] = std::move(swapped_.back());
    swapped_.pop_back();
  }
  // The fault maps the page: one swap reference goes away.
  if (Rand(2) == 0 && h.refs[0] > 0) {
    ++calls_;
    const Status put = sys_.FolioPutSwap(*f, 0);
    if (!put.ok()) Error("FolioPutSwap after swap-in: " + put.ToString());
    if (put.ok()) --h.refs[0];
  }
  f->mapped = Rand(2) == 0;
  held_slots_ += h.refs.size();
  f->Unlock();
  h.f = std::move(f);
  held_.push_back(std::move(h));
}

inline void Worker::FreeSwap() {
  if (held_.empty()) return;
  const size_t i = Rand(static_cast<uint32_t>(held_.size()));
  Held& h = held_[i];
  h.f->Lock();
  if (!StillCached(h)) return RemoveHeld(i);
  ++calls_;
  const bool freed = sys_.FolioFreeSwap(*h.f);
  if (freed && !h.AllZero()) Error("FolioFreeSwap freed a folio with swap references (§3.4)");
  if (freed) return RemoveHeld(i);
  h.f->Unlock();
}

inline void Worker::Fork() {
  if (swapped_.empty()) return;
  Swapped& s = swapped_[Rand(static_cast<uint32_t>(swapped_.size()))];
  uint32_t p = Rand(static_cast<uint32_t>(s.refs.size()));
  while (s.refs[p] == 0) p = (p + 1) % s.refs.size();
  if (s.refs[p] > 40) return;
  ++calls_;
  const Status st = sys_.SwapDupEntryDirect({s.first.type, s.first.offset + p});
  if (!st.ok()) return Error("SwapDupEntryDirect: " + st.ToString());
  ++s.refs[p];
}

inline void Worker::Flags() {
  if (held_.empty()) return;
  const size_t i = Rand(static_cast<uint32_t>(held_.size()));
  Held& h = held_[i];
  h.f->Lock();
  if (!StillCached(h)) return RemoveHeld(i);
  h.f->mapped = Rand(2) == 0;
  h.f->writeback = Rand(8) == 0;
  h.f->Unlock();
}

// The slots of this worker's folios and swapped pages hold exactly its
// counts: nobody else may change them.
inline void Worker::Verify() {
  if (!held_.empty()) {
    const size_t i = Rand(static_cast<uint32_t>(held_.size()));
    Held& h = held_[i];
    h.f->Lock();
    if (!StillCached(h)) return RemoveHeld(i);
    for (int p = 0; p < h.f->nr_pages(); ++p) {
      ++calls_;
      auto s = sys_.Slot({h.f->swap().type, h.f->swap().offset + p});
      if (!s.ok() || s->kind != SlotKind::kCached || s->folio != h.f.get() ||
          s->count != h.refs[p]) {
        Error("Slot() of an owned cached page: " +
              (s.ok() ? std::string(Name(s->kind)) + " count " + std::to_string(s->count)
                      : s.status().ToString()) +
              ", want cached count " + std::to_string(h.refs[p]));
      }
    }
    h.f->Unlock();
  }
  if (!swapped_.empty()) {
    const Swapped& s = swapped_[Rand(static_cast<uint32_t>(swapped_.size()))];
    for (size_t p = 0; p < s.refs.size(); ++p) {
      if (s.refs[p] == 0) continue;
      ++calls_;
      auto r = sys_.Slot({s.first.type, s.first.offset + p});
      if (!r.ok() || r->kind != SlotKind::kShadow || r->count != s.refs[p]) {
        Error("Slot() of an owned swapped-out page: " +
              (r.ok() ? std::string(Name(r->kind)) + " count " + std::to_string(r->count)
                      : r.status().ToString()) +
              ", want shadow count " + std::to_string(s.refs[p]));
      }
    }
  }
}

inline void Worker::Step() {
  const uint32_t r = Rand(100);
  if (r < 30) {
    if (held_slots_ < o_.max_slots) {
      Alloc();
    } else if (!swapped_.empty() && Rand(2) == 0) {
      Zap();  // at the cap: give slots back
    } else {
      FreeSwap();
      DropCache();
    }
  } else if (r < 43) {
    DupPut();
  } else if (r < 55) {
    DropCache();
  } else if (r < 68) {
    Zap();
  } else if (r < 75) {
    SwapIn();
  } else if (r < 79) {
    FreeSwap();
  } else if (r < 85) {
    if (o_.reclaim_types.empty()) return;
    const int t = o_.reclaim_types[Rand(static_cast<uint32_t>(o_.reclaim_types.size()))];
    auto d = sys_.Device(t);
    if (!d.ok() || d->max < 2) return;
    ++calls_;
    (void)sys_.TryToReclaimSwap({t, 1 + rng_() % (d->max - 1)}, 1 + Rand(7));
  } else if (r < 89) {
    Fork();
  } else if (r < 91) {
    if (o_.reclaim_types.empty()) return;
    ++calls_;
    (void)sys_.ReclaimFullClusters(
        o_.reclaim_types[Rand(static_cast<uint32_t>(o_.reclaim_types.size()))], Rand(2) == 0);
  } else if (r < 95) {
    Flags();
  } else {
    Verify();
  }
}

inline uint64_t Worker::SlotsInUse() const {
  uint64_t n = 0;
  for (const Held& h : held_) n += h.f->in_swap_cache() ? h.refs.size() : 0;
  for (const Swapped& s : swapped_) n += s.live;
  return n;
}

inline void Worker::DropAll() {
  while (!held_.empty()) {
    Held& h = held_.back();
    h.f->Lock();
    if (StillCached(h)) {
      for (int p = 0; p < h.f->nr_pages(); ++p) {
        for (; h.refs[p] > 0; --h.refs[p]) {
          ++calls_;
          const Status st = sys_.FolioPutSwap(*h.f, p);
          if (!st.ok()) {
            Error("DropAll FolioPutSwap: " + st.ToString());
            break;
          }
        }
      }
      h.f->writeback = false;
      ++calls_;
      const Status st = sys_.SwapCacheDelFolio(*h.f);
      if (!st.ok()) Error("DropAll SwapCacheDelFolio: " + st.ToString());
    }
    RemoveHeld(held_.size() - 1);
  }
  for (Swapped& s : swapped_) {
    for (size_t p = 0; p < s.refs.size(); ++p) {
      for (; s.refs[p] > 0; --s.refs[p]) {
        ++calls_;
        const Status st = sys_.SwapPutEntriesDirect({s.first.type, s.first.offset + p}, 1);
        if (!st.ok()) {
          Error("DropAll SwapPutEntriesDirect: " + st.ToString());
          break;
        }
      }
    }
  }
  swapped_.clear();
  held_slots_ = 0;
}

}  // namespace swaplab::alloc::stress
