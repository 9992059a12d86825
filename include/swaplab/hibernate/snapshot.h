// SPDX-License-Identifier: MIT
// A synthetic memory snapshot: the stream of §3.2 (swsusp_info, metadata
// PFN list with zero-page flags, data pages) built from a seed, so that a
// read-back can check every byte. Spec: hibernation.md §3, §11.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/hibernate/image_format.h"

namespace swaplab::hibernate {

struct SnapshotOptions {
  uint64_t saveable_pages = 1000;   // every saved PFN, zero pages included
  double zero_share = 0.1;          // share of all-zero pages (no data page)
  double compressible_share = 0.3;  // share of pages with a repeating pattern
  uint64_t seed = 1;
  uint64_t first_pfn = 0x100;
};

// Invariants: pfns_ ascending; M = ⌈saveable / 512⌉; N = number of PFNs
// without the zero flag; T = 1 + M + N.
// Whether a swsusp_info page carries swaplab's synthetic-snapshot tag.
bool IsSwaplabInfoPage(const std::byte* info);

class SyntheticSnapshot {
 public:
  // -EINVAL for shares outside [0, 1] or summing above 1, or 0 pages.
  static Result<SyntheticSnapshot> Make(const SnapshotOptions& o);
  // Rebuilds the snapshot a swsusp_info page written by StreamPage(0)
  // describes (its uts area carries the options); -EINVAL if it does not,
  // or if the tag's page count is implausible: more metadata pages than
  // swsusp_info's pages − image_pages − 1, or a PFN list larger than
  // max_bytes (the caller's bound, e.g. the device size) — checked before
  // anything is allocated.
  static Result<SyntheticSnapshot> FromInfoPage(const std::byte* info, uint64_t max_bytes);

  const SnapshotOptions& options() const { return o_; }
  uint64_t nr_meta_pages() const { return meta_; }                       // M
  uint64_t nr_copy_pages() const { return pfns_.size() - zero_pages_; }  // N
  uint64_t nr_zero_pages() const { return zero_pages_; }
  uint64_t image_pages() const { return 1 + meta_ + nr_copy_pages(); }  // T
  // Fills `out` (one page) with stream page p, p < image_pages(); a copy
  // of the page in memory once the snapshot is materialised.
  void StreamPage(uint64_t p, std::byte* out) const;

  // Builds every stream page in memory (T pages, 4096-aligned), as the
  // kernel's snapshot is in memory before swsusp_write runs (§3.2,
  // snapshot_read_next hands out pointers into it): the writer then copies
  // pages out of it instead of generating them inside the timed write.
  // -ENOMEM if the memory cannot be had. Copies share the pages.
  Status Materialize();
  bool materialized() const { return mem_ != nullptr; }
  // Stream page p in memory; null unless materialised.
  const std::byte* PageInMemory(uint64_t p) const {
    return mem_ ? mem_.get() + p * kPageSize : nullptr;
  }

  // The table of random words the incompressible pages are cut from (256
  // KiB), a function of the seed alone, made on first use (thread-safe):
  // a structural read, or an image refused before its data pages, never
  // makes it. Copies share it; so may two snapshots of one seed: a caller
  // that rebuilds many (ReaderScratch) hands each the last one's table.
  struct Noise;
  const std::shared_ptr<Noise>& noise() const { return noise_; }
  void ShareNoise(const std::shared_ptr<Noise>& n);  // taken if made for this seed

 private:
  explicit SyntheticSnapshot(const SnapshotOptions& o);
  void DataPage(uint64_t pfn, std::byte* out) const;
  SnapshotOptions o_;
  uint64_t meta_ = 0;
  std::vector<uint64_t> pfns_;  // with bit 63 for zero pages
  uint64_t zero_pages_ = 0;
  // Non-zero PFNs, ascending; empty when there is no zero page (pfns_ is
  // that list then: 8 bytes per page less for the images steps make).
  std::vector<uint64_t> data_pfns_;
  uint64_t DataPfn(uint64_t i) const { return zero_pages_ == 0 ? pfns_[i] : data_pfns_[i]; }
  std::shared_ptr<Noise> noise_;  // never null
  const uint64_t* NoiseWords() const;
  std::shared_ptr<std::byte[]> mem_;  // T pages once materialised
  void Generate(uint64_t p, std::byte* out) const;
};

}  // namespace swaplab::hibernate
#pragma GCC visibility pop
