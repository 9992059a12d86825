// The image reader (swsusp_check + swsusp_read + load_image /
// load_compressed_image, spec §1.4, §4.8, §7.6, §8): validates the header,
// restores the original swap signature before reading a single image page,
// reads the whole map chain, then the stream through the batch (per-run
// bios with patch 8), and verifies every page against the synthetic
// snapshot. A compressed image (picked from the header flags as resume
// does) goes through the readahead ring, decompressor threads and the CRC
// thread; the CRC32 is checked against the header.
#pragma once

#include <cstdint>

#include "swaplab/alloc/status.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/hibernate/compress.h"
#include "swaplab/hibernate/request_batcher.h"
#include "swaplab/hibernate/snapshot.h"

namespace swaplab::hibernate {

struct ReaderOptions {
  BatchOptions batch{};
  uint32_t hw_sig = 0;                // the platform's current hardware signature
  uint64_t device_pages = 0;          // bounds the chain walk; 0: no bound but the loop check
  // Data pages in flight before a drain. Every drain cuts the current bio,
  // so bio counts match §8 only when the data fits in one window.
  uint64_t window_pages = 16384;
  const SyntheticSnapshot* expect = nullptr;  // null: rebuilt from swsusp_info
  // Compressed images: the readahead ring (§7.6), in [kCmpPages, 8192];
  // 0: 8192 (the kernel's size when memory is plentiful).
  uint64_t read_ring_pages = 0;
  unsigned threads = 0;  // decompressor threads; 0: DefaultCompressionThreads()
  // Compare every page with the snapshot (names the page that differs).
  // Off: compressed images rely on the kernel's CRC32 alone; uncompressed
  // images are only read (bios counted, swsusp_info still checked).
  bool verify_pages = true;
};

struct ReadReport {
  uint64_t T = 0, M = 0, N = 0, Q = 0;  // Q of the stream on disk
  uint32_t flags = 0;
  Compressor compress = Compressor::kNone;
  uint64_t stream_pages = 0;  // on disk: T, or T_c compressed
  uint64_t units = 0;         // compressed units decompressed
  uint32_t crc32 = 0;         // computed over the decompressed stream
  uint64_t ring_pages = 0;    // readahead ring used
  uint64_t map_pages = 0;
  uint64_t pages_verified = 0;  // stream pages compared byte for byte
  BatchStats batch;
};

// -EINVAL: no S1SUSPEND (nothing is written then), a bad orig_sig, image 0,
// a hardware-signature mismatch, a bad chain or swsusp_info, a compressed
// unit with a bad length or a block that does not decompress (the message
// names the unit, its stream pages and dblocks); -EFAULT: the chain ends
// early; -ENODATA: a page differs from the snapshot (named), a truncated
// compressed stream, or a CRC32 mismatch; engine errors as they come. Once the
// signature is found valid, it is restored on disk even if reading fails
// later (as resume does).
Result<ReadReport> ReadImage(area::IoEngine& engine, uint64_t resume_block, const ReaderOptions& o);

// Mirrors swsusp_unmark() (§1.4 "Unmark"; hybrid-sleep wake, wakeup during
// power-off): puts orig_sig back over S1SUSPEND; -ENODEV if page 0 holds no
// image. The caller then gives the slots back (ImageSession::FreeAll).
Status UnmarkImage(area::IoEngine& engine, uint64_t resume_block);

}  // namespace swaplab::hibernate
