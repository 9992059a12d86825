// SPDX-License-Identifier: MIT
// swsusp_header overlay and little helpers of image_format.h (spec §1.4).
#include "swaplab/hibernate/image_format.h"

#include <cstring>
#include <string>

namespace swaplab::hibernate {

bool HasSignature(std::span<const std::byte, kPageSize> page0, const std::array<char, 10>& sig) {
  return std::memcmp(page0.data() + kHdrSig, sig.data(), sig.size()) == 0;
}

// Mirrors kernel/power/swap.c: mark_swapfiles() (the part after the read).
Status MarkSwapHeader(std::span<std::byte, kPageSize> page0, uint64_t image, uint32_t flags,
                      uint32_t hw_sig, uint32_t crc32) {
  if (!HasSignature(page0, kSwapSpace2Sig) && !HasSignature(page0, kSwapSpaceV0Sig))
    return Status(-ENODEV, "mark_swapfiles: no swap header (SWAPSPACE2 / SWAP-SPACE) in page 0");
  std::memcpy(page0.data() + kHdrOrigSig, page0.data() + kHdrSig, 10);
  std::memcpy(page0.data() + kHdrSig, kSuspendSig.data(), 10);
  StoreU64(page0.data() + kHdrImage, image);
  if (hw_sig != 0) {
    StoreU32(page0.data() + kHdrHwSig, hw_sig);
    flags |= kSfHwSig;
  }
  StoreU32(page0.data() + kHdrFlags, flags);
  if (flags & kSfCrc32Mode) StoreU32(page0.data() + kHdrCrc32, crc32);
  return Status::Ok();
}

Result<area::SwsuspHeader> ParseSwsuspHeader(std::span<const std::byte, kPageSize> page0) {
  std::optional<area::SwsuspHeader> h = area::DecodeSwsuspHeader(page0);
  if (!h) return Status(-EINVAL, "swsusp_check: page 0 has no S1SUSPEND signature: no image");
  return *h;
}

}  // namespace swaplab::hibernate
