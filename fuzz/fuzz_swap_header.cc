// SPDX-License-Identifier: MIT
// libFuzzer: page 0 of a swap area, arbitrary bytes, through the header
// decoder and swapon's checks (include/swaplab/area/swap_header.h).
// Decode never fails; ValidateForSwapon refuses with a message or accepts.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "swaplab/area/swap_header.h"

using namespace swaplab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::array<std::byte, area::kPageSize> page{};
  std::memcpy(page.data(), data, std::min(size, page.size()));
  // Bytes past the page choose the size the area claims to have.
  uint64_t size_bytes = 0;
  if (size > page.size())
    std::memcpy(&size_bytes, data + page.size(), std::min<size_t>(8, size - page.size()));
  const auto h = area::DecodeHeader(std::span<const std::byte, area::kPageSize>(page));
  if (h.v1.bad_pages.size() > area::kMaxSwapBadpages) __builtin_trap();
  if (h.v1.label.size() > 16) __builtin_trap();
  (void)area::Name(h.signature);
  for (bool regular : {false, true}) {
    (void)area::ValidateForSwapon(h, size_bytes, regular);
    (void)area::ValidateForSwapon(h, (uint64_t{h.v1.last_page} + 1) * area::kPageSize, regular);
  }
  // A header that decodes as v1 encodes back to a page that decodes the same.
  if (h.signature == area::Signature::kSwapSpace2 && !h.byte_swapped && h.v1.version == 1 &&
      h.nr_badpages <= area::kMaxSwapBadpages) {
    area::SwapHeaderV1 v = h.v1;
    if (v.label.size() > area::kMaxLabelBytes) v.label.resize(area::kMaxLabelBytes);
    if (v.label.find('\0') != std::string::npos) v.label.resize(v.label.find('\0'));
    const auto again = area::DecodeHeader(area::EncodeHeader(v));
    if (again.v1.last_page != v.last_page || again.v1.bad_pages != v.bad_pages ||
        again.v1.uuid != v.uuid)
      __builtin_trap();
  }
  return 0;
}
