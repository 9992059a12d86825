// SPDX-License-Identifier: MIT
// The parts of an image that say where it is, read without changing a
// byte: the swsusp header in page 0 (spec §1.4), the swap map chain
// (§4.1, §4.8: get_swap_reader(), swap_read_page()), and the image's
// layout on the disk (§10.4 runs, §10.5 bios). Used by the reader and by
// `image inspect`, for the kernel's images and swaplab's alike.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <span>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/area/swap_header.h"
#include "swaplab/hibernate/compress.h"
#include "swaplab/hibernate/image_format.h"
#include "swaplab/hibernate/request_batcher.h"
#include "swaplab/hibernate/swsusp_info.h"

namespace swaplab::hibernate {

struct ImageChain {
  area::SwsuspHeader header;
  std::vector<uint64_t> map_dblocks;  // map page 0, 1, … (chain order)
  std::vector<uint64_t> entries;      // stream page p → its dblock (write order)
};

// Reads page 0 at resume_block and walks the whole chain. Read-only.
// lookahead 0: one sync read per map page, as get_swap_reader() does;
// > 0 (at most 256): the next map pages are guessed along the chain's
// stride and read ahead in batches of up to `lookahead` bios (a guess is
// used only where the chain leads to it; the same checks either way).
// device_pages > 0 bounds every dblock (and so every buffer: the entries
// are at most one per device page); without it there is no lookahead.
// -EINVAL naming the field: no S1SUSPEND (no image), orig_sig not a swap
// signature, unknown or impossible flag bits, image 0 or the header page, a
// map page or entry past the device end or on the header page, a chain that
// loops or a slot used twice, an entry after the end, a partly filled map
// page with a next pointer; -EFAULT: a chain without entries.
Result<ImageChain> ReadImageChain(RequestBatcher& b, uint64_t resume_block, uint64_t device_pages,
                                  uint32_t lookahead = 0);
// The lookahead of `image inspect` and of the pipelined reader.
inline constexpr uint32_t kChainLookahead = 64;
// Its three steps, for a reader that acts between them (resume restores
// the signature after the first): the signature and orig_sig of page 0
// (swsusp_check()); the other header fields; the chain from header.image.
Result<area::SwsuspHeader> CheckSignature(std::span<const std::byte, kPageSize> page0);
Status CheckHeaderFields(const area::SwsuspHeader& h, uint64_t resume_block, uint64_t device_pages);
// expected_entries: room reserved for entries up front (the stream pages
// a caller that wrote the image knows; at most device_pages when that is
// known), so the list is not grown by doubling; 0: grown as read.
Result<ImageChain> WalkMapChain(RequestBatcher& b, const area::SwsuspHeader& h,
                                uint64_t resume_block, uint64_t device_pages,
                                uint32_t lookahead = 0, uint64_t expected_entries = 0);

// Where the image lies and what writing it cost or would cost.
struct ImageLayout {
  uint64_t slots = 0;                          // stream pages + map pages
  uint64_t runs_disk_order = 0;                // §10.4 (a): stretches of consecutive dblocks
  uint64_t runs_write_order = 0;               // stretches in submission order (§10.4 R_stream)
  uint64_t largest_run = 0, smallest_run = 0;  // disk order, in slots
  uint64_t clusters_touched = 0;               // 512-slot clusters holding a slot of the image
  uint64_t first_dblock = 0, last_dblock = 0;
  uint32_t max_pages = 0;  // P of the device (hib_bio_max_pages)
  // The write replayed through hib_bio_batch in submission order (§4.3:
  // swsusp_info and the last map page sync, the rest async): one bio per
  // page (every kernel before the RFC), one per run (RFC patch 7), and one
  // per run if the same slots had been one contiguous run (the RFC's
  // allocator on free clusters). Compressed images: the writer's round-end
  // submits (§6.3) are not replayed, so per-run counts are a lower bound.
  uint64_t bios_per_page = 0, bios_per_run = 0, bios_one_run = 0;
};
ImageLayout AnalyzeLayout(const ImageChain& c, const area::DeviceLimits& limits,
                          CapacityMode capacity);

// The counts against the map chain's stream_pages: equal for an
// uncompressed image (-EFAULT when the chain is shorter); for a compressed
// one, at most 32 pages per stream page after the first.
Status CheckInfoAgainstChain(const SwsuspInfo& info, Compressor compress, uint64_t stream_pages);

// What `image inspect` shows: header, chain, swsusp_info and layout, read
// without reading the image's data or changing a byte (the chain with
// kChainLookahead). Errors as
// ReadImageChain, plus -EINVAL for swsusp_info counts that do not hold
// together or disagree with the chain.
struct ImageInspection {
  ImageChain chain;
  SwsuspInfo info;
  Compressor compress = Compressor::kNone;
  ImageLayout layout;
};
Result<ImageInspection> InspectImage(area::IoEngine& engine, uint64_t resume_block,
                                     uint64_t device_pages,
                                     CapacityMode capacity = CapacityMode::kExact);

}  // namespace swaplab::hibernate
#pragma GCC visibility pop
