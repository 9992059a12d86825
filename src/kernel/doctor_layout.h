// SPDX-License-Identifier: MIT
// Internal to swaplab doctor: the slots the processes hold (their page
// tables) and the image's layout on an area, by the model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/status.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/kernel/doctor.h"

namespace swaplab::kernel::internal {

// The most data pages an uncompressed image may have on an area with
// `free_slots`: enough_swap passes (pages + PAGES_FOR_IO below the free
// slots, spec §4.7) and its T = StreamPages slots fit.
uint64_t LargestImage(uint64_t free_slots);

// The swap entries of every process's page tables under `root` ("" the
// running system): /proc/PID/status's VmSwap picks the processes,
// /proc/PID/smaps the mappings with swap, /proc/PID/pagemap their entries.
// Indexed by swap type (at most `types`), each sorted and deduplicated.
// Every read is bounded: smaps at 64 MiB a process, 2^26 pagemap entries in
// all (then `capped`); a type or offset out of range is dropped.
struct SwappedSlots {
  std::vector<std::vector<uint64_t>> by_type;
  uint64_t processes = 0;  // whose pagemap was read
  bool capped = false;
};
SwappedSlots ReadSwappedSlots(const std::string& root, size_t types);

// One pagemap entry's swap slot: (type, offset) when bit 62 (swapped) is
// set and bit 63 (present) is not.
bool PagemapSwapEntry(uint64_t entry, uint32_t* type, uint64_t* offset);

// The image of `image_pages` pages placed on `info`'s area with `in_use`
// taken (workload::OccupySlots), by `policy`: as the kernel takes slots
// (one bio per page) or, `rfc`, as seed 001's series does (whole free
// clusters in disk order, a bio per run). Slots are the area's own pages
// (dblock = slot): a swap file's extents do not enter the runs.
// `shrink`: an image that does not fit uncompressed is cut to the largest
// that does (LargestImage of the model's free slots).
DoctorPrediction PredictImage(const area::AreaInfo& info, const std::vector<uint64_t>& in_use,
                              const alloc::Policy& policy, uint64_t image_pages, bool rfc,
                              bool shrink);

// The layout step of doctor: reads the page tables (every area's in_use),
// then models the image on the target area (facts.layout) as the running
// kernel's preset and the RFC place it. Its findings ("layout").
std::vector<Finding> LayoutFindings(DoctorFacts& facts, const std::string& root);

}  // namespace swaplab::kernel::internal
