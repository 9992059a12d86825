// SPDX-License-Identifier: MIT
// libFuzzer: bytes → a sequence of allocator operations on one SwapSystem
// (small clusters so that lists churn: swapon of small devices, swapoff,
// FolioAllocSwap of orders 0..4 on CPUs 0..3, put / dup by folio and by
// entry, swap-cache drop and add, reclaim, storage suspend, hibernation
// slots), with CheckInvariants() after every operation. Arguments are taken
// as they come, so many calls are misuse (unknown device, a slot not in
// use, a folio not in the cache, an unlocked folio, a CPU out of range):
// those must return an error Status and change nothing the invariants see.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "swaplab/alloc/swap_system.h"

using namespace swaplab;
using alloc::Folio;
using alloc::FolioLockGuard;
using alloc::SwapEntry;

namespace {

// Reads the input a byte at a time; zeros past the end.
class Bytes {
 public:
  Bytes(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool more() const { return i_ < n_; }
  uint8_t u8() { return i_ < n_ ? d_[i_++] : 0; }
  uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }

 private:
  const uint8_t* d_;
  size_t n_;
  size_t i_ = 0;
};

constexpr int kCpus = 4;
constexpr size_t kMaxFolios = 48;
constexpr size_t kMaxOps = 400;

struct Fuzz {
  // Folios outlive the system (it may point at cached folios until it goes).
  std::vector<std::unique_ptr<Folio>> folios;
  std::vector<SwapEntry> hib_slots;
  std::unique_ptr<alloc::SwapSystem> sys;
  int serial = 0;
  // The operations so far (op, a, b), printed on a failure; kept as bytes,
  // formatted only then.
  std::vector<std::array<uint8_t, 3>> log;

  Folio& PickFolio(uint8_t b) {
    if (folios.empty() || (b & 0x80)) {
      if (folios.size() < kMaxFolios) {
        folios.push_back(std::make_unique<Folio>(0));
        return *folios.back();
      }
    }
    return *folios[b % folios.size()];
  }
  SwapEntry PickEntry(Bytes& in) {
    const auto devs = sys->active_devices();
    const uint8_t t = in.u8();
    SwapEntry e;
    e.type = devs.empty() || (t & 0x80) ? static_cast<int>(t & 7) - 1 : devs[t % devs.size()];
    e.offset = in.u16() % 700;
    return e;
  }
  int PickType(uint8_t b) {
    const auto devs = sys->active_devices();
    if (devs.empty() || (b & 0x80)) return static_cast<int>(b & 7) - 1;
    return devs[b % devs.size()];
  }
  void Unuse(SwapEntry e) {
    // try_to_unuse for one slot: bring it back and drop its references.
    auto s = sys->Slot(e);
    if (!s.ok()) return;
    for (uint32_t i = 0; i < s->count; ++i) (void)sys->SwapPutEntriesDirect(e, 1);
    if (s->folio != nullptr) {
      for (auto& f : folios) {
        if (f.get() != s->folio) continue;
        FolioLockGuard g(*f);
        f->mapped = false;
        (void)sys->SwapCacheDelFolio(*f);
      }
    }
  }
  void Op(Bytes& in) {
    const uint8_t op = in.u8();
    const uint8_t a = in.u8(), b = in.u8();
    log.push_back({static_cast<uint8_t>(op % 16), a, b});
    switch (op % 16) {
      case 0: {  // swapon of a small device
        alloc::SwaponOptions o;
        o.name = "dev" + std::to_string(a % 6);
        o.pages = in.u16() % 600;  // below 10 and 0: misuse
        o.ssd = b & 1;
        o.blkdev = b & 2;
        o.discard = static_cast<alloc::DiscardMode>((b >> 2) & 3);
        o.discard_supported = b & 16;
        if (b & 32) o.prio = static_cast<int>(a) - 8;  // negative: misuse
        if (b & 64)
          o.bad_pages = {in.u16() % 650u, in.u16() % 650u};  // maybe duplicated or out of range
        o.bdev = 1 + a % 3;
        o.first_block = 1000u * (a % 5);
        if (b & 128) o.hibernation_reserve_pages = in.u8();
        (void)sys->Swapon(o);
        break;
      }
      case 1: {  // swapoff, with or without giving the slots back
        const int t = PickType(a);
        if (b & 1)
          (void)sys->Swapoff(t, [this](SwapEntry e) { Unuse(e); });
        else
          (void)sys->Swapoff(t);
        break;
      }
      case 2:
      case 3: {  // FolioAllocSwap
        Folio& f = PickFolio(a);
        const int cpu = (b & 0x80) ? (b & 7) - 2 : b % kCpus;  // out of range: misuse
        if (!f.in_swap_cache()) f.set_order((b >> 2) % 5);
        if (b & 0x40) {
          (void)sys->FolioAllocSwap(cpu, f);  // not locked: misuse
        } else {
          FolioLockGuard g(f);
          f.mapped = true;
          (void)sys->FolioAllocSwap(cpu, f);
        }
        break;
      }
      case 4: {  // put by folio (all pages or one)
        Folio& f = PickFolio(a);
        FolioLockGuard g(f);
        (void)sys->FolioPutSwap(f, (b & 1) ? -1 : static_cast<int>(b >> 1) % 20 - 1);
        break;
      }
      case 5: {  // dup by folio
        Folio& f = PickFolio(a);
        FolioLockGuard g(f);
        (void)sys->FolioDupSwap(f, (b & 1) ? -1 : static_cast<int>(b >> 1) % 20 - 1);
        break;
      }
      case 6:
        (void)sys->SwapDupEntryDirect(PickEntry(in));
        break;
      case 7:
        (void)sys->SwapPutEntriesDirect(PickEntry(in), 1 + a % 20);
        break;
      case 8: {  // drop from the swap cache (reclaim)
        Folio& f = PickFolio(a);
        FolioLockGuard g(f);
        f.mapped = b & 1;
        f.writeback = b & 2;
        f.dirty = b & 4;
        (void)sys->SwapCacheDelFolio(f);
        break;
      }
      case 9: {
        Folio& f = PickFolio(a);
        FolioLockGuard g(f);
        f.mapped = b & 1;
        (void)sys->FolioFreeSwap(f);
        break;
      }
      case 10: {  // swap-in: a folio back into the cache over SHADOW slots
        Folio& f = PickFolio(a);
        FolioLockGuard g(f);
        if (!f.in_swap_cache()) f.set_order(b % 5);
        (void)sys->SwapCacheAddFolio(f, PickEntry(in));
        break;
      }
      case 11:
        (void)sys->TryToReclaimSwap(PickEntry(in), b & 7);
        break;
      case 12:
        (void)sys->ReclaimFullClusters(PickType(a), b & 1);
        break;
      case 13:
        sys->SetStorageSuspended(a & 1);
        break;
      case 14: {  // hibernation slots
        if ((a & 1) || hib_slots.empty()) {
          const SwapEntry e = sys->AllocHibernationSlot(b % kCpus, PickType(a >> 1));
          if (e.valid()) hib_slots.push_back(e);
        } else {
          const size_t i = b % hib_slots.size();
          (void)sys->FreeHibernationSlot(hib_slots[i]);
          hib_slots.erase(hib_slots.begin() + static_cast<long>(i));
        }
        break;
      }
      case 15:
        sys->RunDeferredWork();
        break;
    }
    if (const auto inv = sys->CheckInvariants(); !inv.ok()) {
      std::string ops;
      for (const auto& [o, x, y] : log)
        ops += std::to_string(o) + "(" + std::to_string(x) + "," + std::to_string(y) + ") ";
      fprintf(stderr, "invariant %s broken after: %s\n", inv.ToString().c_str(), ops.c_str());
      __builtin_trap();
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  alloc::SystemOptions so;
  so.cluster_shift = 4 + in.u8() % 3;  // 16..64 slots: orders 0..4 fit
  so.nr_cpus = kCpus;
  so.run_deferred_work_inline = in.u8() & 1;
  Fuzz f;
  f.log.reserve(kMaxOps);
  f.sys = std::make_unique<alloc::SwapSystem>(so);
  for (size_t i = 0; i < kMaxOps && in.more(); ++i) f.Op(in);
  f.sys.reset();
  return 0;
}
