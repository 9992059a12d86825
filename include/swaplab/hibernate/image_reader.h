// SPDX-License-Identifier: MIT
// The image reader (swsusp_check + swsusp_read + load_image /
// load_compressed_image, spec §1.4, §4.8, §7.6, §8), for any image written
// by Linux x86-64 or by swaplab: validates the header and the whole map
// chain, reads the stream through the batch (per-run bios with patch 8),
// decompresses every unit (picked from the header flags as resume does),
// checks the kernel's CRC32 where the image has one, decodes swsusp_info
// and checks the PFN list of the metadata pages against its counts. For
// swaplab's own images (recognised by their tag, never assumed) every page
// is also compared with the synthetic snapshot. Read-only unless asked to
// consume the image as resume does.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "swaplab/alloc/status.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/hibernate/compress.h"
#include "swaplab/hibernate/request_batcher.h"
#include "swaplab/hibernate/snapshot.h"
#include "swaplab/hibernate/swsusp_info.h"

namespace swaplab::hibernate {

// What a read makes besides its small buffers: the decompressor and CRC
// threads, the readahead ring and the unit buffers (compressed images), the
// window checker thread (uncompressed ones), the noise table of swaplab's
// synthetic snapshot (kept for the next image of the same seed). A read
// without a scratch makes its own and frees it at the end; a caller that
// reads many images (the fuzzer) keeps one scratch per ring size and passes
// it to each read, so that threads start and large buffers are mapped once.
// Each buffer is remade whenever a read asks for another size (a larger
// buffer reused would hide an overrun from ASan). One read at a time.
class ReaderScratch {
 public:
  explicit ReaderScratch(unsigned threads = 0);  // decompressors; 0: DefaultCompressionThreads()
  ~ReaderScratch();
  ReaderScratch(const ReaderScratch&) = delete;
  ReaderScratch& operator=(const ReaderScratch&) = delete;
  struct __attribute__((visibility("hidden"))) Impl;  // image_reader.cc; hidden in a shared library
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Stream pages between two calls of a reader's or writer's progress hook.
inline constexpr uint64_t kProgressPages = 1024;

struct ReaderOptions {
  BatchOptions batch{};
  // Restore the swap signature at once, as swsusp_check() does at resume,
  // so that the image cannot be resumed again. Off: not a byte is written.
  bool consume = false;
  // The platform's current hardware signature; compared (as swsusp_check
  // does) only when set and the header has SF_HW_SIG.
  std::optional<uint32_t> hw_sig;
  uint64_t device_pages =
      0;  // bounds the chain walk and every buffer; 0: no bound but the loop check
  // Off: the reads the kernel's resume issues (get_swap_reader(): a sync
  // read per map page; load_image(): a sync read per metadata page), so
  // the batch counts are the kernel's. On: the same pages and checks, read
  // as fast as the disk allows: the map chain read ahead along its stride
  // (kChainLookahead), the metadata pages with the data.
  bool pipelined = false;
  // Data pages in flight per window (uncompressed images). Every window
  // cuts the current bio, so bio counts match §8 only when the data fits
  // in one window.
  uint64_t window_pages = 16384;
  // Uncompressed images: the frames data pages are read into, a ring used
  // again page by page once the page in a frame has been read and checked
  // (the windows' Waits stay where they are). More than the batch's
  // max_unsubmitted() (the largest bio plus the plug's flush: 511 by
  // default, so 512 does), so that a frame's page always lies in a bio
  // handed to the engine; -EINVAL otherwise, before anything is read. At
  // most the image's data pages are allocated. A simulated device gets two
  // windows of frames instead (its modelled time depends on when it is
  // waited for).
  uint64_t frame_pages = 4096;
  // The snapshot the image must hold (compared whatever swsusp_info says);
  // null: rebuilt from swsusp_info for images with swaplab's tag.
  const SyntheticSnapshot* expect = nullptr;
  // Compressed images: the readahead ring (§7.6), in [kCmpPages, 8192];
  // 0: 8192 (the kernel's size when memory is plentiful).
  uint64_t read_ring_pages = 0;
  unsigned threads = 0;  // decompressor threads; 0: DefaultCompressionThreads()
  // Threads and buffers to borrow (ReaderScratch) instead of making them
  // for this read; `threads` is then the scratch's.
  ReaderScratch* scratch = nullptr;
  // Check what the pages hold: the PFN list of the metadata pages, and for
  // swaplab images every page against the snapshot (names the page that
  // differs). Off: a structural read (pages written without content, as
  // structural scenario runs write them): the chain, swsusp_info and, for
  // compressed images, the units and CRC32 are still checked.
  bool verify_pages = true;
  // Called with every stream page 0 … T−1 in order, uncompressed (what
  // snapshot_write_next() would be handed); an error stops the read.
  std::function<Status(uint64_t p, const std::byte* page)> on_page;
  // Stream pages read so far, of T: where load_image() /
  // load_compressed_image() print "Image loading progress", here every
  // kProgressPages pages and at the last. Read-only.
  std::function<void(uint64_t done, uint64_t total)> progress = nullptr;
};

struct ReadReport {
  uint64_t T = 0, M = 0, N = 0, Q = 0;  // Q of the stream on disk
  uint32_t flags = 0;
  uint32_t hw_sig = 0;        // header field (valid with SF_HW_SIG)
  uint32_t header_crc32 = 0;  // header field (valid with SF_CRC32_MODE)
  Compressor compress = Compressor::kNone;
  SwsuspInfo info;            // stream page 0, decoded
  uint64_t stream_pages = 0;  // on disk: T, or T_c compressed
  uint64_t units = 0;         // compressed units decompressed
  uint32_t crc32 = 0;         // computed over the decompressed stream
  bool crc_checked = false;   // SF_CRC32_MODE: crc32 matched header_crc32
  uint64_t ring_pages = 0;    // readahead ring used
  uint64_t map_pages = 0;
  uint64_t pfns = 0, zero_pages = 0;  // the metadata's PFN list
  uint64_t pages_verified = 0;        // stream pages compared with the snapshot (swaplab images)
  std::string kernel_banner;          // "Linux version …" found in a data page (raw bytes)
  uint64_t banner_page = 0;           // the stream page it was found in
  bool consumed = false;              // the signature was restored on disk
  BatchStats batch;
  // Wall time: header, map chain and swsusp_info; then the rest of the stream.
  double chain_seconds = 0, stream_seconds = 0;
};

// Errors name what and where. -EINVAL: no S1SUSPEND (nothing is read
// further), a bad header field, chain, swsusp_info or PFN list, a compressed
// unit with a bad length or a block that does not decompress (the message
// names the unit, its stream pages and dblocks), a hardware-signature
// mismatch; -EFAULT: the chain ends early; -ENODATA: a page differs from the
// snapshot (named), a truncated compressed stream, or a CRC32 mismatch;
// engine errors as they come. With consume, once the signature is found
// valid it is restored on disk even if reading fails later (as resume does).
Result<ReadReport> ReadImage(area::IoEngine& engine, uint64_t resume_block, const ReaderOptions& o);

// Mirrors swsusp_unmark() (§1.4 "Unmark"; hybrid-sleep wake, wakeup during
// power-off): puts orig_sig back over S1SUSPEND; -ENODEV if page 0 holds no
// image. The caller then gives the slots back (ImageSession::FreeAll).
Status UnmarkImage(area::IoEngine& engine, uint64_t resume_block);

}  // namespace swaplab::hibernate
#pragma GCC visibility pop
