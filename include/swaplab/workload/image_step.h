// SPDX-License-Identifier: MIT
// The hibernation image step of a scenario: write a synthetic snapshot as
// an image on an aged device through the hibernate layer, then read it
// back as resume does (hibernation spec §4, §6, §8), on a simulated device
// (modelled seconds) or a real swap file (measured seconds).
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/hibernate/image_session.h"
#include "swaplab/hibernate/request_batcher.h"
#include "swaplab/workload/host_cpu.h"

namespace swaplab::workload {

struct ImageSpec {
  uint64_t pages = 0;  // saveable pages of the snapshot (image size / 4 KiB)
  hibernate::SlotSourceKind source = hibernate::SlotSourceKind::kBase;
  hibernate::BatchOptions batch{};
  bool read_back = true;
  uint64_t seed = 1;  // snapshot contents
  // Structural: no page data is generated, copied or checked. The writer
  // batches model_only (every write bio carries one shared scratch page),
  // the reader counts bios without comparing pages. Runs, bios, bio sizes,
  // map pages and modelled seconds equal a data-carrying run of the same
  // size. Needs a device from MakeSimulatedSwapDevice(pages, true).
  bool structural = false;
  uint64_t memory_budget_pages = 262144;  // write copies before a drain (WriterOptions, 1 GiB)
};

struct ImageResult {
  uint64_t stream_pages = 0;  // T
  uint64_t slots = 0;         // T + Q + 1
  uint64_t runs = 0;          // seed 001 "runs" as §10.4 defines it: stretches of the sorted set
  // Stretches in the order the writer took its slots (map page 0, stream
  // pages 0-510, map page 1, ...): each jump to another place starts one.
  uint64_t runs_alloc_order = 0;
  uint64_t write_bios = 0, read_bios = 0;  // seed 001 "bios" (§10.5)
  uint64_t write_requests = 0;             // after the plug merged them
  uint64_t fallback_slots = 0;             // single slots (nonfull / frag)
  uint64_t alloc_calls = 0;        // allocator calls that gave slots (SessionStats::runs_taken)
  double write_s = 0, read_s = 0;  // modelled or measured, see `modelled`
  bool modelled = true;
  bool data_checked = false;  // every page read back was compared with the snapshot
  std::map<uint32_t, uint64_t> write_bio_sizes, read_bio_sizes;  // pages per bio -> bios
  uint64_t map_pages = 0;                                        // Q + 1, as the reader walked them
  // The writer's placement (§4.2): the dblock of each stream page and of
  // each map page, in their order. Read-only (cluster maps draw it).
  std::vector<uint64_t> stream_dblocks, map_dblocks;

  // Modelled seconds plus the host CPU work `c` prices.
  double WriteWithHostCpu(const HostCpuCost& c) const {
    return c.Write(write_s, write_bios, alloc_calls);
  }
  double ReadWithHostCpu(const HostCpuCost& c) const { return c.Read(read_s, read_bios); }
};

// A simulated device of `pages` pages, calibrated on this machine's disk
// (area::SimModel defaults), with a v1 swap header in page 0. Page 0 is
// kept in memory whole (the writer and reader read it back); the other
// pages keep a checksum so the read-back verifies every page.
// Structural: no checksums are kept (no per-page work); reads of the
// image's map pages and swsusp_info are answered from the writer's
// placement, the other pages read back as whatever the device holds.
std::unique_ptr<area::IoEngine> MakeSimulatedSwapDevice(uint64_t pages, bool structural = false);

// Runs of the slots in the order the writer asked for them (map page j,
// then its 511 stream pages, then map page j + 1, §10.2).
uint64_t RunsInAllocationOrder(const std::vector<uint64_t>& stream,
                               const std::vector<uint64_t>& map);

// Writes the image on device `type` of `sys` through `engine` (dblock =
// slot), then reads it back. Seconds: the engine's modelled time when it
// models one, else wall time. Errors from the writer and reader.
Result<ImageResult> WriteReadImage(alloc::SwapSystem& sys, int type, area::IoEngine& engine,
                                   const ImageSpec& spec);

}  // namespace swaplab::workload
#pragma GCC visibility pop
