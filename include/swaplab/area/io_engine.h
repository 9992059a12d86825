// SPDX-License-Identifier: MIT
// I/O engines: submit a batch of page-aligned requests, wait for their
// completions; every submitted request counts as one bio, as the kernel
// counts them; a plug model merges adjacent requests into device requests
// up to the device limits (hibernation spec §6).
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"

namespace swaplab::area {

// Queue limits as the block layer has them (/sys/block/X/queue).
struct DeviceLimits {
  uint32_t max_segments = 254;     // virtio-blk with a 256-entry queue
  uint32_t max_sectors_kb = 1280;  // soft limit (BLK_DEF_MAX_SECTORS_CAP)
  uint32_t logical_block_size = 512;
  bool rotational = false;
  bool discard = false;
  // Pages one request may carry: min(max_sectors_kb / 4, max_segments).
  uint32_t MaxPagesPerRequest() const;
};
// Reads the limits of the block device holding `path` (the device itself,
// or the filesystem's device for a regular file; partitions use their
// disk's queue). Errors name the sysfs file.
//   max_segments, max_sectors_kb, logical_block_size: required;
//   rotational: 0 if the file is missing; discard: discard_max_bytes != 0
//   (false if missing). −ENODEV when st_dev has no /sys/dev/block entry
//   (tmpfs, overlayfs, btrfs subvolumes): callers then keep the defaults.
Result<DeviceLimits> ReadDeviceLimits(const std::string& path);
// The same with another sysfs root (tests use a fake tree): reads
// <sysfs_root>/dev/block/MAJ:MIN/[..]/queue/*.
Result<DeviceLimits> ReadDeviceLimits(const std::string& path, const std::string& sysfs_root);

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
  uint64_t failed_page = 0;  // first page not done, when error != 0 or short
  uint32_t pages_done = 0;   // pages done from the request's first page
  // A short completion (error 0, pages_done < pages) comes only from the
  // fault-injecting wrapper: real engines retry short transfers, and turn a
  // transfer that makes no progress (end of file) into −EIO.
};

struct IoStats {
  uint64_t bios = 0;      // requests submitted by the caller
  uint64_t requests = 0;  // device requests after the plug merged them
  uint64_t pages_read = 0, pages_written = 0;
  uint64_t errors = 0;
  uint64_t modelled_ns = 0;     // simulated engine only: modelled device time
  uint64_t fixed_requests = 0;  // io_uring: requests issued on the registered buffer
};

class IoEngine {
 public:
  virtual ~IoEngine() = default;
  virtual std::string name() const = 0;
  // How the engine reaches the device, for a report's setup: name() and,
  // for a file, whether its I/O is O_DIRECT or buffered (a file system
  // without O_DIRECT falls back to buffered I/O).
  virtual std::string description() const { return name(); }
  // Queues a batch (the plug). Adjacent requests of the same direction may
  // be merged up to the limits when plug merging is on. Returns an error
  // only for a malformed request (nothing is then queued).
  virtual Status Submit(std::span<IoRequest> batch) = 0;
  // Waits for everything submitted; appends one completion per request,
  // each exactly once, in the order they completed. Returns, like
  // hib_wait_io(), an error when one failed: of the failed ones the one at
  // the lowest page (its error, or −EIO for a short completion; the message
  // names the tag and the page), or an engine-level error; the completions
  // are appended in every case.
  virtual Status Wait(std::vector<IoCompletion>* done) = 0;
  // Waits until at least one submitted request has completed (at once when
  // one has, or when nothing is in flight) and appends the completions
  // there are so far, each exactly once; the rest stay in flight for a
  // later WaitAny or Wait. Errors as Wait, over what it appends. Engines
  // that cannot wait for less wait for everything (this default).
  virtual Status WaitAny(std::vector<IoCompletion>* done) { return Wait(done); }
  // Appends the completions there already are, without waiting, each
  // exactly once (a later Wait or WaitAny does not return them again);
  // errors as Wait, over what it appends. Engines that complete requests
  // only inside Wait report none (this default).
  virtual Status Poll(std::vector<IoCompletion>* /*done*/) { return Status::Ok(); }
  // Discards pages [page, page + n) (BLKDISCARD or a hole punch; the
  // simulated device forgets the pages, −EOPNOTSUPP unless limits.discard).
  virtual Status Discard(uint64_t page, uint64_t n) = 0;
  virtual IoStats stats() const = 0;
  virtual const DeviceLimits& limits() const = 0;
  // Registers [base, base + bytes) (4096-aligned, pinned once): requests
  // whose pages lie contiguously inside it skip the per-I/O page pinning
  // (io_uring fixed buffers). Replaces an earlier registration. Returns
  // whether the engine uses it; engines without the notion ignore it.
  // The memory must stay valid until UnregisterBuffer or destruction.
  virtual bool RegisterBuffer(std::byte* /*base*/, size_t /*bytes*/) { return false; }
  virtual void UnregisterBuffer() {}
  // Whether the engine's time is a cost model's (the simulated device, or a
  // wrapper of one), not a device's: its seconds are modelled, and depend on
  // when it is waited for. Wrappers answer for what they wrap.
  virtual bool modelled() const { return false; }
};

// Engines take `limits` as given (for the plug); they do not read sysfs.
struct EngineOptions {
  unsigned queue_depth = 64;  // io_uring: SQ size and requests in flight
  bool o_direct = true;
  bool plug_merge = true;
  DeviceLimits limits{};
  bool writable = true;
};

// io_uring with O_DIRECT (liburing). Where io_uring is unavailable it
// returns io_uring_queue_init's error (−ENOSYS, −EPERM, −EACCES, ...); the
// fallback to the POSIX engine is OpenEngine's (io_engine_factory.h). The
// test seam: when the environment sets SWAPLAB_NO_IO_URING (non-empty, not
// "0") it returns −ENOSYS, as a kernel without io_uring does. Caller pages
// that are not 4096-aligned are copied through aligned bounce pages; a
// filesystem without O_DIRECT gets buffered I/O (one-line notice).
Result<std::unique_ptr<IoEngine>> OpenUringEngine(const std::string& path, EngineOptions o);
// preadv / pwritev, one call per device request, issued from Wait.
Result<std::unique_ptr<IoEngine>> OpenPosixEngine(const std::string& path, EngineOptions o);

// The simulated device's cost model (docs/performance.md has the
// calibration): time = per-request overhead + bytes / bandwidth, with up to
// queue_depth requests overlapping, plus a seek term on rotational devices.
// Precisely: a request's latency request_overhead_us overlaps with other
// requests (up to min(queue_depth, EngineOptions::queue_depth) in flight);
// its service request_serial_us + bytes / bandwidth (+ seek) holds the
// device's one channel. Depth 1: overhead + service per request; deep
// queues: at most one service time per request. Defaults: this machine's
// virtio-blk disk, fitted to fio (io_uring, O_DIRECT, 4k/512k, depth 1/32).
struct SimModel {
  uint64_t pages = 0;  // device size; 0: unbounded
  double request_overhead_us = 44;
  double request_serial_us = 19;  // per-request device time: the IOPS ceiling
  double write_mib_s = 670, read_mib_s = 610;
  unsigned queue_depth = 64;
  bool rotational = false;
  double seek_ms_per_gib = 0;   // rotational: ms per GiB of head travel
  bool store_checksums = true;  // remember a checksum per written page
  bool store_data = false;      // keep whole pages: an in-memory device
};
// What a read returns: with store_data, the page written; else with
// store_checksums, for a page written and not discarded since, a page whose
// first three uint64_t are {kSimChecksumPageMagic, page, SimPageChecksum(the
// page written)}, the rest zero; otherwise zeros. Writes inside the device
// always succeed.
std::unique_ptr<IoEngine> MakeSimulatedEngine(SimModel m, EngineOptions o);
inline constexpr uint64_t kSimChecksumPageMagic = 0x314b43534d49534cULL;  // "LSIMSCK1"
// The per-page checksum the simulated device keeps (64-bit, never 0; not a
// CRC, not cryptographic).
uint64_t SimPageChecksum(const std::byte* page);

// The simulated device's clock over a real file: every request goes to
// `path` through the POSIX engine (the bytes persist and read back, as with
// OpenPosixEngine), and a simulated device of model `m` that stores nothing
// sees the same requests. Completions, data, errors and stats are the
// file's, except stats().modelled_ns, the model's; modelled() is true, so
// callers that report modelled time (the scenario image step) report it.
// Errors as OpenPosixEngine.
Result<std::unique_ptr<IoEngine>> OpenSimulatedFileEngine(const std::string& path, EngineOptions o,
                                                          SimModel m);

// Wraps an engine: fail the Nth request (0-based, counted over submitted
// requests) with `error` (−EIO, −ENOSPC) at its first page (pages_done 0),
// or complete it short (pages_done = pages / 2, failed_page the next page).
// The request still goes to the inner engine (so merging is unchanged); only
// its completion is rewritten. stats().errors counts the injected failure.
struct FaultPlan {
  uint64_t fail_request = UINT64_MAX;
  int error = -5;                 // −EIO
  bool short_completion = false;  // complete half the pages, no error code
};
std::unique_ptr<IoEngine> MakeFaultInjectingEngine(std::unique_ptr<IoEngine> inner, FaultPlan plan);

}  // namespace swaplab::area
#pragma GCC visibility pop
