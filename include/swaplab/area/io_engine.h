// I/O engines: submit a batch of page-aligned requests, wait for their
// completions; every submitted request counts as one bio, as the kernel
// counts them; a plug model merges adjacent requests into device requests
// up to the device limits (hibernation spec §6).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"

namespace swaplab::area {

// Queue limits as the block layer has them (/sys/block/X/queue).
struct DeviceLimits {
  uint32_t max_segments = 254;       // virtio-blk with a 256-entry queue
  uint32_t max_sectors_kb = 1280;    // soft limit (BLK_DEF_MAX_SECTORS_CAP)
  uint32_t logical_block_size = 512;
  bool rotational = false;
  bool discard = false;
  // Pages one request may carry: min(max_sectors_kb / 4, max_segments).
  uint32_t MaxPagesPerRequest() const;
};
// Reads the limits of the block device holding `path` (the device itself,
// or the filesystem's device for a regular file; partitions use their
// disk's queue). Errors name the sysfs file.
Result<DeviceLimits> ReadDeviceLimits(const std::string& path);

// One request: pages [page, page + bufs.size()) of the target, each buffer
// one 4 KiB page, 4096-aligned.
struct IoRequest {
  bool write = false;
  uint64_t page = 0;
  std::vector<std::byte*> bufs;
  uint64_t tag = 0;  // returned in the completion
};

struct IoCompletion {
  uint64_t tag = 0;
  int error = 0;             // 0 or −errno
  uint64_t failed_page = 0;  // first page not done, when error != 0
  uint32_t pages_done = 0;
};

struct IoStats {
  uint64_t bios = 0;       // requests submitted by the caller
  uint64_t requests = 0;   // device requests after the plug merged them
  uint64_t pages_read = 0, pages_written = 0;
  uint64_t errors = 0;
  uint64_t modelled_ns = 0;  // simulated engine only: modelled device time
};

class IoEngine {
 public:
  virtual ~IoEngine() = default;
  virtual std::string name() const = 0;
  // Queues a batch (the plug). Adjacent requests of the same direction may
  // be merged up to the limits when plug merging is on. Returns an error
  // only for a malformed request (nothing is then queued).
  virtual Status Submit(std::span<IoRequest> batch) = 0;
  // Waits for everything submitted; appends one completion per request,
  // each exactly once.
  virtual Status Wait(std::vector<IoCompletion>* done) = 0;
  // Discards pages [page, page + n) (BLKDISCARD or a hole punch).
  virtual Status Discard(uint64_t page, uint64_t n) = 0;
  virtual IoStats stats() const = 0;
  virtual const DeviceLimits& limits() const = 0;
};

struct EngineOptions {
  unsigned queue_depth = 64;
  bool o_direct = true;
  bool plug_merge = true;
  DeviceLimits limits{};
  bool writable = true;
};

// io_uring with O_DIRECT (liburing). Falls back to the POSIX engine with a
// one-line notice on stderr where io_uring is unavailable.
Result<std::unique_ptr<IoEngine>> OpenUringEngine(const std::string& path, EngineOptions o);
// preadv / pwritev.
Result<std::unique_ptr<IoEngine>> OpenPosixEngine(const std::string& path, EngineOptions o);

// The simulated device's cost model (docs/performance.md has the
// calibration): time = per-request overhead + bytes / bandwidth, with up to
// queue_depth requests overlapping, plus a seek term on rotational devices.
struct SimModel {
  uint64_t pages = 0;            // device size
  double request_overhead_us = 20;
  double write_mib_s = 1000, read_mib_s = 2000;
  unsigned queue_depth = 64;
  bool rotational = false;
  double seek_ms_per_gib = 0;    // rotational: ms per GiB of head travel
  bool store_checksums = true;   // remember a checksum per written page
};
std::unique_ptr<IoEngine> MakeSimulatedEngine(SimModel m, EngineOptions o);

// Wraps an engine: fail the Nth request (0-based, counted over submitted
// requests) with `error` (−EIO, −ENOSPC), or complete it short.
struct FaultPlan {
  uint64_t fail_request = UINT64_MAX;
  int error = -5;  // −EIO
  bool short_completion = false;  // complete half the pages, no error code
};
std::unique_ptr<IoEngine> MakeFaultInjectingEngine(std::unique_ptr<IoEngine> inner, FaultPlan plan);

}  // namespace swaplab::area
