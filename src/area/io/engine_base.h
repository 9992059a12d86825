// SPDX-License-Identifier: MIT
// What the uring, POSIX and simulated engines share: validation, the plug,
// O_DIRECT bounce pages, completion bookkeeping, stats; and an open file or
// block device. Not part of the contract.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "area/io/plug.h"
#include "swaplab/area/io_engine.h"

namespace swaplab::area::io {

// A base for engines that turn each Submit batch into device requests.
// A derived engine issues the requests of queued_ (in order) and reports
// each one exactly once through Complete(); Drive() must return only when
// queued_ is empty and nothing is in flight.
class PluggedEngine : public IoEngine {
 public:
  Status Submit(std::span<IoRequest> batch) final;
  Status Wait(std::vector<IoCompletion>* done) final;
  Status WaitAny(std::vector<IoCompletion>* done) final;
  Status Poll(std::vector<IoCompletion>* done) final;
  IoStats stats() const override { return stats_; }
  const DeviceLimits& limits() const override { return opts_.limits; }
  std::string name() const override { return name_; }
  std::string description() const override {
    return name_ + (bounce_ ? ", O_DIRECT" : ", buffered");
  }

 protected:
  // device_pages: size of the target (0: unbounded). bounce: O_DIRECT, so
  // caller pages not 4096-aligned go through bounce pages.
  PluggedEngine(std::string name, std::string where, EngineOptions o, uint64_t device_pages,
                bool bounce);
  ~PluggedEngine() override;

  // Called at the end of every successful Submit: start I/O if the engine
  // can do so without blocking.
  virtual void Kick() {}
  // Runs every queued and in-flight request to completion.
  virtual Status Drive() = 0;
  // Runs requests until at least one caller request is complete (or none
  // is left); engines that cannot stop early run them all.
  virtual Status DriveSome() { return Drive(); }
  bool AnyComplete() const { return tracker_.ready() > 0; }
  // The request's first `pages_done` pages were transferred; the rest, if
  // any, failed with `error`. Copies bounced read pages back, frees bounce
  // pages, and settles the pieces.
  void Complete(DeviceRequest& r, uint32_t pages_done, int error);

  const EngineOptions& opts() const { return opts_; }
  const std::string& where() const { return where_; }
  uint64_t device_pages() const { return device_pages_; }
  IoStats stats_;
  std::deque<DeviceRequest> queued_;

 private:
  Status Collect(Status driven, std::vector<IoCompletion>* done);
  std::byte* GetBouncePage();
  std::string name_, where_;
  EngineOptions opts_;
  uint64_t device_pages_;
  bool bounce_;
  uint32_t max_pages_;
  uint64_t next_id_ = 0;
  CompletionTracker tracker_;
  std::vector<std::byte*> bounce_free_;  // 4096-aligned pages, reused
};

// An open regular file or block device.
class FileTarget {
 public:
  // Opens `path` read-write (read-only unless o.writable) with O_DIRECT if
  // o.o_direct; a filesystem that refuses O_DIRECT gets buffered I/O and a
  // one-line notice on stderr. pages() is the size in whole pages (a
  // partial last page is not addressable). Errors: −errno from open / fstat
  // / ioctl, −EINVAL for anything but a regular file or a block device.
  static Result<std::unique_ptr<FileTarget>> Open(const std::string& path, const EngineOptions& o);
  ~FileTarget();
  FileTarget(const FileTarget&) = delete;
  FileTarget& operator=(const FileTarget&) = delete;

  int fd() const { return fd_; }
  bool direct() const { return direct_; }
  uint64_t pages() const { return pages_; }
  const std::string& path() const { return path_; }
  // BLKDISCARD on a block device, fallocate(PUNCH_HOLE | KEEP_SIZE) on a
  // file. −EINVAL out of range, −EOPNOTSUPP / −errno from the kernel.
  Status Discard(uint64_t page, uint64_t n);

 private:
  FileTarget() = default;
  int fd_ = -1;
  bool blkdev_ = false, direct_ = false, writable_ = false;
  uint64_t pages_ = 0;
  std::string path_;
};

}  // namespace swaplab::area::io
