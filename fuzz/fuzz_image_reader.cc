// libFuzzer: the input is a swap area (4 KiB pages, page 0 first; the last
// page zero-padded), at most kMaxPages pages, held by the in-memory engine
// of the hibernate tests. ReadImage (read-only, one decompressor thread)
// and InspectImage must refuse a bad image with an error, never crash,
// hang or write a byte.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hibernate/hib_test_util.h"
#include "swaplab/hibernate/image_chain.h"
#include "swaplab/hibernate/image_reader.h"

using namespace swaplab;

namespace {
constexpr uint64_t kMaxPages = 512;  // a 2 MiB area (fuzz/run: -max_len=2097152)
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint64_t pages = (size + area::kPageSize - 1) / area::kPageSize;
  if (pages == 0 || pages > kMaxPages) return -1;
  hibernate::testing::MemEngine engine(pages);
  for (uint64_t p = 0; p < pages; ++p) {
    const size_t n = std::min<size_t>(area::kPageSize, size - p * area::kPageSize);
    bool zero = true;
    for (size_t i = 0; i < n && zero; ++i) zero = data[p * area::kPageSize + i] == 0;
    if (zero) continue;  // the engine reads missing pages as zeros
    auto& page = engine.data_[p];
    page.fill(std::byte{0});
    std::memcpy(page.data(), data + p * area::kPageSize, n);
  }
  hibernate::ReaderOptions o;
  o.device_pages = pages;
  o.threads = 1;
  // Small readahead rings: the default (8192 pages, 32 MiB) costs more per
  // run than the rest of the read; a small ring also wraps more often.
  o.read_ring_pages = 4 * hibernate::kCmpPages;
  (void)hibernate::ReadImage(engine, 0, o);
  o.verify_pages = false;  // the structural read takes other paths
  o.read_ring_pages = hibernate::kCmpPages;  // the smallest ring: wraps often
  (void)hibernate::ReadImage(engine, 0, o);
  (void)hibernate::InspectImage(engine, 0, pages);
  (void)hibernate::InspectImage(engine, 0, pages, hibernate::CapacityMode::kSlab);
  if (engine.stats().pages_written != 0) __builtin_trap();  // read-only means read-only
  return 0;
}
