// SPDX-License-Identifier: MIT
// The on-disk swap area header (union swap_header, format v1 "SWAPSPACE2")
// and the hibernation overlay (struct swsusp_header). Byte layout:
// ../shared/spec/hibernation.md §1 and docs/formats.md.
#pragma once
#pragma GCC visibility push(default)

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/alloc/types.h"

namespace swaplab::area {

using alloc::kPageSize;
inline constexpr uint32_t kMaxSwapBadpages = 637;  // (PAGE_SIZE − 10 − 1536) / 4
inline constexpr uint64_t kMinAreaPages = 10;      // mkswap refuses fewer
// The label field is 16 bytes and readers (kernel, blkid) take all 16, but
// mkswap and swaplabel write at most 15 and a NUL.
inline constexpr size_t kMaxLabelBytes = 15;

// What the last 10 bytes of page 0 hold (§1.1).
enum class Signature {
  kSwapSpace2,   // "SWAPSPACE2": v1 swap area
  kSwapSpaceV0,  // "SWAP-SPACE": obsolete v0
  kSuspend,      // "S1SUSPEND\0": a hibernation image was written
  kZeros,        // all ten bytes zero
  kUnknown,
};
const char* Name(Signature s);

// The v1 fields (§1.1), in native byte order after decoding.
struct SwapHeaderV1 {
  uint32_t version = 1;
  uint32_t last_page = 0;  // area = last_page + 1 pages, header included
  std::vector<uint32_t> bad_pages;
  std::array<uint8_t, 16> uuid{};
  std::string label;  // read: up to 16 bytes; written: up to kMaxLabelBytes
};

// The last 10 bytes of page 0 (§1.1, §1.4).
inline constexpr std::array<char, 10> kSuspendSig = {'S', '1', 'S', 'U', 'S',
                                                     'P', 'E', 'N', 'D', '\0'};
inline constexpr std::array<char, 10> kSwapSpace2Sig = {'S', 'W', 'A', 'P', 'S',
                                                        'P', 'A', 'C', 'E', '2'};
inline constexpr std::array<char, 10> kSwapSpaceV0Sig = {'S', 'W', 'A', 'P', '-',
                                                         'S', 'P', 'A', 'C', 'E'};

// swsusp_header field offsets in page 0 (§1.4), packed at its end.
inline constexpr size_t kHdrHwSig = 4056, kHdrCrc32 = 4060, kHdrImage = 4064, kHdrFlags = 4072,
                        kHdrOrigSig = 4076, kHdrSig = 4086;

// SF_* bits of swsusp_header.flags (§1.4, kernel/power/power.h).
inline constexpr uint32_t kSfPlatformMode = 1;
inline constexpr uint32_t kSfNocompressMode = 2;
inline constexpr uint32_t kSfCrc32Mode = 4;
inline constexpr uint32_t kSfHwSig = 8;
inline constexpr uint32_t kSfCompressionAlgLz4 = 16;

// "CRC32_MODE|COMPRESSION_ALG_LZ4", "none" for 0; unknown bits as 0x….
std::string SwsuspFlagNames(uint32_t flags);

// The hibernation overlay at the end of page 0 (§1.4).
struct SwsuspHeader {
  uint32_t hw_sig = 0;
  uint32_t crc32 = 0;
  uint64_t image = 0;  // dblock of map page 0
  uint32_t flags = 0;
  std::array<char, 10> orig_sig{};
};

struct DecodedHeader {
  Signature signature = Signature::kUnknown;
  std::array<char, 10> magic{};  // the raw 10 bytes
  bool byte_swapped = false;     // version read as 1 only after swapping
  SwapHeaderV1 v1;               // meaningful for SWAPSPACE2 and S1SUSPEND
  // nr_badpages as stored (after the byte-order fix-up); v1.bad_pages holds
  // the first min(nr_badpages, kMaxSwapBadpages) entries.
  uint32_t nr_badpages = 0;
  std::optional<SwsuspHeader> hibernation;  // for S1SUSPEND
};

// The page mkswap writes for `h` (bytes [0,1024) zero; the label cut to
// kMaxLabelBytes; nr_badpages = bad_pages.size(), at most 637 entries stored).
std::array<std::byte, kPageSize> EncodeHeader(const SwapHeaderV1& h);
// Decodes any page; never fails, reports what it found.
DecodedHeader DecodeHeader(std::span<const std::byte, kPageSize> page);
// The overlay fields of a page whose signature is S1SUSPEND\0 (as
// swsusp_check reads them); nullopt for any other signature.
std::optional<SwsuspHeader> DecodeSwsuspHeader(std::span<const std::byte, kPageSize> page);

// The checks swapon makes (allocator spec §5.1, hibernation spec §1.3),
// refusing with a message that names the field and its value.
// size_bytes: the file or device size; regular_file: bad pages refused.
Status ValidateForSwapon(const DecodedHeader& h, uint64_t size_bytes, bool regular_file);

// "0123abcd-..." ⇄ 16 bytes.
std::string UuidToString(const std::array<uint8_t, 16>& u);
Result<std::array<uint8_t, 16>> ParseUuid(const std::string& s);

}  // namespace swaplab::area
#pragma GCC visibility pop
