// The RFC's two benchmark layouts (seed 001 "Results"; see rfc_layouts.h).
#include "swaplab/hibernate/rfc_layouts.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "swaplab/alloc/folio.h"

namespace swaplab::hibernate {

Result<RfcLayout> ParseRfcLayout(std::string_view s) {
  if (s == "fresh") return RfcLayout::kFresh;
  if (s == "shuffled") return RfcLayout::kShuffled;
  if (s == "holes") return RfcLayout::kHoles;
  return Status(-EINVAL, "layout '" + std::string(s) + "': expected fresh, shuffled or holes");
}

const char* Name(RfcLayout l) {
  switch (l) {
    case RfcLayout::kFresh: return "fresh";
    case RfcLayout::kShuffled: return "shuffled";
    case RfcLayout::kHoles: return "holes";
  }
  return "?";
}

namespace {

// Swaps out `n` order-0 pages; appends their slots.
Status SwapOut(alloc::SwapSystem& sys, alloc::CpuId cpu, uint64_t n, std::vector<uint64_t>* slots) {
  alloc::Folio f(0);
  for (uint64_t i = 0; i < n; ++i) {
    alloc::FolioLockGuard g(f);
    Status st = sys.FolioAllocSwap(cpu, f);
    if (!st.ok()) return Status(st.code() == -ENOMEM ? -ENOSPC : st.code(),
                                "layout: swap-out of page " + std::to_string(i) + ": " + st.message());
    const alloc::SwapEntry e = f.swap();
    st = sys.FolioDupSwap(f);  // the page table's reference
    if (st.ok()) st = sys.SwapCacheDelFolio(f);
    if (!st.ok()) return st;
    slots->push_back(e.offset);
  }
  return Status::Ok();
}

Status Free(alloc::SwapSystem& sys, int type, const uint64_t* slots, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    Status st = sys.SwapPutEntriesDirect(alloc::SwapEntry{type, slots[i]}, 1);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace

Result<LayoutReport> ApplyRfcLayout(alloc::SwapSystem& sys, int type, RfcLayout layout, uint64_t seed,
                                    alloc::CpuId cpu) {
  auto dev = sys.Device(type);
  if (!dev.ok()) return dev.status();
  LayoutReport rep;
  std::vector<uint64_t> slots;
  Status st;
  if (layout == RfcLayout::kShuffled) {
    constexpr uint64_t kFile = 512;  // 2 MiB of 4 KiB pages
    const uint64_t files = dev->pages * 9 / 10 / kFile;  // 5.4 of 6
    rep.pages_swapped_out = files * kFile;
    slots.reserve(rep.pages_swapped_out);
    st = SwapOut(sys, cpu, rep.pages_swapped_out, &slots);
    if (!st.ok()) return st;
    std::vector<uint64_t> order(files);
    for (uint64_t i = 0; i < files; ++i) order[i] = i;
    std::mt19937_64 rng(seed);
    std::shuffle(order.begin(), order.end(), rng);
    for (uint64_t f : order) {
      st = Free(sys, type, slots.data() + f * kFile, kFile);
      if (!st.ok()) return st;
    }
  } else if (layout == RfcLayout::kHoles) {
    constexpr uint64_t kPiece = 16;  // 64 KiB
    rep.pages_swapped_out = dev->pages / 3 / (2 * kPiece) * (2 * kPiece);  // 4 of 12
    slots.reserve(rep.pages_swapped_out);
    st = SwapOut(sys, cpu, rep.pages_swapped_out, &slots);
    if (!st.ok()) return st;
    for (uint64_t i = kPiece; i < slots.size(); i += 2 * kPiece) {
      st = Free(sys, type, slots.data() + i, kPiece);
      if (!st.ok()) return st;
    }
    rep.pages_left = rep.pages_swapped_out / 2;
  }
  return rep;
}

}  // namespace swaplab::hibernate
