// SPDX-License-Identifier: MIT
// Cluster maps: a device's clusters in disk order, each on its list (or
// owned by a hibernation image), drawn as SVG, one cell per cluster.
// The list a cluster is on is the allocator's cluster flag (allocator spec
// §1.7; kernel: struct swap_cluster_info flags, mm/swapfile.c).
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/hibernate/image_chain.h"

namespace swaplab::report {

enum class CellKind : uint8_t {
  kFree,
  kNonfull,
  kFrag,
  kFull,
  kDiscard,
  kReserved,  // held back for a hibernation image at swapon (seed 001 patches 9-10)
  kImage,     // holds a slot of the image
  kOffList,   // isolated: on no list (a CPU or the scan holds it)
  kNotImage,  // an area read from disk: no slot of the image here
};
inline constexpr int kCellKinds = 9;
const char* Name(CellKind k);
const char* Colour(CellKind k);  // "#rrggbb"

struct ClusterCell {
  uint32_t count = 0;  // slots in use
  int8_t order = 0;
  CellKind kind = CellKind::kFree;
  CellKind list = CellKind::kFree;  // the allocator's list (kImage cells keep theirs here)
  uint32_t image_slots = 0;         // slots of the image in this cluster
  uint32_t map_pages = 0;           // of them, the image's map pages
};

struct ClusterMap {
  uint32_t cluster_size = 512;
  std::vector<ClusterCell> cells;  // cluster index order
  // Where the image's runs start (cluster index of run 0, 1, ...) and
  // what a run is in this map, for the legend.
  std::vector<uint64_t> run_starts;
  std::string runs_note;
  std::vector<std::string> notes;  // extra legend lines
};

// Device `type` of `sys` as the allocator has it: each cluster's count,
// order and list; the hibernation reservation as kReserved. Read-only.
Result<ClusterMap> SnapshotClusters(const alloc::SwapSystem& sys, int type);

// `after` is `before` plus an image: a cluster whose count grew holds that
// many of the image's slots and is drawn as image-owned. The image's runs
// here are stretches of consecutive clusters holding its slots.
void MarkImageByDelta(ClusterMap& after, const ClusterMap& before);

// The image's slots on `m`: `stream` and `map` are the dblocks (= slots)
// of its stream pages and map pages, as the writer placed them (§4.2) or
// the map chain lists them. Each cluster holding one is image-owned; the
// runs are stretches of consecutive dblocks (§10.4 (a)), numbered where
// they start. `count_slots`: the map has no counts of its own (an area read
// from disk), the image's slots are its count.
void MarkImageSlots(ClusterMap& m, const std::vector<uint64_t>& stream,
                    const std::vector<uint64_t>& map, bool count_slots);

// An area with a hibernation image on it (the kernel's or swaplab's): the
// clusters holding its stream pages and map pages, read from its map chain.
// The runs are stretches of consecutive dblocks (§10.4 (a)).
ClusterMap ImageAreaMap(const hibernate::ImageChain& chain, uint64_t device_pages,
                        uint32_t cluster_size);

struct MapSvgOptions {
  uint64_t max_cells = 16384;  // more clusters: each cell aggregates several
  int columns = 128;
  int cell_px = 6;
  bool number_runs = true;       // the overlay numbering the image's runs
  size_t max_run_labels = 1000;  // more runs: the overlay is left out (said in the legend)
};

struct MapPanel {
  std::string caption;
  const ClusterMap* map = nullptr;
};

// One SVG: a panel per map (stacked), then the legend.
std::string ClusterMapSvg(const std::string& title, const std::vector<MapPanel>& panels,
                          const MapSvgOptions& o = {});

}  // namespace swaplab::report
#pragma GCC visibility pop
