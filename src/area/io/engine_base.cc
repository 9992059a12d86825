// SPDX-License-Identifier: MIT
// The shared engine core: Submit (validate, plug, bounce, track) and Wait
// (drive, settle, report), and the open file or block device.
#include "area/io/engine_base.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "swaplab/area/area_lock.h"

namespace swaplab::area::io {
namespace {

Status ErrnoStatus(int err, const std::string& what) {
  return Status(-err, fmt::format("{}: {}", what, std::strerror(err)));
}

bool Aligned(const std::byte* p) { return reinterpret_cast<uintptr_t>(p) % kPageSize == 0; }

}  // namespace

PluggedEngine::PluggedEngine(std::string name, std::string where, EngineOptions o,
                             uint64_t device_pages, bool bounce)
    : name_(std::move(name)),
      where_(std::move(where)),
      opts_(o),
      device_pages_(device_pages),
      bounce_(bounce),
      max_pages_(EnginePagesPerRequest(o.limits)) {}

PluggedEngine::~PluggedEngine() {
  // Derived destructors have drained everything in flight.
  for (std::byte* p : bounce_free_) std::free(p);
  for (DeviceRequest& r : queued_)
    for (auto& [i, user] : r.bounced) std::free(r.bufs[i]);
}

std::byte* PluggedEngine::GetBouncePage() {
  if (!bounce_free_.empty()) {
    std::byte* p = bounce_free_.back();
    bounce_free_.pop_back();
    return p;
  }
  void* p = nullptr;
  if (posix_memalign(&p, kPageSize, kPageSize) != 0) return nullptr;
  return static_cast<std::byte*>(p);
}

Status PluggedEngine::Submit(std::span<IoRequest> batch) {
  if (Status s = ValidateBatch(batch, device_pages_, opts_.writable, where_); !s.ok()) return s;
  if (batch.empty()) return Status::Ok();
  std::vector<DeviceRequest> reqs;
  PlugBatch(batch, next_id_, max_pages_, opts_.plug_merge, &reqs);
  if (bounce_) {
    for (DeviceRequest& r : reqs) {
      for (uint32_t i = 0; i < r.bufs.size(); ++i) {
        if (Aligned(r.bufs[i])) continue;
        std::byte* b = GetBouncePage();
        if (b == nullptr) {
          for (DeviceRequest& q : reqs)
            for (auto& [j, user] : q.bounced) {
              bounce_free_.push_back(q.bufs[j]);
              q.bufs[j] = user;
            }
          return Status(-ENOMEM, where_ + ": no memory for an O_DIRECT bounce page");
        }
        if (r.write) std::memcpy(b, r.bufs[i], kPageSize);
        r.bounced.emplace_back(i, r.bufs[i]);
        r.bufs[i] = b;
      }
    }
  }
  std::vector<uint32_t> pieces(batch.size(), 0);
  for (const DeviceRequest& r : reqs)
    for (const Piece& p : r.pieces) ++pieces[p.req - next_id_];
  tracker_.Add(batch, next_id_, pieces);
  next_id_ += batch.size();
  stats_.bios += batch.size();
  stats_.requests += reqs.size();
  for (DeviceRequest& r : reqs) queued_.push_back(std::move(r));
  Kick();
  return Status::Ok();
}

Status PluggedEngine::Wait(std::vector<IoCompletion>* done) { return Collect(Drive(), done); }

Status PluggedEngine::WaitAny(std::vector<IoCompletion>* done) {
  return Collect(DriveSome(), done);
}

// Kick starts what fits and collects what has finished, without blocking.
Status PluggedEngine::Poll(std::vector<IoCompletion>* done) {
  Kick();
  return Collect(Status::Ok(), done);
}

// The completions the tracker has, and what Wait / WaitAny returns for them.
Status PluggedEngine::Collect(Status driven, std::vector<IoCompletion>* done) {
  IoCompletion first_bad;
  const bool bad = tracker_.Drain(done, &stats_.errors, &first_bad);
  if (!driven.ok()) return driven;
  return WaitStatus(bad, first_bad, where_);
}

void PluggedEngine::Complete(DeviceRequest& r, uint32_t pages_done, int error) {
  for (auto& [i, user] : r.bounced) {
    if (!r.write && i < pages_done) std::memcpy(user, r.bufs[i], kPageSize);
    bounce_free_.push_back(r.bufs[i]);
    r.bufs[i] = user;
  }
  r.bounced.clear();
  (r.write ? stats_.pages_written : stats_.pages_read) += pages_done;
  uint32_t offset = 0;
  for (const Piece& p : r.pieces) {
    const uint32_t done = pages_done <= offset ? 0 : std::min(p.pages, pages_done - offset);
    tracker_.PieceDone(p, done, done < p.pages ? error : 0);
    offset += p.pages;
  }
}

Result<std::unique_ptr<FileTarget>> FileTarget::Open(const std::string& path,
                                                     const EngineOptions& o) {
  std::unique_ptr<FileTarget> t(new FileTarget);
  t->path_ = path;
  t->writable_ = o.writable;
  // The type first, before any open: a FIFO or a character device is never
  // opened (an open could block or have side effects); O_NONBLOCK covers a
  // path swapped between this check and the open, and fstat re-checks.
  if (Status s = CheckAreaPath(path); !s.ok()) return s;
  const int base = (o.writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  t->fd_ = -1;
  if (o.o_direct) {
    t->fd_ = ::open(path.c_str(), base | O_DIRECT);
    if (t->fd_ >= 0) {
      t->direct_ = true;
    } else if (errno == EINVAL) {
      std::fprintf(stderr, "swaplab: %s does not support O_DIRECT; using buffered I/O\n",
                   path.c_str());
    } else {
      return ErrnoStatus(errno, "open " + path);
    }
  }
  if (t->fd_ < 0) {
    t->fd_ = ::open(path.c_str(), base);
    if (t->fd_ < 0) return ErrnoStatus(errno, "open " + path);
  }
  struct stat st {};
  if (fstat(t->fd_, &st) != 0) return ErrnoStatus(errno, "fstat " + path);
  if (const int fl = fcntl(t->fd_, F_GETFL); fl >= 0) fcntl(t->fd_, F_SETFL, fl & ~O_NONBLOCK);
  uint64_t bytes = 0;
  if (S_ISBLK(st.st_mode)) {
    t->blkdev_ = true;
    if (ioctl(t->fd_, BLKGETSIZE64, &bytes) != 0)
      return ErrnoStatus(errno, "ioctl BLKGETSIZE64 " + path);
  } else if (S_ISREG(st.st_mode)) {
    bytes = static_cast<uint64_t>(st.st_size);
  } else {
    return Status(-EINVAL,
                  fmt::format("{}: is {}; a swap area must be a regular file or a block device",
                              path, FileTypeName(st.st_mode)));
  }
  t->pages_ = bytes / kPageSize;
  return t;
}

FileTarget::~FileTarget() {
  if (fd_ >= 0) ::close(fd_);
}

Status FileTarget::Discard(uint64_t page, uint64_t n) {
  if (n == 0) return Status::Ok();
  if (page >= pages_ || n > pages_ - page)
    return Status(-EINVAL, fmt::format("discard {}: pages [{}, {}) beyond the end ({} pages)",
                                       path_, page, page + n, pages_));
  if (!writable_) return Status(-EBADF, "discard " + path_ + ": opened read-only");
  const uint64_t off = page * kPageSize, len = n * kPageSize;
  if (blkdev_) {
    uint64_t range[2] = {off, len};
    if (ioctl(fd_, BLKDISCARD, &range) != 0)
      return ErrnoStatus(errno, fmt::format("BLKDISCARD {} pages [{}, {})", path_, page, page + n));
    return Status::Ok();
  }
  if (fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(off),
                static_cast<off_t>(len)) != 0)
    return ErrnoStatus(
        errno, fmt::format("fallocate(PUNCH_HOLE) {} pages [{}, {})", path_, page, page + n));
  return Status::Ok();
}

}  // namespace swaplab::area::io
