// SPDX-License-Identifier: MIT
// `swaplab image write`: a synthetic snapshot written as a hibernation
// image on a real swap area through the io_uring engine (hibernation spec
// §3.2, §4, §6), after the allocator was brought to one of the RFC's
// device states. The whole run: the area locked and opened, the size
// checked against it and this machine, the model's device and its layout,
// the snapshot, the write copies, the timed write.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <functional>
#include <string>

#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/status.h"
#include "swaplab/area/io_engine_factory.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/hibernate/compress.h"
#include "swaplab/hibernate/image_session.h"
#include "swaplab/hibernate/image_writer.h"
#include "swaplab/hibernate/request_batcher.h"
#include "swaplab/workload/layouts.h"

namespace swaplab::workload {

struct ImageWriteOptions {
  std::string area;  // file or block device
  hibernate::BatchOptions batch;
  hibernate::Compressor compress = hibernate::Compressor::kNone;
  hibernate::SlotSourceKind source = hibernate::SlotSourceKind::kFreeClustersSorted;
  RfcLayout layout = RfcLayout::kFresh;
  alloc::Policy policy;
  uint64_t size_bytes = 0;
  uint64_t memory_budget_bytes = 0;    // write copies in flight before a drain (§6.1)
  uint64_t snapshot_memory_bytes = 0;  // snapshots up to this size are built before the write
  double zero_share = 0.1;
  uint64_t seed = 1;
  unsigned threads = 0;  // compressor threads (0: the kernel's rule)
  // As the user named them, for the report.
  std::string batch_name, capacity_name, source_name, layout_name, compress_name, size_arg;
  // Snapshot pages written so far, of T (hibernate::WriterOptions::progress).
  std::function<void(uint64_t done, uint64_t total)> progress = nullptr;
  area::EngineKind io = area::EngineKind::kAuto;  // --io (area/io_engine_factory.h)
};

struct ImageWriteResult {
  ImageWriteOptions options;
  uint32_t max_pages = 0;  // pages per bio in effect
  hibernate::WriteReport report;
  double write_seconds = 0;      // measured: swsusp_write's part only
  double write_cpu_seconds = 0;  // CPU time of the process over the same span
  bool snapshot_materialized = false;
  double snapshot_build_seconds = 0;  // outside write_seconds
  uint64_t copy_arena_pages = 0;
  bool fixed_buffers = false;  // the copy arena registered with io_uring
};

// The step a failed write stopped at: the command line names it and takes
// its exit code from it.
enum class ImageWriteStep {
  kLock,       // area::LockArea
  kOpenArea,   // the area's header and extents (-EINVAL: swapon would refuse it)
  kCheckSize,  // the size does not fit the area or this machine
  kOpenEngine,
  kWrite,  // the model's device, its layout, the snapshot, the write
};

// `failed` (optional) says where an error came from.
Result<ImageWriteResult> WriteImageToArea(const ImageWriteOptions& o,
                                          ImageWriteStep* failed = nullptr);

// CPU time of the process (every thread, user + system, the kernel's
// io_uring work charged to us included), to tell CPU-bound from I/O-bound.
double ProcessCpuSeconds();

}  // namespace swaplab::workload
#pragma GCC visibility pop
