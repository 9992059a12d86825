// SPDX-License-Identifier: MIT
// The plug model (hibernation spec §6.1 "The plug and merging", §6.5) and the
// bookkeeping that turns device-request outcomes back into one completion
// per caller request.
#include "area/io/plug.h"

#include <fmt/core.h>

#include <algorithm>

namespace swaplab::area::io {

uint32_t EnginePagesPerRequest(const DeviceLimits& l) {
  return std::min(l.MaxPagesPerRequest(), kIovMax);
}

void PlugBatch(std::span<const IoRequest> batch, uint64_t first_id, uint32_t max_pages, bool merge,
               std::vector<DeviceRequest>* out) {
  max_pages = std::max<uint32_t>(max_pages, 1);
  const size_t batch_start = out->size();  // the plug holds this batch only
  for (size_t i = 0; i < batch.size(); ++i) {
    const IoRequest& r = batch[i];
    const uint32_t n = static_cast<uint32_t>(r.bufs.size());
    for (uint32_t first = 0; first < n;) {
      const uint32_t len = std::min(max_pages, n - first);
      const uint64_t page = r.page + first;
      DeviceRequest* last = out->size() > batch_start ? &out->back() : nullptr;
      const bool back_merge = merge && last != nullptr && last->write == r.write &&
                              last->page + last->bufs.size() == page &&
                              last->bufs.size() + len <= max_pages;
      if (!back_merge) {
        out->emplace_back();
        last = &out->back();
        last->write = r.write;
        last->page = page;
        last->bufs.reserve(len);
      }
      last->bufs.insert(last->bufs.end(), r.bufs.begin() + first, r.bufs.begin() + first + len);
      last->pieces.push_back(Piece{first_id + i, first, len});
      first += len;
    }
  }
}

Status ValidateBatch(std::span<const IoRequest> batch, uint64_t device_pages, bool writable,
                     const std::string& where) {
  for (size_t i = 0; i < batch.size(); ++i) {
    const IoRequest& r = batch[i];
    const auto what = [&] {
      return fmt::format("{}: request {} (tag {}, pages [{}, {}))", where, i, r.tag, r.page,
                         r.page + r.bufs.size());
    };
    if (r.bufs.empty()) return Status(-EINVAL, what() + " has no pages");
    if (r.bufs.size() > UINT32_MAX) return Status(-EINVAL, what() + " is too long");
    if (std::find(r.bufs.begin(), r.bufs.end(), nullptr) != r.bufs.end())
      return Status(-EINVAL, what() + " has a null page buffer");
    if (device_pages != 0 && (r.page >= device_pages || r.bufs.size() > device_pages - r.page))
      return Status(-EINVAL,
                    fmt::format("{} ends beyond the device ({} pages)", what(), device_pages));
    if (r.write && !writable) return Status(-EBADF, what() + " is a write on a read-only engine");
  }
  return Status::Ok();
}

void CompletionTracker::Add(std::span<const IoRequest> batch, uint64_t first_id,
                            const std::vector<uint32_t>& pieces) {
  for (size_t i = 0; i < batch.size(); ++i) {
    const uint32_t n = static_cast<uint32_t>(batch[i].bufs.size());
    pending_.emplace(first_id + i, Pending{batch[i].tag, batch[i].page, n, pieces[i], n, 0});
  }
}

void CompletionTracker::PieceDone(const Piece& p, uint32_t pages_done, int error) {
  auto it = pending_.find(p.req);
  if (it == pending_.end()) return;  // cannot happen: each piece completes once
  Pending& r = it->second;
  if (pages_done < p.pages && p.first + pages_done < r.first_bad) {
    r.first_bad = p.first + pages_done;
    r.error = error;
  }
  if (--r.pieces_left > 0) return;
  IoCompletion c;
  c.tag = r.tag;
  c.pages_done = r.first_bad;
  if (r.first_bad < r.pages) {
    c.error = r.error;
    c.failed_page = r.page + r.first_bad;
  }
  ready_.push_back(c);
  ready_whole_.push_back(r.first_bad == r.pages);
  pending_.erase(it);
}

bool CompletionTracker::Drain(std::vector<IoCompletion>* done, uint64_t* errors,
                              IoCompletion* first_bad) {
  bool any = false;
  for (size_t i = 0; i < ready_.size(); ++i) {
    if (!ready_whole_[i]) {
      ++*errors;
      if (!any || ready_[i].failed_page < first_bad->failed_page) *first_bad = ready_[i];
      any = true;
    }
  }
  done->insert(done->end(), ready_.begin(), ready_.end());
  ready_.clear();
  ready_whole_.clear();
  return any;
}

Status WaitStatus(bool any_bad, const IoCompletion& c, const std::string& where) {
  if (!any_bad) return Status::Ok();
  if (c.error != 0)
    return Status(c.error, fmt::format("{}: request tag {} failed at page {} ({} pages done)",
                                       where, c.tag, c.failed_page, c.pages_done));
  return Status(-EIO, fmt::format("{}: request tag {} completed short at page {} ({} pages done)",
                                  where, c.tag, c.failed_page, c.pages_done));
}

}  // namespace swaplab::area::io
