// SPDX-License-Identifier: MIT
// The io_uring engine: one SQE per device request (READ/WRITE for one page,
// READV/WRITEV with an iovec per page for a merged request), at most
// queue_depth in flight, O_DIRECT with bounce pages for unaligned callers.
// Falls back to the POSIX engine where io_uring is unavailable.
#include <fmt/core.h>
#include <liburing.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "area/io/engine_base.h"

namespace swaplab::area {
namespace io {
namespace {

// A device request in flight, with the iovecs its SQE points at.
struct Slot {
  DeviceRequest req;
  std::vector<iovec> iov;
  uint64_t bytes_done = 0;
  bool busy = false;
};

class UringEngine final : public PluggedEngine {
 public:
  UringEngine(std::unique_ptr<FileTarget> file, EngineOptions o)
      : PluggedEngine("io_uring", "io_uring " + file->path(), o, file->pages(), file->direct()),
        file_(std::move(file)),
        slots_(o.queue_depth) {
    for (unsigned i = 0; i < o.queue_depth; ++i) free_.push_back(o.queue_depth - 1 - i);
  }
  ~UringEngine() override {
    if (!ring_ok_) return;
    if (in_flight_ > 0) (void)Reap(/*wait=*/true, /*drain=*/true);
    io_uring_queue_exit(&ring_);
  }
  // 0 or −errno from io_uring_queue_init.
  int Init() {
    const int r = io_uring_queue_init(static_cast<unsigned>(slots_.size()), &ring_, 0);
    ring_ok_ = r == 0;
    return r;
  }

  Status Discard(uint64_t page, uint64_t n) override { return file_->Discard(page, n); }

  // io_uring_register_buffers in chunks of at most 1 GiB (the kernel's
  // limit per registered buffer).
  bool RegisterBuffer(std::byte* base, size_t bytes) override {
    UnregisterBuffer();
    if (!ring_ok_ || base == nullptr || bytes == 0 || bytes % kPageSize != 0 ||
        reinterpret_cast<uintptr_t>(base) % kPageSize != 0)
      return false;
    std::vector<iovec> iov;
    for (size_t off = 0; off < bytes; off += kFixedChunk)
      iov.push_back(iovec{base + off, std::min(kFixedChunk, bytes - off)});
    if (io_uring_register_buffers(&ring_, iov.data(), static_cast<unsigned>(iov.size())) != 0)
      return false;
    fixed_base_ = base;
    fixed_bytes_ = bytes;
    return true;
  }
  void UnregisterBuffer() override {
    if (fixed_base_ == nullptr) return;
    if (in_flight_ > 0) (void)Reap(/*wait=*/true, /*drain=*/true);
    (void)io_uring_unregister_buffers(&ring_);
    fixed_base_ = nullptr;
    fixed_bytes_ = 0;
  }

 protected:
  void Kick() override {
    // Start what fits; collect what already finished without blocking.
    Fill();
    if (pending_sqes_ > 0) {
      const int r = io_uring_submit(&ring_);
      if (r >= 0) pending_sqes_ = 0;
    }
    (void)Reap(false, false);
  }

  Status Drive() override { return Run(/*all=*/true); }
  Status DriveSome() override { return Run(/*all=*/false); }

 private:
  // Submits and reaps until nothing is queued or in flight, or (!all) until
  // a caller request is complete.
  Status Run(bool all) {
    while ((!queued_.empty() || in_flight_ > 0) && (all || !AnyComplete())) {
      Fill();
      int r;
      do {
        r = io_uring_submit_and_wait(&ring_, in_flight_ > 0 ? 1 : 0);
      } while (r == -EINTR);
      if (r < 0)
        return Status(r,
                      fmt::format("{}: io_uring_submit_and_wait: {}", where(), std::strerror(-r)));
      pending_sqes_ = 0;
      if (Status s = Reap(false, false); !s.ok()) return s;
    }
    return Status::Ok();
  }

  // Prepares SQEs for queued requests while a slot and an SQE are free.
  void Fill() {
    while (!queued_.empty() && !free_.empty()) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      if (sqe == nullptr) break;
      const unsigned idx = free_.back();
      free_.pop_back();
      Slot& s = slots_[idx];
      s.req = std::move(queued_.front());
      queued_.pop_front();
      s.bytes_done = 0;
      s.busy = true;
      Prep(sqe, idx);
      ++in_flight_;
      ++pending_sqes_;
    }
  }

  // Fills `sqe` for what remains of slot idx.
  void Prep(io_uring_sqe* sqe, unsigned idx) {
    Slot& s = slots_[idx];
    s.iov.resize(s.req.bufs.size());
    for (size_t i = 0; i < s.req.bufs.size(); ++i) s.iov[i] = iovec{s.req.bufs[i], kPageSize};
    // Skip whole iovecs already done; trim a partly done one.
    uint64_t skip = s.bytes_done;
    size_t k = 0;
    while (skip >= s.iov[k].iov_len) skip -= s.iov[k++].iov_len;
    std::vector<iovec>& v = s.iov;
    v[k].iov_base = static_cast<std::byte*>(v[k].iov_base) + skip;
    v[k].iov_len -= skip;
    const uint64_t off = s.req.page * kPageSize + s.bytes_done;
    const unsigned n = static_cast<unsigned>(v.size() - k);
    if (const int bi = FixedIndex(v, k); bi >= 0) {  // one contiguous registered stretch
      auto* addr = v[k].iov_base;
      const auto len = static_cast<unsigned>(s.req.bufs.size() * kPageSize - s.bytes_done);
      ++stats_.fixed_requests;
      if (s.req.write)
        io_uring_prep_write_fixed(sqe, file_->fd(), addr, len, off, bi);
      else
        io_uring_prep_read_fixed(sqe, file_->fd(), addr, len, off, bi);
    } else if (n == 1) {
      if (s.req.write)
        io_uring_prep_write(sqe, file_->fd(), v[k].iov_base, static_cast<unsigned>(v[k].iov_len),
                            off);
      else
        io_uring_prep_read(sqe, file_->fd(), v[k].iov_base, static_cast<unsigned>(v[k].iov_len),
                           off);
    } else if (s.req.write) {
      io_uring_prep_writev(sqe, file_->fd(), &v[k], n, off);
    } else {
      io_uring_prep_readv(sqe, file_->fd(), &v[k], n, off);
    }
    io_uring_sqe_set_data64(sqe, idx);
  }

  // The registered buffer index holding iovecs k… as one contiguous
  // stretch inside one chunk, or −1.
  int FixedIndex(const std::vector<iovec>& v, size_t k) const {
    if (fixed_base_ == nullptr) return -1;
    const auto* first = static_cast<const std::byte*>(v[k].iov_base);
    if (first < fixed_base_) return -1;
    const size_t start = static_cast<size_t>(first - fixed_base_);
    const std::byte* expect = first;
    size_t len = 0;
    for (size_t i = k; i < v.size(); ++i) {
      if (static_cast<const std::byte*>(v[i].iov_base) != expect) return -1;
      expect += v[i].iov_len;
      len += v[i].iov_len;
    }
    if (start + len > fixed_bytes_ || start / kFixedChunk != (start + len - 1) / kFixedChunk)
      return -1;
    return static_cast<int>(start / kFixedChunk);
  }

  // Handles every CQE that is ready (waits for one first if `wait`). With
  // `drain`, loops until nothing is in flight (the destructor).
  Status Reap(bool wait, bool drain) {
    do {
      io_uring_cqe* cqe = nullptr;
      int r = wait ? io_uring_wait_cqe(&ring_, &cqe) : io_uring_peek_cqe(&ring_, &cqe);
      if (r == -EINTR) continue;
      if (r == -EAGAIN || cqe == nullptr) {
        if (!drain) return Status::Ok();
        continue;
      }
      if (r < 0)
        return Status(r, fmt::format("{}: io_uring_wait_cqe: {}", where(), std::strerror(-r)));
      unsigned head;
      unsigned seen = 0;
      std::vector<std::pair<unsigned, int>> results;
      io_uring_for_each_cqe(&ring_, head, cqe) {
        results.emplace_back(static_cast<unsigned>(io_uring_cqe_get_data64(cqe)), cqe->res);
        ++seen;
      }
      io_uring_cq_advance(&ring_, seen);
      for (auto [idx, res] : results) Settle(idx, res);
      wait = drain;
      if (pending_sqes_ > 0) {
        if (io_uring_submit(&ring_) >= 0) pending_sqes_ = 0;
      }
    } while (drain && in_flight_ > 0);
    return Status::Ok();
  }

  // One CQE for slot idx: resubmit on EAGAIN / EINTR or a short transfer,
  // otherwise complete the request.
  void Settle(unsigned idx, int res) {
    Slot& s = slots_[idx];
    const uint64_t total = s.req.bufs.size() * kPageSize;
    if (res == -EAGAIN || res == -EINTR || (res > 0 && s.bytes_done + res < total)) {
      if (res > 0) s.bytes_done += static_cast<uint64_t>(res);
      if (io_uring_sqe* sqe = io_uring_get_sqe(&ring_)) {
        Prep(sqe, idx);
        ++pending_sqes_;
        return;
      }
      res = -EAGAIN;  // no SQE to retry with: cannot happen with depth slots
    }
    int error = 0;
    if (res > 0) {
      s.bytes_done += static_cast<uint64_t>(res);
    } else if (res == 0) {
      error = -EIO;  // end of file: nothing more can be transferred
    } else {
      error = res;
    }
    const uint32_t pages = static_cast<uint32_t>(s.bytes_done / kPageSize);
    Complete(s.req, pages, s.bytes_done >= total ? 0 : error);
    s.req = DeviceRequest{};
    s.busy = false;
    free_.push_back(idx);
    --in_flight_;
  }

  static constexpr size_t kFixedChunk = size_t{1} << 30;
  std::byte* fixed_base_ = nullptr;  // registered buffer (RegisterBuffer)
  size_t fixed_bytes_ = 0;
  std::unique_ptr<FileTarget> file_;
  io_uring ring_{};
  bool ring_ok_ = false;
  std::vector<Slot> slots_;
  std::vector<unsigned> free_;
  unsigned in_flight_ = 0;
  unsigned pending_sqes_ = 0;
};

}  // namespace
}  // namespace io

Result<std::unique_ptr<IoEngine>> OpenUringEngine(const std::string& path, EngineOptions o) {
  if (o.queue_depth == 0 || o.queue_depth > 4096)
    return Status(-EINVAL,
                  fmt::format("io_uring {}: queue depth {} not in [1, 4096]", path, o.queue_depth));
  // The test seam: the environment makes io_uring_setup "fail" as a kernel
  // without io_uring does, so the callers' fallback runs on any machine.
  if (const char* off = std::getenv("SWAPLAB_NO_IO_URING");
      off != nullptr && *off != '\0' && std::strcmp(off, "0") != 0)
    return Status(-ENOSYS, "io_uring disabled by SWAPLAB_NO_IO_URING");
  auto file = io::FileTarget::Open(path, o);
  if (!file.ok()) return file.status();
  auto engine = std::make_unique<io::UringEngine>(std::move(file).value(), o);
  if (const int r = engine->Init(); r < 0)
    return Status(r, fmt::format("io_uring_queue_init for {}: {}", path, std::strerror(-r)));
  return std::unique_ptr<IoEngine>(std::move(engine));
}

}  // namespace swaplab::area
