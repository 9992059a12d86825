// `swaplab reproduce --vm`: seed 001's two tables (shuffled free list,
// 64 KiB holes) on a real kernel in a qemu guest, scaled down, each layout
// side by side with the model.
#pragma once
#pragma GCC visibility push(default)
#include <csignal>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/vm/vm_hibernate.h"

namespace swaplab::vm {

// Seed 001's sizes: a 5.0 GiB image (1,310,720 pages) written without
// compression to a 6 GiB swap device (shuffled) and a 12 GiB one (holes).
inline constexpr uint64_t kSeedImageBytes = 1310720ull * 4096;
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
  std::string policy = "linux-6.12";
  uint64_t seed = 1;
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

}  // namespace swaplab::vm
#pragma GCC visibility pop
