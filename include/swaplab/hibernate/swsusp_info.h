// SPDX-License-Identifier: MIT
// struct swsusp_info, the first page of every image stream (hibernation
// spec §3.3; kernel/power/power.h, kernel/power/snapshot.c: init_header()),
// decoded field by field, with the architecture record that x86 writes over
// its start (arch/x86/power/hibernate.c: arch_hibernation_header_save()),
// and the PFN list of the metadata pages that follow it (§3.4; snapshot.c:
// pack_pfns() / unpack_orig_pfns()).
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "swaplab/alloc/status.h"

namespace swaplab::hibernate {

// Who wrote the image, as told by swsusp_info alone.
enum class ImageOrigin {
  kSwaplab,        // swaplab's synthetic snapshot (its tag in uts)
  kKernelX86_64,   // a Linux x86-64 kernel: the restore record's magic
  kKernelGeneric,  // a kernel without an architecture header: utsname + version_code
  kUnknown,        // none of these: the start of the page is shown as opaque bytes
};
const char* Name(ImageOrigin o);

// arch/x86/power/hibernate.c: struct restore_data_record (64-bit): five
// unsigned longs at the start of swsusp_info, over utsname.
struct X86RestoreRecord {
  uint64_t jump_address = 0, jump_address_phys = 0, cr3 = 0, magic = 0, e820_checksum = 0;
};
inline constexpr uint64_t kX86RestoreMagic = 0x23456789ABCDEF02ULL;  // RESTORE_MAGIC, x86-64
inline constexpr size_t kArchHeaderBytes = 390 + 4;  // MAX_ARCH_HEADER_SIZE: utsname + u32

struct SwsuspInfo {
  ImageOrigin origin = ImageOrigin::kUnknown;
  // Generic header only (no architecture record): utsname fields as stored,
  // cut at their NUL; raw bytes, to be escaped before they reach a terminal.
  std::string sysname, nodename, release, version, machine, domainname;
  uint32_t version_code = 0;
  X86RestoreRecord x86;        // kKernelX86_64 only
  std::string arch_head_hex;   // kUnknown: the first 40 bytes, hex
  uint64_t num_physpages = 0;  // get_num_physpages() of the kernel that wrote it
  int32_t cpus = 0;            // never set by the kernel (0)
  uint64_t image_pages = 0;    // N = nr_copy_pages
  uint64_t pages = 0;          // T = N + M + 1
  uint64_t size = 0;           // T × kPageSize
  uint64_t meta_pages() const { return pages - image_pages - 1; }  // M (valid once checked)
};

// Decodes one 4096-byte page; never fails (CheckInfoCounts says whether
// the counts hold together).
SwsuspInfo DecodeSwsuspInfo(const std::byte* page);

// The counts' own consistency, as load_header() takes them: pages ≥ 1,
// image_pages < pages, size == pages × 4096. -EINVAL naming the field.
Status CheckInfoCounts(const SwsuspInfo& info);

// Decodes the PFN list of the metadata pages (stream pages 1 … M), one page
// at a time, with the checks that hold for every image the kernel writes:
// PFNs strictly ascending (the bitmap is walked in address order), the end
// marker (~0) only in the last metadata page, between 512·(M−1) + 1 and
// 512·M PFNs in all, and exactly N of them without the zero flag (bit 63).
class PfnListCheck {
 public:
  PfnListCheck(uint64_t meta_pages, uint64_t data_pages) : M_(meta_pages), N_(data_pages) {}
  // Metadata page k (1-based), in order. -EINVAL naming page and entry.
  Status Page(uint64_t k, const std::byte* page);
  // After page M: the totals. -EINVAL when they disagree with M and N.
  Status Finish() const;
  uint64_t pfns() const { return pfns_; }
  uint64_t zero_pages() const { return zero_; }
  uint64_t first_pfn() const { return first_; }
  uint64_t last_pfn() const { return last_; }
  // Watches the PFNs in [lo, hi] (set before page 1): afterwards
  // watched_data() is the range [first, end) of data pages (0-based, in
  // stream order: the PFNs without the zero flag) that hold them.
  void Watch(uint64_t lo, uint64_t hi) { watch_lo_ = lo, watch_hi_ = hi; }
  std::pair<uint64_t, uint64_t> watched_data() const { return {watch_first_, watch_end_}; }

 private:
  uint64_t M_, N_;
  uint64_t pfns_ = 0, zero_ = 0, first_ = 0, last_ = 0;
  uint64_t watch_lo_ = 1, watch_hi_ = 0, watch_first_ = 0, watch_end_ = 0;
  bool ended_ = false;
};

}  // namespace swaplab::hibernate
#pragma GCC visibility pop
