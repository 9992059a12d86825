// SPDX-License-Identifier: MIT
// `swaplab image read|inspect`: any hibernation image on a swap area, the
// kernel's or swaplab's, read as resume does (hibernation spec §1.4, §3.3,
// §4.8, §7, §10) or only its header, swsusp_info and map chain inspected.
// Read-only unless `consume`.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "swaplab/alloc/status.h"
#include "swaplab/area/io_engine_factory.h"
#include "swaplab/hibernate/image_chain.h"
#include "swaplab/hibernate/image_reader.h"
#include "swaplab/hibernate/request_batcher.h"

namespace swaplab::workload {

struct ImageReadOptions {
  std::string area;
  bool inspect = false;  // inspect only: no stream page is read
  hibernate::BatchOptions batch;
  unsigned threads = 0;    // decompressor threads (0: the kernel's rule)
  bool consume = false;    // restore the swap signature first, as resume does
  bool kernel_io = false;  // the kernel's sync reads of map and metadata pages
  std::string dump;        // the decompressed stream to this new file ("" = none)
  // Stream pages read so far, of T (hibernate::ReaderOptions::progress).
  std::function<void(uint64_t done, uint64_t total)> progress = nullptr;
  area::EngineKind io = area::EngineKind::kAuto;  // --io (area/io_engine_factory.h)
};

struct ImageReadResult {
  ImageReadOptions options;
  std::optional<hibernate::ImageInspection> inspection;  // inspect
  std::optional<hibernate::ReadReport> read;             // read
  double seconds = 0;                                    // measured
  double cpu_seconds = 0;  // read: CPU time of the process over the read
};

// The step a failed read stopped at: the command line takes its exit code
// from it.
enum class ImageReadStep { kOpenArea, kLock, kOpenEngine, kOpenDump, kRead };

Result<ImageReadResult> ReadImageOnArea(const ImageReadOptions& o, ImageReadStep* failed = nullptr);

}  // namespace swaplab::workload
#pragma GCC visibility pop
