// The io_uring engine: one SQE per device request (READ/WRITE for one page,
// READV/WRITEV with an iovec per page for a merged request), at most
// queue_depth in flight, O_DIRECT with bounce pages for unaligned callers.
// Falls back to the POSIX engine where io_uring is unavailable.
#include <fmt/core.h>
#include <liburing.h>
#include <sys/uio.h>

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

  Status Drive() override {
    while (!queued_.empty() || in_flight_ > 0) {
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

 private:
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
    for (size_t i = 0; i < s.req.bufs.size(); ++i) s.iov[i] = iovec{s.req.bufs[i], kPage};
    // Skip whole iovecs already done; trim a partly done one.
    uint64_t skip = s.bytes_done;
    size_t k = 0;
    while (skip >= s.iov[k].iov_len) skip -= s.iov[k++].iov_len;
    std::vector<iovec>& v = s.iov;
    v[k].iov_base = static_cast<std::byte*>(v[k].iov_base) + skip;
    v[k].iov_len -= skip;
    const uint64_t off = s.req.page * kPage + s.bytes_done;
    const unsigned n = static_cast<unsigned>(v.size() - k);
    if (n == 1) {
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
    const uint64_t total = s.req.bufs.size() * kPage;
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
    const uint32_t pages = static_cast<uint32_t>(s.bytes_done / kPage);
    Complete(s.req, pages, s.bytes_done >= total ? 0 : error);
    s.req = DeviceRequest{};
    s.busy = false;
    free_.push_back(idx);
    --in_flight_;
  }

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
  const char* off = std::getenv("SWAPLAB_NO_IO_URING");
  if (off != nullptr && *off != '\0' && std::strcmp(off, "0") != 0) {
    std::fprintf(stderr,
                 "swaplab: io_uring disabled by SWAPLAB_NO_IO_URING; using pread/pwrite for %s\n",
                 path.c_str());
    return OpenPosixEngine(path, o);
  }
  auto file = io::FileTarget::Open(path, o);
  if (!file.ok()) return file.status();
  auto engine = std::make_unique<io::UringEngine>(std::move(file).value(), o);
  if (const int r = engine->Init(); r < 0) {
    std::fprintf(
        stderr,
        "swaplab: io_uring unavailable (io_uring_queue_init: %s); using pread/pwrite for %s\n",
        std::strerror(-r), path.c_str());
    return OpenPosixEngine(path, o);
  }
  return std::unique_ptr<IoEngine>(std::move(engine));
}

}  // namespace swaplab::area
