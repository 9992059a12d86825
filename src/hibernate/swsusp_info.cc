// SPDX-License-Identifier: MIT
// swsusp_info and the PFN list (spec §3.3, §3.4).
#include "swaplab/hibernate/swsusp_info.h"

#include <cstring>
#include <string>

#include "swaplab/hibernate/image_format.h"
#include "swaplab/hibernate/snapshot.h"

namespace swaplab::hibernate {
namespace {

constexpr size_t kUtsField = 65;  // __NEW_UTS_LEN + 1
constexpr size_t kInfoVersionCode = 392, kInfoCpus = 408;
constexpr uint64_t kZeroFlag = uint64_t{1} << 63;  // ENCODED_PFN_ZERO_FLAG
constexpr uint64_t kEndOfMap = ~uint64_t{0};       // BM_END_OF_MAP

std::string S(uint64_t v) { return std::to_string(v); }

std::string UtsField(const std::byte* page, int i) {
  const char* f = reinterpret_cast<const char*>(page) + i * kUtsField;
  return std::string(f, strnlen(f, kUtsField));
}

}  // namespace

const char* Name(ImageOrigin o) {
  switch (o) {
    case ImageOrigin::kSwaplab:
      return "swaplab";
    case ImageOrigin::kKernelX86_64:
      return "kernel-x86_64";
    case ImageOrigin::kKernelGeneric:
      return "kernel-generic";
    case ImageOrigin::kUnknown:
      break;
  }
  return "unknown";
}

SwsuspInfo DecodeSwsuspInfo(const std::byte* page) {
  SwsuspInfo i;
  i.num_physpages = LoadU64(page + kInfoNumPhyspages);
  i.cpus = static_cast<int32_t>(LoadU32(page + kInfoCpus));
  i.image_pages = LoadU64(page + kInfoImagePages);
  i.pages = LoadU64(page + kInfoPages);
  i.size = LoadU64(page + kInfoSize);
  i.version_code = LoadU32(page + kInfoVersionCode);
  X86RestoreRecord r;
  r.jump_address = LoadU64(page);
  r.jump_address_phys = LoadU64(page + 8);
  r.cr3 = LoadU64(page + 16);
  r.magic = LoadU64(page + 24);
  r.e820_checksum = LoadU64(page + 32);
  if (IsSwaplabInfoPage(page)) {
    i.origin = ImageOrigin::kSwaplab;
  } else if (r.magic == kX86RestoreMagic) {
    i.origin = ImageOrigin::kKernelX86_64;
    i.x86 = r;
  } else if (i.version_code != 0 && page[0] != std::byte{0}) {
    // init_header_complete() without CONFIG_ARCH_HIBERNATION_HEADER
    i.origin = ImageOrigin::kKernelGeneric;
    i.sysname = UtsField(page, 0);
    i.nodename = UtsField(page, 1);
    i.release = UtsField(page, 2);
    i.version = UtsField(page, 3);
    i.machine = UtsField(page, 4);
    i.domainname = UtsField(page, 5);
  } else {
    static constexpr char kHex[] = "0123456789abcdef";
    for (size_t k = 0; k < 40; ++k) {
      const auto b = static_cast<unsigned>(page[k]);
      i.arch_head_hex += kHex[b >> 4];
      i.arch_head_hex += kHex[b & 15];
    }
  }
  return i;
}

Status CheckInfoCounts(const SwsuspInfo& i) {
  if (i.pages == 0) return Status(-EINVAL, "swsusp_info: pages is 0");
  if (i.image_pages >= i.pages)
    return Status(-EINVAL, "swsusp_info: image_pages " + S(i.image_pages) + " is not below pages " +
                               S(i.pages));
  if (i.pages > (uint64_t{1} << 40) || i.size != i.pages * kPageSize)
    return Status(-EINVAL, "swsusp_info: size " + S(i.size) + " is not pages " + S(i.pages) +
                               " * " + S(kPageSize));
  return Status::Ok();
}

// Mirrors kernel/power/snapshot.c: unpack_orig_pfns() (the decoding; the
// restore kernel's pfn_valid() check cannot be made here).
Status PfnListCheck::Page(uint64_t k, const std::byte* page) {
  if (ended_)
    return Status(-EINVAL, "metadata page " + S(k) + " of " + S(M_) +
                               ": the PFN list already ended in page " + S(k - 1));
  for (uint64_t j = 0; j < kPageSize / 8; ++j) {
    const uint64_t v = LoadU64(page + 8 * j);
    if (v == kEndOfMap) {
      if (k != M_)
        return Status(-EINVAL, "metadata page " + S(k) + " of " + S(M_) + ", entry " + S(j) +
                                   ": the PFN list ends before the last metadata page");
      ended_ = true;
      break;
    }
    const uint64_t pfn = v & ~kZeroFlag;
    if (pfns_ > 0 && pfn <= last_)
      return Status(-EINVAL, "metadata page " + S(k) + ", entry " + S(j) + ": PFN " + S(pfn) +
                                 " does not follow PFN " + S(last_) +
                                 " (the list is in ascending order)");
    if (pfns_ == 0) first_ = pfn;
    last_ = pfn;
    if (!(v & kZeroFlag) && pfn >= watch_lo_ && pfn <= watch_hi_) {
      const uint64_t data_page = pfns_ - zero_;
      if (watch_end_ == 0) watch_first_ = data_page;
      watch_end_ = data_page + 1;
    }
    ++pfns_;
    if (v & kZeroFlag) ++zero_;
  }
  if (!ended_ && k == M_) ended_ = true;  // a list that fills its last page has no marker
  return Status::Ok();
}

Status PfnListCheck::Finish() const {
  if (M_ > 0 && !ended_)
    return Status(-EINVAL, "metadata: the stream ended before metadata page " + S(M_));
  const uint64_t lo = M_ == 0 ? 0 : (M_ - 1) * 512 + 1;
  if (pfns_ < lo || pfns_ > M_ * 512)
    return Status(-EINVAL, "metadata: " + S(pfns_) + " PFNs in " + S(M_) +
                               " metadata pages (expected " + S(lo) + "-" + S(M_ * 512) +
                               ", one page per 512 PFNs)");
  if (pfns_ - zero_ != N_)
    return Status(-EINVAL, "metadata: " + S(pfns_ - zero_) + " PFNs with data (" + S(pfns_) +
                               " listed, " + S(zero_) +
                               " zero pages), swsusp_info says image_pages " + S(N_));
  return Status::Ok();
}

}  // namespace swaplab::hibernate
