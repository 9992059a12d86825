// The uncompressed image writer (swsusp_write with SF_NOCOMPRESS_MODE,
// spec §4): swsusp_info first (sync), then metadata and data pages through
// the batch, the swap map chain written behind its entries, drain, the
// signature over page 0, and the last map page (sync). On error every slot
// the image took is given back (§4.6) and the area keeps its swap signature.
// Compression (§7) is a separate writer to come; this one is the
// SF_NOCOMPRESS_MODE path only.
#pragma once

#include <cstdint>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/hibernate/image_session.h"
#include "swaplab/hibernate/request_batcher.h"
#include "swaplab/hibernate/snapshot.h"

namespace swaplab::hibernate {

struct WriterOptions {
  BatchOptions batch{};
  uint32_t flags = kSfNocompressMode;  // SF_* to store (SF_HW_SIG added when hw_sig != 0)
  uint32_t hw_sig = 0;
  bool record_placement = false;       // fill WriteReport::stream_dblocks / map_dblocks
  // The low-memory drain check of §6.1, with `memory_budget_pages` free
  // pages for write copies at the start: once per map page, if the free
  // pages (budget − copies in flight) have dropped to half of the last
  // measure, drain the batch. 0: unlimited memory, no drains (what the
  // §10.5 formulas assume). Bounds the writer's memory for large images.
  uint64_t memory_budget_pages = 0;
};

struct WriteReport {
  uint64_t T = 0, M = 0, N = 0, Q = 0, r = 0;
  uint64_t image = 0;          // dblock of map page 0 (swsusp_header.image)
  uint64_t resume_block = 0;   // dblock of page 0 of the area
  uint64_t slots = 0;          // U = T + Q + 1
  uint64_t device_runs = 0;    // maximal stretches of consecutive dblocks (§10.4)
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
