// SPDX-License-Identifier: MIT
// Byte layout shared by the image writer and reader: the swap map page, the
// swsusp_info page, the swsusp_header overlay on page 0, and the placement
// formulas of the worked example. Spec: ../shared/spec/hibernation.md
// §1.4, §3.3, §4.1, §4.4, §10.2.
#pragma once
#pragma GCC visibility push(default)

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "swaplab/alloc/status.h"
#include "swaplab/area/swap_header.h"

namespace swaplab::hibernate {

using alloc::kPageSize;
inline constexpr uint64_t kMapEntries = kPageSize / 8 - 1;       // E = 511 (MAP_PAGE_ENTRIES)
inline constexpr uint64_t kPagesForIo = (4u << 20) / kPageSize;  // PAGES_FOR_IO = 1024
// PFNs one metadata page of the snapshot holds: 8 bytes each (§3.2).
inline constexpr uint64_t kPfnsPerMetaPage = kPageSize / 8;  // 512

// The image's arithmetic (§3.2, §4.4), named once. M = ⌈N / 512⌉: the
// metadata pages of N saveable pages.
constexpr uint64_t MetaPages(uint64_t saveable) {
  return (saveable + kPfnsPerMetaPage - 1) / kPfnsPerMetaPage;
}
// T = 1 + M + N: the stream's pages without compression (swsusp_info, the
// metadata, the data).
constexpr uint64_t StreamPages(uint64_t saveable) { return 1 + MetaPages(saveable) + saveable; }
// Q = ⌊T / 511⌋: the map pages that fill up; the chain has Q + 1 (§4.4).
constexpr uint64_t FullMapPages(uint64_t stream_pages) { return stream_pages / kMapEntries; }
constexpr uint64_t MapPages(uint64_t stream_pages) { return FullMapPages(stream_pages) + 1; }

// The swsusp_header overlay on page 0 is the area's (area/swap_header.h):
// its offsets, signatures, SF_* bits and decoder.
using area::kHdrCrc32;
using area::kHdrFlags;
using area::kHdrHwSig;
using area::kHdrImage;
using area::kHdrOrigSig;
using area::kHdrSig;
using area::kSfCompressionAlgLz4;
using area::kSfCrc32Mode;
using area::kSfHwSig;
using area::kSfNocompressMode;
using area::kSfPlatformMode;
using area::kSuspendSig;
using area::kSwapSpace2Sig;
using area::kSwapSpaceV0Sig;
using area::SwsuspFlagNames;

// swsusp_info offsets (§3.3, x86-64).
inline constexpr size_t kInfoNumPhyspages = 400, kInfoImagePages = 416, kInfoPages = 424,
                        kInfoSize = 432, kInfoEnd = 440;

using Page = std::array<std::byte, kPageSize>;
// A 4096-aligned page, as the I/O engines want.
struct alignas(4096) AlignedPage {
  Page b{};
  std::byte* data() { return b.data(); }
  const std::byte* data() const { return b.data(); }
};

// A 4096-aligned page left uninitialised by `new RawPage[n]`: buffers that
// a read fills (the reader's frames and rings), with no memset and no
// fault-in before the I/O.
struct alignas(4096) RawPage {
  std::byte bytes[kPageSize];
  std::byte* data() { return bytes; }
  const std::byte* data() const { return bytes; }
};

// Native-endian (x86-64: little-endian, as the kernel's structures).
inline uint64_t LoadU64(const std::byte* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t LoadU32(const std::byte* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline void StoreU64(std::byte* p, uint64_t v) { std::memcpy(p, &v, 8); }
inline void StoreU32(std::byte* p, uint32_t v) { std::memcpy(p, &v, 4); }

// Map page (§4.1): entries[0..510] then next_swap at byte 4088.
inline uint64_t MapEntry(const std::byte* map, uint64_t k) { return LoadU64(map + 8 * k); }
inline uint64_t MapNext(const std::byte* map) { return LoadU64(map + 8 * kMapEntries); }

// The signature in the last 10 bytes of page 0.
bool HasSignature(std::span<const std::byte, kPageSize> page0, const std::array<char, 10>& sig);

// mark_swapfiles() steps 2-4 on a page read from the resume block (§1.4):
// -ENODEV if it holds neither SWAPSPACE2 nor SWAP-SPACE; otherwise keeps the
// reserved bytes, saves orig_sig, writes S1SUSPEND\0, image, flags,
// hw_sig (+SF_HW_SIG when non-zero) and crc32 (only with SF_CRC32_MODE).
Status MarkSwapHeader(std::span<std::byte, kPageSize> page0, uint64_t image, uint32_t flags,
                      uint32_t hw_sig, uint32_t crc32);
// The overlay fields of an S1SUSPEND page (-EINVAL when sig is not S1SUSPEND\0).
Result<area::SwsuspHeader> ParseSwsuspHeader(std::span<const std::byte, kPageSize> page0);

// Placement on a fresh contiguous run starting at slot S (§4.4, §10.2).
inline uint64_t StreamSlot(uint64_t S, uint64_t p) { return S + 1 + p + p / kMapEntries; }
inline uint64_t MapSlot(uint64_t S, uint64_t j) { return S + (kMapEntries + 1) * j; }
// U = T + Q + 1 slots.
inline uint64_t SlotsUsed(uint64_t T) { return T + T / kMapEntries + 1; }

}  // namespace swaplab::hibernate
#pragma GCC visibility pop
