// The hibernation image step of a scenario: write a synthetic snapshot as
// an image on an aged device through the hibernate layer, then read it
// back as resume does (hibernation spec §4, §6, §8), on a simulated device
// (modelled seconds) or a real swap file (measured seconds).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/hibernate/image_session.h"
#include "swaplab/hibernate/request_batcher.h"

namespace swaplab::workload {

struct ImageSpec {
  uint64_t pages = 0;  // saveable pages of the snapshot (image size / 4 KiB)
  hibernate::SlotSourceKind source = hibernate::SlotSourceKind::kBase;
  hibernate::BatchOptions batch{};
  bool read_back = true;
  uint64_t seed = 1;   // snapshot contents
};

struct ImageResult {
  uint64_t stream_pages = 0;   // T
  uint64_t slots = 0;          // T + Q + 1
  uint64_t runs = 0;           // seed 001 "runs" as §10.4 defines it: stretches of the sorted set
  // Stretches in the order the writer took its slots (map page 0, stream
  // pages 0-510, map page 1, ...): each jump to another place starts one.
  uint64_t runs_alloc_order = 0;
  uint64_t write_bios = 0, read_bios = 0;  // seed 001 "bios" (§10.5)
  uint64_t write_requests = 0;             // after the plug merged them
  uint64_t fallback_slots = 0;             // single slots (nonfull / frag)
  double write_s = 0, read_s = 0;          // modelled or measured, see `modelled`
  bool modelled = true;
};

// A simulated device of `pages` pages, calibrated on this machine's disk
// (area::SimModel defaults), with a v1 swap header in page 0. Page 0 is
// kept in memory whole (the writer and reader read it back); the other
// pages keep a checksum so the read-back verifies every page.
std::unique_ptr<area::IoEngine> MakeSimulatedSwapDevice(uint64_t pages);

// Runs of the slots in the order the writer asked for them (map page j,
// then its 511 stream pages, then map page j + 1, §10.2).
uint64_t RunsInAllocationOrder(const std::vector<uint64_t>& stream, const std::vector<uint64_t>& map);

// Writes the image on device `type` of `sys` through `engine` (dblock =
// slot), then reads it back. Seconds: the engine's modelled time when it
// models one, else wall time. Errors from the writer and reader.
Result<ImageResult> WriteReadImage(alloc::SwapSystem& sys, int type, area::IoEngine& engine,
                                   const ImageSpec& spec);

}  // namespace swaplab::workload
