// SPDX-License-Identifier: MIT
// The uncompressed image writer (swsusp_write with SF_NOCOMPRESS_MODE,
// spec §4): swsusp_info first (sync), then metadata and data pages through
// the batch, the swap map chain written behind its entries, drain, the
// signature over page 0, and the last map page (sync). On error every slot
// the image took is given back (§4.6) and the area keeps its swap signature.
// With a compressor (§7.3) the pages after swsusp_info are 32-page units,
// each an 8-byte length and a raw LZO1X-1 / LZ4 block, compressed by worker
// threads while a CRC thread folds the uncompressed bytes (§7.5); the
// current bio is submitted at every round end (§6.3).
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <functional>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/hibernate/compress.h"
#include "swaplab/hibernate/image_session.h"
#include "swaplab/hibernate/request_batcher.h"
#include "swaplab/hibernate/snapshot.h"

namespace swaplab::hibernate {

struct WriterOptions {
  BatchOptions batch{};
  // SF_* to store (SF_HW_SIG added when hw_sig != 0). With a compressor
  // the compression bits are the writer's: SF_NOCOMPRESS_MODE is dropped
  // and FlagsFor(compress) added.
  uint32_t flags = kSfNocompressMode;
  uint32_t hw_sig = 0;
  bool record_placement = false;  // fill WriteReport::stream_dblocks / map_dblocks
  // The low-memory drain check of §6.1, with `memory_budget_pages` free
  // pages for write copies at the start: once per map page, if the free
  // pages (budget − copies in flight) have dropped to half of the last
  // measure, drain the batch. 0: unlimited memory, no drains (what the
  // §10.5 formulas assume). Bounds the writer's memory for large images.
  uint64_t memory_budget_pages = 0;
  Compressor compress = Compressor::kNone;
  unsigned threads = 0;  // compressor threads; 0: DefaultCompressionThreads() (§7.1)
  // Snapshot pages handed to the writer so far, of T: where save_image() /
  // save_compressed_image() print "Image saving progress", here every
  // kProgressPages pages (image_reader.h) and at the end. Read-only; on the writer's thread.
  std::function<void(uint64_t done, uint64_t total)> progress = nullptr;
};

struct WriteReport {
  // T, M, N: the snapshot (§3.1). Q, r: of the stream on disk (T_c with
  // compression, §7.4).
  uint64_t T = 0, M = 0, N = 0, Q = 0, r = 0;
  uint64_t stream_pages = 0;      // stream pages on disk: T, or T_c compressed
  uint64_t units = 0;             // compressed units (§7.4); 0 uncompressed
  uint64_t compressed_bytes = 0;  // Σ L over the units
  uint32_t crc32 = 0;             // stored in the header (SF_CRC32_MODE)
  uint32_t flags = 0;             // as stored
  uint64_t image = 0;             // dblock of map page 0 (swsusp_header.image)
  uint64_t resume_block = 0;      // dblock of page 0 of the area
  uint64_t slots = 0;             // U = T + Q + 1
  uint64_t device_runs = 0;       // maximal stretches of consecutive dblocks (§10.4)
  uint64_t extents = 0;           // swsusp_extents nodes at the end (§5.2)
  BatchStats batch;
  SessionStats session;
  std::vector<uint64_t> stream_dblocks, map_dblocks;  // with record_placement
};

// Writes `snap` to the device `session` is for, through `engine` (dblocks
// are engine pages). Begins the session if needed; ends it on return.
// Errors: -ENOSPC (space check §4.7, or out of slots), -ENODEV (page 0 has
// no swap signature), I/O errors from the engine. After an error no slot
// of the image is left allocated.
Result<WriteReport> WriteImage(ImageSession& session, area::IoEngine& engine,
                               const SyntheticSnapshot& snap, const WriterOptions& o);

// Maximal stretches of consecutive values in a set of dblocks.
uint64_t CountRuns(std::vector<uint64_t> dblocks);

}  // namespace swaplab::hibernate
#pragma GCC visibility pop
