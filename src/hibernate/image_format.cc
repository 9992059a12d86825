// swsusp_header overlay and little helpers of image_format.h (spec §1.4).
#include "swaplab/hibernate/image_format.h"

#include <cstdio>
#include <cstring>
#include <utility>
#include <string>

namespace swaplab::hibernate {

std::string SwsuspFlagNames(uint32_t f) {
  static const std::pair<uint32_t, const char*> kBits[] = {{kSfPlatformMode, "PLATFORM_MODE"},
                                                           {kSfNocompressMode, "NOCOMPRESS_MODE"},
                                                           {kSfCrc32Mode, "CRC32_MODE"},
                                                           {kSfHwSig, "HW_SIG"},
                                                           {kSfCompressionAlgLz4, "COMPRESSION_ALG_LZ4"}};
  std::string s;
  for (auto [bit, name] : kBits) {
    if (f & bit) s += std::string(s.empty() ? "" : "|") + name;
    f &= ~bit;
  }
  if (f != 0) s += (s.empty() ? "0x" : "|0x") + [f] {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%x", f);
    return std::string(buf);
  }();
  return s.empty() ? "none" : s;
}

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
  if (!HasSignature(page0, kSuspendSig))
    return Status(-EINVAL, "swsusp_check: page 0 has no S1SUSPEND signature: no image");
  area::SwsuspHeader h;
  h.hw_sig = LoadU32(page0.data() + kHdrHwSig);
  h.crc32 = LoadU32(page0.data() + kHdrCrc32);
  h.image = LoadU64(page0.data() + kHdrImage);
  h.flags = LoadU32(page0.data() + kHdrFlags);
  std::memcpy(h.orig_sig.data(), page0.data() + kHdrOrigSig, 10);
  return h;
}

}  // namespace swaplab::hibernate
