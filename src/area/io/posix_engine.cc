// SPDX-License-Identifier: MIT
// The POSIX engine: preadv / pwritev, one call per device request (an iovec
// per page), issued in order from Wait (the plug is flushed when the task
// sleeps); queue depth 1. Short transfers and EINTR are retried.
#include <fmt/core.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include "area/io/engine_base.h"

namespace swaplab::area {
namespace io {
namespace {

class PosixEngine final : public PluggedEngine {
 public:
  PosixEngine(std::unique_ptr<FileTarget> file, EngineOptions o)
      : PluggedEngine("posix", "pread/pwrite " + file->path(), o, file->pages(), file->direct()),
        file_(std::move(file)) {}

  Status Discard(uint64_t page, uint64_t n) override { return file_->Discard(page, n); }

 protected:
  Status Drive() override {
    std::vector<iovec> iov;
    while (!queued_.empty()) {
      DeviceRequest r = std::move(queued_.front());
      queued_.pop_front();
      const uint64_t total = r.bufs.size() * kPageSize;
      uint64_t done = 0;
      int error = 0;
      while (done < total) {
        // Rebuild the iovecs for what remains.
        iov.clear();
        for (size_t i = done / kPageSize; i < r.bufs.size(); ++i)
          iov.push_back(iovec{r.bufs[i], kPageSize});
        const uint64_t skip = done % kPageSize;
        iov[0].iov_base = static_cast<std::byte*>(iov[0].iov_base) + skip;
        iov[0].iov_len -= skip;
        const off_t off = static_cast<off_t>(r.page * kPageSize + done);
        const int cnt = static_cast<int>(iov.size());
        const ssize_t n = r.write ? pwritev(file_->fd(), iov.data(), cnt, off)
                                  : preadv(file_->fd(), iov.data(), cnt, off);
        if (n < 0) {
          if (errno == EINTR || errno == EAGAIN) continue;
          error = -errno;
          break;
        }
        if (n == 0) {  // end of file
          error = -EIO;
          break;
        }
        done += static_cast<uint64_t>(n);
      }
      Complete(r, static_cast<uint32_t>(done / kPageSize), error);
    }
    return Status::Ok();
  }

 private:
  std::unique_ptr<FileTarget> file_;
};

}  // namespace
}  // namespace io

Result<std::unique_ptr<IoEngine>> OpenPosixEngine(const std::string& path, EngineOptions o) {
  auto file = io::FileTarget::Open(path, o);
  if (!file.ok()) return file.status();
  return std::unique_ptr<IoEngine>(new io::PosixEngine(std::move(file).value(), o));
}

}  // namespace swaplab::area
