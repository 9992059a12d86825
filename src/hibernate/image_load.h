// SPDX-License-Identifier: MIT
// What the image reader (image_reader.cc: swsusp_check(), the stream from
// swsusp_info on) shares with its two load paths, load_compressed_image()
// (image_load_compressed.cc, spec §7.5-§7.6) and load_image()
// (image_load_uncompressed.cc, §8): the stream check every page passes,
// the reader's scratch and the buffers both paths use. Private to
// src/hibernate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "swaplab/hibernate/image_chain.h"
#include "swaplab/hibernate/image_reader.h"

namespace swaplab::hibernate {

inline std::string S(uint64_t v) { return std::to_string(v); }

// Every stream page passes through here in order, whatever path read it:
// the PFN list of the metadata pages (§3.4), the data-page count, the
// comparison with swaplab's synthetic snapshot, the kernel banner of real
// images, and the caller's own callback.
class StreamCheck {
 public:
  StreamCheck(const ReaderOptions& o, ReadReport& rep, const SyntheticSnapshot* snap)
      : o_(o), rep_(rep), snap_(snap), pfns_(rep.M, rep.N) {
    // x86-64 images name the physical address of restore_registers, in the
    // kernel's text; linux_banner lies in its read-only data a few MiB on
    // (3.3 MiB in Debian's 6.12.117). Only the data pages whose frames lie
    // within kBannerSpan of it are searched.
    if (rep.info.origin == ImageOrigin::kKernelX86_64) {
      const uint64_t pfn = rep.info.x86.jump_address_phys / kPageSize;
      pfns_.Watch(pfn > kBannerSpan ? pfn - kBannerSpan : 0, pfn + kBannerSpan);
      watch_ = true;
    }
  }

  // Stream page p (0 … T−1); where() names it, called only for a message.
  template <typename Where>
  Status Page(uint64_t p, const std::byte* page, Where where) {
    if (o_.progress && ((p + 1) % kProgressPages == 0 || p + 1 == rep_.T))
      o_.progress(p + 1, rep_.T);
    if (!o_.verify_pages) return o_.on_page ? o_.on_page(p, page) : Status::Ok();
    // swaplab's own images: the snapshot names the first page that differs.
    if (snap_ != nullptr) {
      snap_->StreamPage(p, want_.data());
      if (std::memcmp(page, want_.data(), kPageSize) != 0) {
        size_t at = 0;
        while (page[at] == want_.b[at]) ++at;
        return Status(-ENODATA, "image corrupted: " + where() +
                                    " differs from the snapshot at byte " + S(at));
      }
      ++rep_.pages_verified;
    }
    if (p >= 1 && p <= rep_.M) {
      Status st = pfns_.Page(p, page);
      if (!st.ok()) return Status(st.code(), "image corrupted: " + where() + ": " + st.message());
      if (p == rep_.M) {
        st = pfns_.Finish();
        if (!st.ok()) return Status(st.code(), "image corrupted: " + st.message());
      }
    } else if (p > rep_.M && rep_.kernel_banner.empty() && snap_ == nullptr && BannerCandidate(p)) {
      FindBanner(p, page);
    }
    if (o_.on_page) return o_.on_page(p, page);
    return Status::Ok();
  }

  Status Finish() {
    rep_.pfns = pfns_.pfns();
    rep_.zero_pages = pfns_.zero_pages();
    if (rep_.M == 0 && o_.verify_pages) return pfns_.Finish();
    return Status::Ok();
  }

 private:
  static constexpr uint64_t kBannerSpan = (64 << 20) / kPageSize;  // frames either side

  bool BannerCandidate(uint64_t p) const {
    if (!watch_) return true;
    const auto [first, end] = pfns_.watched_data();
    const uint64_t d = p - rep_.M - 1;  // data page index
    return d >= first && d < end;
  }

  // linux_banner ("Linux version <release> (<builder>) <version>\n") sits
  // in the kernel's read-only data, which every image saves. The compiler
  // gives a global char array of 32 bytes or more 32-byte alignment (x86-64
  // DATA_ALIGNMENT), and the 6.12 images of the vm label bear that out (every
  // copy at a multiple of 32), so only those offsets are compared: 128 loads
  // a page, where a byte-wise search cost more than the read itself.
  void FindBanner(uint64_t p, const std::byte* page) {
    static constexpr std::string_view kBanner = "Linux version ";
    uint64_t head;
    std::memcpy(&head, kBanner.data(), 8);
    const char* c = reinterpret_cast<const char*>(page);
    for (size_t at = 0; at + 64 <= kPageSize; at += 32) {
      if (LoadU64(page + at) != head || std::memcmp(c + at, kBanner.data(), kBanner.size()) != 0)
        continue;
      const char* b = c + at;
      const char* e = b;
      while (e < c + kPageSize && e - b < 256 && *e != '\0' && *e != '\n') ++e;
      // Only a banner with a release after it ("Linux version 6.12.…").
      if (b[kBanner.size()] < '0' || b[kBanner.size()] > '9') continue;
      rep_.kernel_banner.assign(b, e);
      rep_.banner_page = p;
      return;
    }
  }

  const ReaderOptions& o_;
  ReadReport& rep_;
  const SyntheticSnapshot* snap_;
  PfnListCheck pfns_;
  bool watch_ = false;  // the banner search is limited to the watched frames
  AlignedPage want_;
};

// Where a compressed unit sits, for error messages.
struct UnitPlace {
  uint64_t index = 0;        // unit number in the stream
  uint64_t first_entry = 0;  // its first stream page on disk
  uint64_t pages = 0;        // stream pages on disk it takes
  uint64_t first_page = 0;   // its first uncompressed stream page
};

// Read buffers registered with the engine (io_uring fixed buffers: the
// pages are pinned once, not per request) for as long as it lives.
class RegisteredBuffer {
 public:
  RegisteredBuffer(area::IoEngine& e, RawPage* pages, uint64_t n)
      : e_(e), on_(e.RegisterBuffer(pages[0].data(), n * kPageSize)) {}
  ~RegisteredBuffer() {
    if (on_) e_.UnregisterBuffer();
  }
  RegisteredBuffer(const RegisteredBuffer&) = delete;
  RegisteredBuffer& operator=(const RegisteredBuffer&) = delete;

 private:
  area::IoEngine& e_;
  bool on_;
};

struct DecUnit {
  std::unique_ptr<RawPage[]> in{new RawPage[kCmpPages]};  // a unit that wraps around the ring
  std::unique_ptr<RawPage[]> out{new RawPage[kUncPages]};
  const std::byte* src = nullptr;  // the unit: in the ring, or gathered into `in`
  size_t in_len = 0, out_len = 0;
  Status st;
  UnitPlace place;
};

// Hidden in a shared library: only the public header's API is exported.
struct __attribute__((visibility("hidden"))) ReaderScratch::Impl {
  explicit Impl(unsigned nr) : nr_threads(nr != 0 ? nr : DefaultCompressionThreads()) {}
  // Decompressors and the CRC thread.
  ImageThreads& Threads() {
    if (!threads) threads.emplace(nr_threads);
    return *threads;
  }
  // Exactly n unit buffers.
  std::vector<DecUnit>& Units(size_t n) {
    if (units.size() != n) {
      units.clear();
      units.resize(n);
    }
    return units;
  }
  // The readahead ring of exactly `pages` pages.
  RawPage* Ring(uint64_t pages) {
    if (ring_pages != pages) {
      ring.reset();
      ring.reset(new RawPage[pages]);
      ring_entry.assign(pages, 0);
      ring_pages = pages;
    }
    return ring.get();
  }
  WorkerThread& Checker() { return checker ? *checker : checker.emplace(); }

  const unsigned nr_threads;
  std::optional<ImageThreads> threads;
  std::vector<DecUnit> units;
  std::unique_ptr<RawPage[]> ring;
  std::vector<uint64_t> ring_entry;
  uint64_t ring_pages = 0;
  std::optional<WorkerThread> checker;  // the uncompressed path's
  // The noise table of the last snapshot rebuilt from a swaplab tag: the
  // next one of the same seed takes it instead of making its own.
  std::shared_ptr<SyntheticSnapshot::Noise> noise;
};

// load_compressed_image() (image_load_compressed.cc).
Status LoadCompressed(RequestBatcher& b, const std::vector<uint64_t>& entries, StreamCheck& check,
                      const ReaderOptions& o, ReadReport& rep, ReaderScratch::Impl& scratch);
// load_image() (image_load_uncompressed.cc).
Status LoadUncompressed(RequestBatcher& b, const std::vector<uint64_t>& entries, StreamCheck& check,
                        const ReaderOptions& o, ReadReport& rep, ReaderScratch::Impl& borrowed);

}  // namespace swaplab::hibernate
