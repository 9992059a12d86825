// SPDX-License-Identifier: MIT
// libFuzzer: the input is a swap area (4 KiB pages, page 0 first; the last
// page zero-padded), at most kMaxPages pages, read in place by the
// in-memory engine of the hibernate tests. ReadImage (read-only, one
// decompressor thread; verified and pipelined, structural in the kernel's
// order) and InspectImage (exact and slab bio capacity) must refuse a bad
// image with an error, never crash, hang or write a byte.
#include <cstddef>
#include <cstdint>

#include "hibernate/hib_test_util.h"
#include "swaplab/hibernate/image_chain.h"
#include "swaplab/hibernate/image_reader.h"

using namespace swaplab;

namespace {
constexpr uint64_t kMaxPages = 512;  // a 2 MiB area (fuzz/run: -max_len=2097152)
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint64_t pages = (size + area::kPageSize - 1) / area::kPageSize;
  if (pages == 0 || pages > kMaxPages) return -1;
  // The input read in place: no copy of the area per run (copying it into
  // the engine's page map, a 4 KiB allocation per page, cost more than a
  // read of a small image).
  hibernate::testing::MemEngine engine(pages);
  engine.backing = {reinterpret_cast<const std::byte*>(data), size};
  // Threads (one decompressor, the CRC thread, the window checker) and the
  // ring and unit buffers made once, not per read (ReaderScratch): one
  // scratch per ring size, so that each ring is allocated at its exact size
  // (ASan sees an overrun of it).
  static hibernate::ReaderScratch verified_scratch(1), structural_scratch(1);
  hibernate::ReaderOptions o;
  o.device_pages = pages;
  o.threads = 1;
  o.scratch = &verified_scratch;
  // Small windows and rings: the defaults (16384-page windows, an
  // 8192-page readahead ring, 32 MiB) cost more per run than the rest of
  // the read, and small ones wrap: with windows of 8 (3) pages every image
  // of more than 8 (3) data pages alternates the two windows, and the
  // rings of 140 and 35 pages wrap every 140 and 35 pages of compressed
  // stream.
  o.window_pages = 8;
  o.read_ring_pages = 4 * hibernate::kCmpPages;
  o.pipelined = true;  // `image read` by default: chain lookahead, metadata with the data
  (void)hibernate::ReadImage(engine, 0, o);
  o.pipelined = false;                       // and the kernel's reads (reproduce, --kernel-io)
  o.verify_pages = false;                    // the structural read takes other paths
  o.read_ring_pages = hibernate::kCmpPages;  // the smallest ring: wraps often
  o.window_pages = 3;
  o.scratch = &structural_scratch;
  (void)hibernate::ReadImage(engine, 0, o);
  (void)hibernate::InspectImage(engine, 0, pages);
  (void)hibernate::InspectImage(engine, 0, pages, hibernate::CapacityMode::kSlab);
  if (engine.stats().pages_written != 0) __builtin_trap();  // read-only means read-only
  return 0;
}
