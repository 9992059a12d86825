// SPDX-License-Identifier: MIT
// The plug model and the request bookkeeping shared by the I/O engines
// (hibernation spec §6.1, §6.5). Not part of the contract.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "swaplab/alloc/types.h"
#include "swaplab/area/io_engine.h"

namespace swaplab::area::io {

using alloc::kPageSize;
// One readv/writev takes at most IOV_MAX (1024) iovecs.
inline constexpr uint32_t kIovMax = 1024;

// The part of one caller request (a bio) that one device request carries.
struct Piece {
  uint64_t req = 0;    // tracker id of the caller request
  uint32_t first = 0;  // first page, as an offset in the caller request
  uint32_t pages = 0;
};

// One device request after the plug: pages [page, page + bufs.size()), one
// buffer per page, pieces in page order covering them exactly.
struct DeviceRequest {
  bool write = false;
  uint64_t page = 0;
  std::vector<std::byte*> bufs;
  std::vector<Piece> pieces;
  // (index in bufs, caller's buffer) of pages bounced for O_DIRECT.
  std::vector<std::pair<uint32_t, std::byte*>> bounced;
};

// Pages one device request may carry on an engine: the device's
// MaxPagesPerRequest(), at most IOV_MAX.
uint32_t EnginePagesPerRequest(const DeviceLimits& l);

// Turns one Submit batch into device requests, appended to `out`; batch[i]
// gets tracker id first_id + i. A caller request longer than max_pages is
// cut into max_pages pieces (the block layer's split to the queue limits);
// with `merge`, each piece is appended to the last device request of this
// batch when it continues it on disk, goes the same direction and the sum
// fits max_pages (a back merge into the last plugged request). Merging never
// crosses batches: the plug is flushed at the end of every Submit.
// Models blk_start_plug() / blk_attempt_plug_merge() / bio_split_to_limits()
// (block/), not their code.
void PlugBatch(std::span<const IoRequest> batch, uint64_t first_id, uint32_t max_pages, bool merge,
               std::vector<DeviceRequest>* out);

// Checks a batch before anything is queued: no empty request, no null
// buffer, pages inside [0, device_pages) (0: unbounded), no write on a
// read-only engine. −EINVAL / −EBADF naming the request (index, tag, pages).
Status ValidateBatch(std::span<const IoRequest> batch, uint64_t device_pages, bool writable,
                     const std::string& where);

// Caller requests in flight: collects the outcome of each piece and emits
// one completion per request once all its pieces are done.
// Invariant: every id in pending_ has pieces_left > 0; an id leaves
// pending_ exactly when its completion is appended to ready_.
class CompletionTracker {
 public:
  // Registers batch[i] under id first_id + i with pieces[i] pieces.
  void Add(std::span<const IoRequest> batch, uint64_t first_id,
           const std::vector<uint32_t>& pieces);
  // `pages_done` pages of the piece from its start completed; the rest
  // failed with `error` (0 only for a short completion).
  void PieceDone(const Piece& p, uint32_t pages_done, int error);
  // Appends the finished completions in the order they finished; counts
  // those not done whole (error or short) in *errors and returns whether
  // there was one, the one failing at the lowest page in *first_bad.
  bool Drain(std::vector<IoCompletion>* done, uint64_t* errors, IoCompletion* first_bad);
  size_t pending() const { return pending_.size(); }
  size_t ready() const { return ready_.size(); }  // finished, not yet drained

 private:
  struct Pending {
    uint64_t tag, page;
    uint32_t pages, pieces_left;
    uint32_t first_bad;  // offset of the first page not done; == pages if none
    int error;
  };
  std::unordered_map<uint64_t, Pending> pending_;
  std::vector<IoCompletion> ready_;
  std::vector<bool> ready_whole_;  // parallel to ready_
};

// What Wait returns (hib_wait_io's "first error"): OK, or of the
// completions not done whole the one failing at the lowest page (completion
// order varies between runs; page order does not): its error, or −EIO for a
// short completion, with a message naming the tag and the page.
Status WaitStatus(bool any_bad, const IoCompletion& first_bad, const std::string& where);

}  // namespace swaplab::area::io
