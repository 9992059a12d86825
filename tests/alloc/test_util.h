// SPDX-License-Identifier: MIT
// Shared helpers for the allocator unit tests (tests/alloc/*_test.cc).
//
// Harness owns the folios and the SwapSystem (folios are declared first, so
// the system is destroyed before any folio it may still point at). Every
// mutating helper checks all §8 invariants right after the operation and
// reports the first broken one as a test failure; test bodies that call the
// SwapSystem directly use ASSERT_INVARIANTS(sys).
#pragma once

#include <gtest/gtest.h>

#include <cerrno>
#include <deque>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "alloc/property/swap_model.h"
#include "swaplab/alloc/folio.h"
#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/status.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/alloc/types.h"

// Fatal check of every §8 invariant; prints the broken one.
#define ASSERT_INVARIANTS(sys)                                                       \
  do {                                                                               \
    const ::swaplab::alloc::InvariantReport inv_report_ = (sys).CheckInvariants();   \
    ASSERT_TRUE(inv_report_.ok()) << "invariant broken: " << inv_report_.ToString(); \
  } while (0)

// Non-fatal variant (for helpers returning values).
#define EXPECT_INVARIANTS(sys)                                                       \
  do {                                                                               \
    const ::swaplab::alloc::InvariantReport inv_report_ = (sys).CheckInvariants();   \
    EXPECT_TRUE(inv_report_.ok()) << "invariant broken: " << inv_report_.ToString(); \
  } while (0)

// `status` is an error with exactly `code` and a non-empty message.
#define EXPECT_ERRNO(status_expr, want_errno)                         \
  do {                                                                \
    const ::swaplab::Status st_ = (status_expr);                      \
    EXPECT_EQ(st_.code(), (want_errno)) << "got " << st_.ToString();  \
    EXPECT_FALSE(st_.message().empty()) << "error without a message"; \
  } while (0)

namespace swaplab::alloc::test {

using ::swaplab::Result;
using ::swaplab::Status;

// The primary tree of the spec (§0.1, 2026 mm tree): §2.4 search order,
// synchronous discard retry, default priority −1 with round robin (§5.1
// step 8), per-CPU hint for hibernation slots (§6, v7.1+), SHADOW
// placeholder for hibernation slots (§1.4, U2), 4 count bits.
// Made from the presets table (mm-new without HIB entries), so it cannot
// drift from the knobs the table adds.
inline Policy PrimaryPolicy() {
  Result<Policy> p = Policy::Preset("mm-new");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  Policy primary = p.ok() ? *p : Policy{};
  primary.name = "primary-tree";
  primary.hibernation_hib_entry = false;
  return primary;
}

// A named preset (Policy::Preset); the test fails when it is unknown.
inline Policy PresetPolicy(const std::string& name) {
  Result<Policy> p = Policy::Preset(name);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : Policy{};
}

// `p` without the slot cache (one slot per allocation call).
inline Policy NoSlotCache(Policy p) {
  p.slot_cache = false;
  p.slot_cache_return = false;
  return p;
}

inline SystemOptions Options(int cluster_shift = 4, int nr_cpus = 4,
                             Policy policy = PrimaryPolicy()) {
  SystemOptions o;
  o.cluster_shift = cluster_shift;
  o.nr_cpus = nr_cpus;
  o.policy = std::move(policy);
  o.run_deferred_work_inline = true;
  return o;
}

// An SSD block device without discard, no priority: the spec's default case.
inline SwaponOptions Dev(std::string name, uint64_t pages) {
  SwaponOptions d;
  d.name = std::move(name);
  d.pages = pages;
  d.ssd = true;
  d.blkdev = true;
  d.discard = DiscardMode::kNone;
  return d;
}

// Records every discard the allocator issues.
class RecordingSink : public DiscardSink {
 public:
  struct Call {
    int type;
    uint64_t first, nr;
  };
  void Discard(int type, uint64_t first, uint64_t nr) override {
    calls.push_back({type, first, nr});
  }
  uint64_t TotalPages() const {
    uint64_t n = 0;
    for (const auto& c : calls) n += c.nr;
    return n;
  }
  std::vector<Call> calls;
};

// Everything a user can observe, rendered as text, for "state unchanged"
// comparisons (bad input must not mutate anything).
inline std::string Snapshot(const SwapSystem& sys) {
  std::ostringstream os;
  const uint32_t cs = sys.cluster_size();
  int nr_orders = 0;
  while ((1u << nr_orders) <= cs) ++nr_orders;
  os << "nr_swap_pages=" << sys.nr_swap_pages() << " total=" << sys.total_swap_pages()
     << " full=" << sys.vm_swap_full() << " suspended=" << sys.storage_suspended() << "\n";
  os << "active:";
  for (int t : sys.active_devices()) os << " " << t;
  os << "\navail:";
  for (int t : sys.avail_devices()) os << " " << t;
  os << "\n";
  os << "counters " << model::CountersToString(sys.counters()) << "\n";
  for (int cpu = 0; cpu < sys.options().nr_cpus; ++cpu)
    for (int k = 0; k < nr_orders; ++k) {
      const PerCpuHint h = sys.Hint(cpu, k);
      if (h.type >= 0 || h.offset)
        os << "hint[" << cpu << "][" << k << "]=" << h.type << ":" << h.offset << "\n";
    }
  for (int t = 0; t < kMaxSwapfiles; ++t) {
    auto d = sys.Device(t);
    if (!d.ok()) continue;
    const DeviceInfo& i = *d;
    os << "dev " << i.type << " " << i.name << " max=" << i.max << " pages=" << i.pages
       << " inuse=" << i.inuse << " prio=" << i.prio << " ssd=" << i.ssd << " blk=" << i.blkdev
       << " wok=" << i.writeok << " avail=" << i.on_avail_list << " pd=" << i.page_discard
       << " ad=" << i.area_discard << " pin=" << i.hibernation_pinned
       << " lists=" << i.free_clusters << "/" << i.nonfull_clusters << "/" << i.frag_clusters << "/"
       << i.full_clusters << "/" << i.discard_clusters << "/" << i.isolated_clusters << "\n";
    for (uint64_t ci = 0; ci < i.nr_clusters; ++ci) {
      auto cl = sys.Cluster(t, ci);
      if (!cl.ok()) {
        os << " cluster " << ci << " ERR\n";
        continue;
      }
      os << " c" << ci << " " << Name(cl->flag) << " o" << cl->order << " n" << cl->count << " t"
         << cl->has_table << cl->has_extend_table << "\n";
    }
    for (ListId l :
         {ListId::kFree, ListId::kNonfull, ListId::kFrag, ListId::kFull, ListId::kDiscard}) {
      const bool per_order = l == ListId::kNonfull || l == ListId::kFrag;
      for (int k = 0; k < (per_order ? nr_orders : 1); ++k) {
        auto v = sys.List(t, l, k);
        if (!v.ok() || v->empty()) continue;
        os << " " << Name(l) << "[" << k << "]:";
        for (uint64_t x : *v) os << " " << x;
        os << "\n";
      }
    }
    for (uint64_t off = 0; off < i.max; ++off) {
      auto s = sys.Slot(SwapEntry{t, off});
      if (!s.ok()) {
        os << " slot " << off << " ERR\n";
        continue;
      }
      if (s->kind == SlotKind::kEmpty) continue;
      os << " s" << off << " " << Name(s->kind) << " " << s->count << " " << s->folio << "\n";
    }
  }
  return os.str();
}

class Harness {
 private:
  // Declared before sys_: destroyed after it.
  std::deque<std::unique_ptr<Folio>> folios_;
  bool reported_ = false;

 public:
  explicit Harness(SystemOptions o = Options()) : sys(std::move(o)) {}
  SwapSystem sys;

  // Checks every invariant; reports only the first failure of a test.
  void Check(const std::string& after) {
    const InvariantReport r = sys.CheckInvariants();
    if (!r.ok() && !reported_) {
      reported_ = true;
      ADD_FAILURE() << "invariant broken after " << after << ": " << r.ToString();
    }
  }

  int On(const SwaponOptions& o) {
    Result<int> r = sys.Swapon(o);
    EXPECT_TRUE(r.ok()) << "swapon " << o.name << ": " << r.status().ToString();
    Check("swapon " + o.name);
    return r.ok() ? *r : -1;
  }
  Status SwapOff(int type, const SwapSystem::UnuseFn& unuse = {}) {
    Status s = sys.Swapoff(type, unuse);
    Check("swapoff");
    return s;
  }

  Folio& NewFolio(int order = 0) {
    folios_.push_back(std::make_unique<Folio>(order));
    return *folios_.back();
  }
  Folio* Find(const Folio* f) {
    for (auto& p : folios_)
      if (p.get() == f) return p.get();
    return nullptr;
  }

  Status Alloc(CpuId cpu, Folio& f) {
    f.Lock();
    Status s = sys.FolioAllocSwap(cpu, f);
    f.Unlock();
    Check("alloc order " + std::to_string(f.order()) + " cpu " + std::to_string(cpu));
    return s;
  }
  // New folio of `order` allocated on `cpu`; nullptr when it got no slots.
  Folio* AllocNew(CpuId cpu, int order = 0) {
    Folio& f = NewFolio(order);
    return Alloc(cpu, f).ok() ? &f : nullptr;
  }
  // Offset of a new allocation, 0 on failure.
  uint64_t Off(CpuId cpu, int order = 0) {
    Folio* f = AllocNew(cpu, order);
    return f ? f->swap().offset : 0;
  }
  SwapEntry Ent(CpuId cpu, int order = 0) {
    Folio* f = AllocNew(cpu, order);
    return f ? f->swap() : SwapEntry{};
  }

  Status Dup(Folio& f, int page = -1) {
    FolioLockGuard g(f);
    Status s = sys.FolioDupSwap(f, page);
    Check("dup");
    return s;
  }
  Status Put(Folio& f, int page = -1) {
    FolioLockGuard g(f);
    Status s = sys.FolioPutSwap(f, page);
    Check("put");
    return s;
  }
  Status Del(Folio& f) {
    FolioLockGuard g(f);
    Status s = sys.SwapCacheDelFolio(f);
    Check("swap cache del");
    return s;
  }
  bool FreeSwap(Folio& f) {
    FolioLockGuard g(f);
    bool r = sys.FolioFreeSwap(f);
    Check("folio_free_swap");
    return r;
  }
  Status AddCache(Folio& f, SwapEntry e) {
    FolioLockGuard g(f);
    Status s = sys.SwapCacheAddFolio(f, e);
    Check("swap cache add");
    return s;
  }
  Status PutDirect(SwapEntry e, uint64_t nr = 1) {
    Status s = sys.SwapPutEntriesDirect(e, nr);
    Check("swap_put_entries_direct");
    return s;
  }
  Status DupDirect(SwapEntry e) {
    Status s = sys.SwapDupEntryDirect(e);
    Check("swap_dup_entry_direct");
    return s;
  }
  int Reclaim(SwapEntry e, unsigned flags) {
    int r = sys.TryToReclaimSwap(e, flags);
    Check("try_to_reclaim_swap");
    return r;
  }

  // A full swap-out (§3.1 steps 1-3): allocate, unmap (count 1 per page),
  // written and dropped from the cache: every slot SHADOW with count 1.
  SwapEntry SwapOut(CpuId cpu, int order = 0) {
    Folio* f = AllocNew(cpu, order);
    if (!f) return {};
    const SwapEntry e = f->swap();
    EXPECT_TRUE(Dup(*f).ok());
    EXPECT_TRUE(Del(*f).ok());
    return e;
  }

  // Frees the slot of a cache-only order-0 folio (count 0): drop the cache.
  void FreeCacheOnly(Folio& f) { EXPECT_TRUE(Del(f).ok()); }

  // An unuse callback (§5.2 step 4) that drops every reference of a slot:
  // puts a cached folio's counts and removes it from the cache; puts a
  // SHADOW slot's count; frees hibernation slots.
  SwapSystem::UnuseFn DropAll() {
    return [this](SwapEntry e) {
      Result<SlotInfo> s = sys.Slot(e);
      if (!s.ok()) return;
      if (s->kind == SlotKind::kCached && s->folio) {
        Folio* f = Find(s->folio);
        if (!f) return;
        FolioLockGuard g(*f);
        const SwapEntry first = f->swap();
        for (int p = 0; p < f->nr_pages(); ++p) {
          Result<SlotInfo> ps = sys.Slot(SwapEntry{first.type, first.offset + p});
          for (uint32_t c = ps.ok() ? ps->count : 0; c > 0; --c) (void)sys.FolioPutSwap(*f, p);
        }
        (void)sys.SwapCacheDelFolio(*f);
      } else if (s->kind == SlotKind::kShadow) {
        for (uint32_t c = s->count; c > 0; --c) (void)sys.SwapPutEntriesDirect(e, 1);
      } else if (s->kind == SlotKind::kHib) {
        (void)sys.FreeHibernationSlot(e);
      }
    };
  }

  // Observers that fail the test (non-fatally) on error.
  DeviceInfo Dv(int type) const {
    auto r = sys.Device(type);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : DeviceInfo{};
  }
  ClusterInfo Cl(int type, uint64_t idx) const {
    auto r = sys.Cluster(type, idx);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ClusterInfo{};
  }
  std::vector<uint64_t> L(int type, ListId l, int order = 0) const {
    auto r = sys.List(type, l, order);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<uint64_t>{};
  }
  SlotInfo Sl(int type, uint64_t off) const {
    auto r = sys.Slot(SwapEntry{type, off});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : SlotInfo{};
  }
};

using Offs = std::vector<uint64_t>;

}  // namespace swaplab::alloc::test
