// SPDX-License-Identifier: MIT
// In-memory IoEngine with fault injection, and a fresh swap system, for the
// hibernate tests (conventions: every failure point without a disk).
#pragma once

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "swaplab/alloc/swap_system.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/hibernate/image_format.h"

namespace swaplab::hibernate::testing {

struct LoggedRequest {
  bool write;
  uint64_t page;
  uint32_t pages;
};

// A map page -> bytes (or a caller's buffer read in place). Requests run at Wait, in submission
// order; the request with index fail_request (over all submitted) fails with `error` and is not
// performed.
class MemEngine : public area::IoEngine {
 public:
  explicit MemEngine(uint64_t pages, area::DeviceLimits l = {}) : pages_(pages), limits_(l) {}
  std::string name() const override { return "mem"; }
  Status Submit(std::span<area::IoRequest> batch) override {
    for (const auto& r : batch)
      if (r.bufs.empty() || r.page + r.bufs.size() > pages_)
        return Status(-EINVAL,
                      "mem engine: request at page " + std::to_string(r.page) + " out of range");
    for (const auto& r : batch) {
      pending_.push_back(r);
      log_.push_back({r.write, r.page, static_cast<uint32_t>(r.bufs.size())});
      ++stats_.bios;
    }
    return Status::Ok();
  }
  Status Wait(std::vector<area::IoCompletion>* done) override {
    Status first;
    // plug merging: adjacent, same direction, up to the device limit
    const uint32_t maxp =
        std::max<uint32_t>(1, std::min(limits_.max_sectors_kb / 4, limits_.max_segments));
    uint64_t end = 0;
    uint32_t run = 0;
    bool dir = false;
    for (size_t i = 0; i < pending_.size(); ++i) {
      const auto& r = pending_[i];
      const uint32_t n = static_cast<uint32_t>(r.bufs.size());
      if (i > 0 && r.write == dir && r.page == end && run + n <= maxp) {
        run += n;
      } else {
        ++stats_.requests;
        run = n;
      }
      dir = r.write;
      end = r.page + n;
      area::IoCompletion c;
      c.tag = r.tag;
      if (submitted_ >= crash_after) {  // the machine stopped: never reaches the disk
        ++submitted_;
        c.pages_done = n;
      } else if (submitted_++ == fail_request) {
        c.error = error;
        c.failed_page = r.page;
        ++stats_.errors;
        if (first.ok())
          first = Status(error, "mem engine: injected failure at page " + std::to_string(r.page));
      } else {
        for (uint32_t k = 0; k < n; ++k) {
          if (r.write && r.page + k >= keep_pages) {
            ++stats_.pages_written;  // counted, not kept
          } else if (r.write) {
            std::memcpy(data_[r.page + k].data(), r.bufs[k], kPageSize);
            ++stats_.pages_written;
          } else {
            auto it = data_.find(r.page + k);
            if (it == data_.end())
              ReadBacking(r.page + k, r.bufs[k]);
            else
              std::memcpy(r.bufs[k], it->second.data(), kPageSize);
            ++stats_.pages_read;
          }
        }
        c.pages_done = n;
      }
      done->push_back(c);
    }
    pending_.clear();
    return first;
  }
  Status Discard(uint64_t page, uint64_t n) override {
    for (uint64_t p = page; p < page + n; ++p) data_.erase(p);
    return Status::Ok();
  }
  area::IoStats stats() const override { return stats_; }
  const area::DeviceLimits& limits() const override { return limits_; }

  uint64_t fail_request = UINT64_MAX;
  int error = -EIO;
  // Requests from this index on are reported done but never performed: the
  // disk as a SIGKILL or power cut after `crash_after` requests leaves it.
  uint64_t crash_after = UINT64_MAX;
  uint64_t keep_pages = UINT64_MAX;  // writes at or above this page are dropped (scale tests)
  std::map<uint64_t, Page> data_;
  // Pages not in data_ are read from here, in place (the fuzzer's input:
  // no copy of it per run), the last one zero-padded; past its end, zeros.
  std::span<const std::byte> backing;
  std::vector<LoggedRequest> log_;
  uint64_t submitted() const { return submitted_; }

 private:
  void ReadBacking(uint64_t page, std::byte* out) const {
    const uint64_t at = page * kPageSize;
    const size_t n = at < backing.size() ? std::min<size_t>(kPageSize, backing.size() - at) : 0;
    if (n > 0) std::memcpy(out, backing.data() + at, n);
    std::memset(out + n, 0, kPageSize - n);
  }
  uint64_t pages_;
  area::DeviceLimits limits_;
  std::vector<area::IoRequest> pending_;
  uint64_t submitted_ = 0;
  area::IoStats stats_;
};

// Page 0 of a v1 swap area of `pages` pages (the fields swaplab reads).
inline void FormatArea(MemEngine& e, uint64_t pages) {
  Page& p = e.data_[0];
  p.fill(std::byte{0});
  StoreU32(p.data() + 1024, 1);
  StoreU32(p.data() + 1028, static_cast<uint32_t>(pages - 1));
  std::memcpy(p.data() + kHdrSig, kSwapSpace2Sig.data(), 10);
}

struct Rig {
  std::unique_ptr<alloc::SwapSystem> sys;
  std::unique_ptr<MemEngine> engine;
  int type = -1;
  uint64_t pages = 0;
};

inline Rig MakeRig(uint64_t pages, uint64_t reserve_pages = 0, area::DeviceLimits l = {},
                   alloc::SystemOptions so = {}) {
  Rig r;
  r.sys = std::make_unique<alloc::SwapSystem>(so);
  alloc::SwaponOptions o;
  o.name = "img";
  o.pages = pages;
  o.bdev = 1;
  o.hibernation_reserve_pages = reserve_pages;
  auto t = r.sys->Swapon(o);
  r.type = t.ok() ? *t : -1;
  r.engine = std::make_unique<MemEngine>(pages, l);
  FormatArea(*r.engine, pages);
  r.pages = pages;
  return r;
}

inline uint64_t Inuse(const Rig& r) { return r.sys->Device(r.type)->inuse; }

}  // namespace swaplab::hibernate::testing
