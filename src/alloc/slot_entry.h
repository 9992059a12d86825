// SPDX-License-Identifier: MIT
// One slot of a cluster's swap table, packed in a 64-bit word (kernel:
// mm/swap_table.h). Layout:
//   bits 0..2   kind (SlotKind)
//   bits 3..10  inline count (0..count_max; count_max == "see extend table")
//   bits 11..63 payload: Folio* >> 3 for CACHED (0: held by the slot cache)
#pragma once

#include <cstdint>

#include "swaplab/alloc/folio.h"
#include "swaplab/alloc/types.h"

namespace swaplab::alloc::slot {

inline constexpr uint64_t kKindMask = 0x7;
inline constexpr int kCountShift = 3;
inline constexpr uint64_t kCountMask = 0xff;
inline constexpr int kPayloadShift = 11;
inline constexpr int kMaxInlineCount = 0xff;

constexpr uint64_t kEmpty = 0;

inline SlotKind Kind(uint64_t e) { return static_cast<SlotKind>(e & kKindMask); }
inline uint32_t Count(uint64_t e) { return static_cast<uint32_t>((e >> kCountShift) & kCountMask); }
inline Folio* FolioOf(uint64_t e) { return reinterpret_cast<Folio*>((e >> kPayloadShift) << 3); }
inline uint64_t Make(SlotKind k, uint32_t count, uint64_t payload = 0) {
  return static_cast<uint64_t>(k) | (static_cast<uint64_t>(count) << kCountShift) |
         (payload << kPayloadShift);
}
inline uint64_t Cached(Folio* f, uint32_t count) {
  return Make(SlotKind::kCached, count, reinterpret_cast<uint64_t>(f) >> 3);
}
inline uint64_t Shadow(uint32_t count) { return Make(SlotKind::kShadow, count); }
inline uint64_t Bad() { return Make(SlotKind::kBad, 0); }
inline uint64_t Hib() { return Make(SlotKind::kHib, 0); }
// A cache-only slot the full-cluster reclaim can take back: in the swap
// cache with a folio (not held by the slot cache) and count 0 (what
// swap_reclaim_full_clusters() looks for).
inline bool Reclaimable(uint64_t e) {
  return (e & (kKindMask | (kCountMask << kCountShift))) ==
             static_cast<uint64_t>(SlotKind::kCached) &&
         (e >> kPayloadShift) != 0;
}
inline uint64_t WithCount(uint64_t e, uint32_t count) {
  return (e & ~(kCountMask << kCountShift)) | (static_cast<uint64_t>(count) << kCountShift);
}

}  // namespace swaplab::alloc::slot
