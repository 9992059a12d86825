// SPDX-License-Identifier: MIT
// The simulated device: stores nothing, per-page checksums, or whole pages,
// and charges modelled time (docs/performance.md, "I/O engines and the
// simulated device's calibration"):
//
//   a request occupies one of queue_depth queue slots from its start to its
//   end, and the device's single channel for
//       service = request_serial_us + bytes / bandwidth [+ seek]
//   after a latency of request_overhead_us that overlaps with other
//   requests: start = max(now, a slot frees), channel start = max(start +
//   overhead, channel free), end = channel start + service.
//   seek (rotational only) = seek_ms_per_gib × |head − request start| in GiB.
//
// So depth 1 costs overhead + service per request, and deep queues reach
// min(depth / (overhead + service), 1 / service) requests per second.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <queue>
#include <unordered_map>

#include "area/io/engine_base.h"

namespace swaplab::area {

uint64_t SimPageChecksum(const std::byte* page) {
  // 64-bit multiply-xorshift over 8-byte words: fast, not cryptographic.
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (size_t i = 0; i < io::kPageSize; i += 8) {
    uint64_t w;
    std::memcpy(&w, page + i, 8);
    h ^= w + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
  }
  return h == 0 ? 1 : h;  // 0 marks "never written"
}

namespace io {
namespace {

class SimEngine final : public PluggedEngine {
 public:
  SimEngine(SimModel m, EngineOptions o)
      : PluggedEngine("simulated", "simulated device", o, m.pages, /*bounce=*/false), m_(m) {
    depth_ = std::max(1u, std::min(m.queue_depth, o.queue_depth));
    // A flat array up to 64 GiB of device (8 B a page), a map beyond.
    if (m_.store_checksums && !m_.store_data && m_.pages != 0 && m_.pages <= (1ULL << 24))
      sums_.assign(m_.pages, 0);
  }

  bool modelled() const override { return true; }
  std::string description() const override { return name(); }  // no file under it

  Status Discard(uint64_t page, uint64_t n) override {
    if (n == 0) return Status::Ok();
    if (m_.pages != 0 && (page >= m_.pages || n > m_.pages - page))
      return Status(-EINVAL, fmt::format("simulated device: discard pages [{}, {}) beyond the "
                                         "end ({} pages)",
                                         page, page + n, m_.pages));
    if (!limits().discard)
      return Status(-EOPNOTSUPP,
                    "simulated device: discard not supported (limits.discard = false)");
    for (uint64_t p = page; p < page + n; ++p) Forget(p);
    // A discard costs one request's overhead and channel time, no transfer.
    const double start = std::max(now_ns_, channel_free_ns_);
    channel_free_ns_ = start + (m_.request_overhead_us + m_.request_serial_us) * 1e3;
    now_ns_ = std::max(now_ns_, channel_free_ns_);
    stats_.modelled_ns = static_cast<uint64_t>(std::llround(now_ns_));
    return Status::Ok();
  }

 protected:
  Status Drive() override {
    // Min-heap of the times queue slots free up.
    std::priority_queue<double, std::vector<double>, std::greater<>> slots;
    for (unsigned i = 0; i < depth_; ++i) slots.push(now_ns_);
    double end_all = now_ns_;
    while (!queued_.empty()) {
      DeviceRequest r = std::move(queued_.front());
      queued_.pop_front();
      const double start = slots.top();
      slots.pop();
      const double bytes = static_cast<double>(r.bufs.size() * kPageSize);
      const double mib_s = r.write ? m_.write_mib_s : m_.read_mib_s;
      double service = m_.request_serial_us * 1e3 + bytes / (mib_s * 1048576.0) * 1e9;
      if (m_.rotational) {
        const double pos = static_cast<double>(r.page * kPageSize);
        service += m_.seek_ms_per_gib * 1e6 * std::fabs(head_ - pos) / 1073741824.0;
        head_ = pos + bytes;
      }
      const double ch = std::max(start + m_.request_overhead_us * 1e3, channel_free_ns_);
      const double end = ch + service;
      channel_free_ns_ = end;
      slots.push(end);
      end_all = std::max(end_all, end);
      Transfer(r);
      Complete(r, static_cast<uint32_t>(r.bufs.size()), 0);
    }
    now_ns_ = end_all;
    stats_.modelled_ns = static_cast<uint64_t>(std::llround(now_ns_));
    return Status::Ok();
  }

 private:
  void Transfer(const DeviceRequest& r) {
    for (size_t i = 0; i < r.bufs.size(); ++i) {
      const uint64_t page = r.page + i;
      std::byte* buf = r.bufs[i];
      if (r.write) {
        if (m_.store_data) {
          auto& d = data_[page];
          if (!d) d = std::make_unique<std::byte[]>(kPageSize);
          std::memcpy(d.get(), buf, kPageSize);
        } else if (m_.store_checksums) {
          if (!sums_.empty())
            sums_[page] = SimPageChecksum(buf);
          else
            sum_map_[page] = SimPageChecksum(buf);
        }
        continue;
      }
      std::memset(buf, 0, kPageSize);
      if (m_.store_data) {
        if (auto it = data_.find(page); it != data_.end())
          std::memcpy(buf, it->second.get(), kPageSize);
      } else if (m_.store_checksums) {
        uint64_t sum = 0;
        if (!sums_.empty()) {
          sum = sums_[page];
        } else if (auto it = sum_map_.find(page); it != sum_map_.end()) {
          sum = it->second;
        }
        if (sum != 0) {
          const uint64_t rec[3] = {kSimChecksumPageMagic, page, sum};
          std::memcpy(buf, rec, sizeof rec);
        }
      }
    }
  }

  void Forget(uint64_t page) {
    if (!sums_.empty()) sums_[page] = 0;
    sum_map_.erase(page);
    data_.erase(page);
  }

  SimModel m_;
  unsigned depth_;
  double now_ns_ = 0, channel_free_ns_ = 0, head_ = 0;
  std::vector<uint64_t> sums_;                      // pages known: 0 = not written
  std::unordered_map<uint64_t, uint64_t> sum_map_;  // when sums_ is not used
  std::unordered_map<uint64_t, std::unique_ptr<std::byte[]>> data_;
};

}  // namespace
}  // namespace io

std::unique_ptr<IoEngine> MakeSimulatedEngine(SimModel m, EngineOptions o) {
  return std::make_unique<io::SimEngine>(m, o);
}

}  // namespace swaplab::area
