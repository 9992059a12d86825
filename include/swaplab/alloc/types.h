// SPDX-License-Identifier: MIT
// Core vocabulary of the allocator: swap entries, CPU ids, slot kinds,
// cluster flags and list names (allocator spec §1).
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <string_view>

namespace swaplab::alloc {

// Maximum number of swap devices (kernel: MAX_SWAPFILES, 32 minus reserved
// types; we keep the common value).
inline constexpr int kMaxSwapfiles = 32;
// Page size the model assumes (x86-64): every layer's page.
inline constexpr uint64_t kPageSize = 4096;
// The largest folio order: a PMD-sized folio with 4 KiB pages
// (HPAGE_PMD_ORDER), the largest mTHP size a swap-out takes whole.
inline constexpr int kMaxFolioOrder = 9;
// Order of a PMD-sized folio: CLUSTER = 512 = 2^9 (SWAPFILE_CLUSTER).
inline constexpr int kDefaultClusterShift = kMaxFolioOrder;
// Highest cluster shift the library accepts (entry counts fit 16 bits).
inline constexpr int kMaxClusterShift = 15;
inline constexpr int kMaxOrders = kMaxClusterShift + 1;
// The highest folio order a trace or a caller may name: a folio fits a
// cluster of the largest shift.
inline constexpr int kMaxOrder = kMaxOrders - 1;
// The highest priority swapon(2) takes (SWAP_FLAG_PRIO_MASK, 0x7fff):
// swapon --priority, a trace's `prio`, a scenario's device.
inline constexpr int kMaxSwapPrio = 32767;
// Inline count capacity of a slot entry in the primary tree (4 bits).
inline constexpr int kDefaultCountMax = 15;

// SplitMix64 (Steele, Lea, Flood 2014), the one seeded generator of the
// project: the model's scan-base draws, the workload's Rng, the synthetic
// snapshot's page contents. The same seed gives the same sequence on every
// platform. SplitMix64Hash(x) mixes x + the golden gamma;
// SplitMix64Next(state) advances the state by that gamma and returns the
// hash of the state it left.
inline constexpr uint64_t kSplitMix64Gamma = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t SplitMix64Hash(uint64_t x) {
  uint64_t z = x + kSplitMix64Gamma;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
constexpr uint64_t SplitMix64Next(uint64_t* state) {
  const uint64_t z = SplitMix64Hash(*state);
  *state += kSplitMix64Gamma;
  return z;
}

// CPU the caller says an operation runs on (design.md: CpuId).
using CpuId = int;

// A swap slot: (device type, slot offset). Offset 0 is the header page and
// doubles as "no slot" (kernel: SWAP_ENTRY_INVALID).
struct SwapEntry {
  int type = -1;
  uint64_t offset = 0;
  bool valid() const { return offset != 0 && type >= 0; }
  friend bool operator==(const SwapEntry&, const SwapEntry&) = default;
};

// Kinds of a slot entry (allocator spec §1.4).
enum class SlotKind : uint8_t {
  kEmpty = 0,   // free, allocatable
  kCached = 1,  // belongs to a folio in the swap cache (count may be 0)
  kShadow = 2,  // swapped out, not in memory (count >= 1)
  kBad = 3,     // header, bad page, or past the end of the device
  kHib = 4,     // reserved for a hibernation image (newer trees, §6)
};

// Which list a cluster is on (allocator spec §1.3). Order matters: a
// cluster is usable only with one of the first four.
enum class ClusterFlag : uint8_t {
  kNone = 0,
  kFree = 1,
  kNonfull = 2,
  kFrag = 3,
  kFull = 4,
  kDiscard = 5,
};

enum class ListId : uint8_t { kFree, kNonfull, kFrag, kFull, kDiscard };

// swapon's discard flag (allocator spec §5.1 step 7).
enum class DiscardMode : uint8_t { kNone, kOnce, kPages, kBoth };

std::string_view Name(SlotKind k);
std::string_view Name(ClusterFlag f);
std::string_view Name(ListId l);
std::string_view Name(DiscardMode m);

}  // namespace swaplab::alloc
#pragma GCC visibility pop
