// SPDX-License-Identifier: MIT
// `swaplab reproduce --vm`: seed 001's two tables (shuffled free list,
// 64 KiB holes) on a real kernel in a qemu guest, scaled down, each layout
// side by side with the model.
#pragma once
#pragma GCC visibility push(default)
#include <csignal>
#include <functional>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/alloc/types.h"
#include "swaplab/area/io_engine_factory.h"
#include "swaplab/vm/vm_hibernate.h"

namespace swaplab::vm {

// Seed 001's sizes: a 5.0 GiB image (1,310,720 pages) written without
// compression to a 6 GiB swap device (shuffled) and a 12 GiB one (holes).
inline constexpr uint64_t kSeedImageBytes = 1310720ull * alloc::kPageSize;
inline constexpr uint64_t kSeedShuffledSwapBytes = 6ull << 30;
inline constexpr uint64_t kSeedHolesSwapBytes = 12ull << 30;
// The scales a guest can hold: an image of 40 MiB .. 1 GiB (below that the
// guest's own pages, about 57 MiB in all at the smallest, are most of the
// image; above, the guest needs more than 3 GiB).
inline constexpr double kMinSeedScale = 1.0 / 128, kMaxSeedScale = 1.0 / 5;
// The guest's own pages come on top of the image asked for (its kernel,
// page cache and agent: 57 MiB images when 32 MiB were asked, 81 MiB for
// 64 MiB), so a swap device is never smaller than the image asked plus
// this, whatever the seed's proportion gives.
inline constexpr uint64_t kGuestOwnSwapBytes = 48ull << 20;

struct SeedTableOptions {
  VmOptions vm;             // kernel, accel, CPUs; mem_mib 0: chosen from the image size
  double scale = 1.0 / 64;  // of the seed's sizes
  hibernate::Compressor compress = hibernate::Compressor::kNone;  // the seed wrote uncompressed
  std::string policy{kGuestPreset};
  uint64_t seed = 1;
  // The engine that reads each guest's image off its disk (--io).
  area::EngineKind io = area::EngineKind::kAuto;
};

struct SeedTableReport {
  SeedTableOptions options;
  std::vector<HibernateReport> layouts;  // shuffled, then holes
};

// The options of one layout's run at `o.scale` (exposed for tests).
Result<HibernateOptions> SeedLayoutOptions(const SeedTableOptions& o, workload::RfcLayout layout);
// Both layouts, each hibernated and resumed; the first error ends it.
Result<SeedTableReport> RunSeedTable(const SeedTableOptions& o,
                                     const volatile std::sig_atomic_t* interrupted);

// Seed 001's columns on one kernel built with kernel-patches/rfc-6.12: the
// boot parameters that switch each idea on, and the model's matching knobs
// and image slot source. Every column boots with swapfile.prefer_nonfull=1:
// seed 001's base "allocates as mm-new does", and mm-new tries nonfull
// clusters before free ones (seed 003; 6.12 does not). "base" adds nothing
// (6.12's image path, a bio per page), "allocator" hibernate_alloc=clusters
// (whole free clusters in disk order; the model's free-clusters-sorted
// source), "allocator + bio" also hibernate_bio=runs (a bio per run).
inline constexpr const char* kNonfullFirstParam = "swapfile.prefer_nonfull=1";
// The model's search order of a 6.12 kernel booted with it, on a device
// that does not discard (kernel-patches/nonfull-6.12).
inline constexpr const char* kNonfullFirstSearchKnob =
    "search=nonfull,free,reclaim-full,frag-all,sync-discard-restart,steal-higher";
struct RfcColumn {
  std::string name;
  std::string append;                    // kernel parameters
  std::vector<std::string> model_knobs;  // NAME=VALUE on the model's preset
  hibernate::SlotSourceKind model_source = hibernate::SlotSourceKind::kBase;
  bool bio_runs = false;  // the kernel builds a bio per run: the model's bios are per run
};
std::vector<RfcColumn> RfcColumns();

struct RfcTableOptions {
  SeedTableOptions table;  // table.vm.kernel: the patched kernel (a built kernel's name)
  int runs = 3;            // hibernate + resume per cell
  std::vector<RfcColumn> columns = RfcColumns();
};
inline constexpr int kMaxRfcRuns = 20;

// One cell: a layout under a column, `runs` times.
struct RfcCell {
  RfcColumn column;
  std::vector<HibernateReport> runs;
};
struct RfcLayoutTable {
  workload::RfcLayout layout = workload::RfcLayout::kShuffled;
  std::vector<RfcCell> cells;  // in RfcTableOptions::columns order
};
struct RfcTableReport {
  RfcTableOptions options;
  std::vector<RfcLayoutTable> layouts;  // shuffled, then holes
};

// Every layout x column x run, each a layout boot, a hibernation and a
// resume (RunHibernate with the column's parameters and model source).
// -EINVAL for runs outside 1..kMaxRfcRuns or a kernel that does not know a
// column's parameters; the first error ends it. `done(k, n)` is called
// after the k-th of n runs (may be null).
Result<RfcTableReport> RunRfcTable(const RfcTableOptions& o,
                                   const volatile std::sig_atomic_t* interrupted,
                                   const std::function<void(size_t, size_t)>& done = nullptr);

}  // namespace swaplab::vm
#pragma GCC visibility pop
