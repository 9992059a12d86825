// SPDX-License-Identifier: MIT
// The hibernation image step (image_step.h).
#include "swaplab/workload/image_step.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "swaplab/area/swap_header.h"
#include "swaplab/hibernate/image_reader.h"
#include "swaplab/hibernate/image_writer.h"
#include "swaplab/hibernate/snapshot.h"

namespace swaplab::workload {

namespace {

// The simulated device keeps a checksum per page, not the data. This
// wrapper makes it readable for resume: page 0 (the swap header) is kept
// whole; after a write, SetLayout tells it which stream page or map page
// each dblock holds, and a read of such a page is answered with that page
// regenerated from the snapshot, but only if its checksum equals the one
// the device kept for what was written (so the read-back still proves the
// write). All requests reach the simulated device: modelled time is its.
class SnapshotBackedEngine final : public area::IoEngine {
 public:
  SnapshotBackedEngine(std::unique_ptr<area::IoEngine> inner, bool structural)
      : inner_(std::move(inner)), structural_(structural) {}
  bool structural() const { return structural_; }
  std::string name() const override { return inner_->name(); }
  bool modelled() const override { return inner_->modelled(); }
  Status Submit(std::span<area::IoRequest> batch) override {
    Status st = inner_->Submit(batch);
    if (!st.ok()) return st;
    for (const auto& r : batch) {
      for (size_t k = 0; k < r.bufs.size(); ++k) {
        const uint64_t page = r.page + k;
        if (r.write && page == 0) std::memcpy(header_.data(), r.bufs[k], header_.size());
        if (!r.write) pending_reads_.emplace_back(page, r.bufs[k]);
      }
    }
    return st;
  }
  Status Wait(std::vector<area::IoCompletion>* done) override {
    Status st = inner_->Wait(done);
    for (auto [page, buf] : pending_reads_) Fill(page, buf);
    pending_reads_.clear();
    return st;
  }
  Status Discard(uint64_t page, uint64_t n) override { return inner_->Discard(page, n); }
  area::IoStats stats() const override { return inner_->stats(); }
  const area::DeviceLimits& limits() const override { return inner_->limits(); }
  std::array<std::byte, area::kPageSize>& header() { return header_; }
  // What each dblock of the image holds (writer's placement, §4.2): the
  // caller's lists, not a copy (8 bytes per stream page each), so they
  // must outlive every read until ClearLayout.
  void SetLayout(const hibernate::SyntheticSnapshot* snap, const std::vector<uint64_t>& stream,
                 const std::vector<uint64_t>& map) {
    snap_ = snap;
    stream_ = &stream;
    map_ = &map;
    what_.clear();
    // Structural: only swsusp_info and the map pages are answered.
    const size_t answered = structural_ ? std::min<size_t>(1, stream.size()) : stream.size();
    what_.reserve(answered + map.size());
    for (size_t i = 0; i < answered; ++i) what_[stream[i]] = static_cast<int64_t>(i);
    for (size_t j = 0; j < map.size(); ++j) what_[map[j]] = -static_cast<int64_t>(j) - 1;
  }
  // Image pages read from now on come back as the device has them.
  void ClearLayout() {
    snap_ = nullptr;
    stream_ = map_ = nullptr;
    what_.clear();
  }

 private:
  void Fill(uint64_t page, std::byte* buf) {
    if (page == 0) {
      std::memcpy(buf, header_.data(), header_.size());
      return;
    }
    auto it = what_.find(page);
    if (snap_ == nullptr || it == what_.end()) return;
    // Structural: no checksums; only the pages the reader parses (map
    // pages, swsusp_info) are answered, from the placement.
    if (structural_ && it->second > 0) return;
    alignas(8) std::array<std::byte, area::kPageSize> p{};
    if (it->second >= 0) {
      snap_->StreamPage(static_cast<uint64_t>(it->second), p.data());
    } else {  // map page j: 511 stream dblocks, then the next map page
      const uint64_t j = static_cast<uint64_t>(-it->second - 1);
      const std::vector<uint64_t>& stream = *stream_;
      for (uint64_t k = 0;
           k < hibernate::kMapEntries && j * hibernate::kMapEntries + k < stream.size(); ++k)
        hibernate::StoreU64(p.data() + 8 * k, stream[j * hibernate::kMapEntries + k]);
      hibernate::StoreU64(p.data() + 8 * hibernate::kMapEntries,
                          j + 1 < map_->size() ? (*map_)[j + 1] : 0);
    }
    // The device returned {magic, page, checksum of what was written}.
    if (structural_ || (hibernate::LoadU64(buf) == area::kSimChecksumPageMagic &&
                        hibernate::LoadU64(buf + 8) == page &&
                        hibernate::LoadU64(buf + 16) == area::SimPageChecksum(p.data())))
      std::memcpy(buf, p.data(), p.size());
  }
  std::unique_ptr<area::IoEngine> inner_;
  bool structural_ = false;
  std::array<std::byte, area::kPageSize> header_{};
  std::vector<std::pair<uint64_t, std::byte*>> pending_reads_;
  const hibernate::SyntheticSnapshot* snap_ = nullptr;
  const std::vector<uint64_t>*stream_ = nullptr, *map_ = nullptr;  // SetLayout's
  std::unordered_map<uint64_t, int64_t> what_;
};

}  // namespace

uint64_t RunsInAllocationOrder(const std::vector<uint64_t>& stream,
                               const std::vector<uint64_t>& map) {
  // The writer's slot requests (§10.2): map page j, then the stream pages
  // it lists, then map page j + 1.
  uint64_t runs = 0, prev = 0;
  bool first = true;
  auto visit = [&](uint64_t d) {
    runs += first || d != prev + 1;
    first = false;
    prev = d;
  };
  for (size_t j = 0; j < map.size(); ++j) {
    visit(map[j]);
    for (size_t k = j * hibernate::kMapEntries;
         k < std::min(stream.size(), (j + 1) * hibernate::kMapEntries); ++k)
      visit(stream[k]);
  }
  return runs;
}

std::unique_ptr<area::IoEngine> MakeSimulatedSwapDevice(uint64_t pages, bool structural) {
  area::SimModel m;
  m.pages = pages;
  m.store_checksums = !structural;
  area::EngineOptions eo;
  auto e = std::make_unique<SnapshotBackedEngine>(area::MakeSimulatedEngine(m, eo), structural);
  area::SwapHeaderV1 h;
  h.last_page = static_cast<uint32_t>(pages - 1);
  e->header() = area::EncodeHeader(h);
  return e;
}

Result<ImageResult> WriteReadImage(alloc::SwapSystem& sys, int type, area::IoEngine& engine,
                                   const ImageSpec& spec) {
  hibernate::SnapshotOptions so;
  so.saveable_pages = spec.pages;
  so.zero_share = 0;  // every saved page is a data page: T = 1 + M + N
  // Pattern pages are the cheapest to generate and check; an uncompressed
  // image writes them exactly like random pages (content does not change
  // slots, bios or modelled time).
  so.compressible_share = 1.0;
  so.seed = spec.seed;
  auto snap = hibernate::SyntheticSnapshot::Make(so);
  if (!snap.ok()) return snap.status();
  ImageResult res;
  const bool modelled = engine.modelled();
  res.modelled = modelled;
  auto clock = [&] {
    return modelled
               ? static_cast<double>(engine.stats().modelled_ns) / 1e9
               : std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
                     .count();
  };
  hibernate::WriteReport w;
  auto* backed = dynamic_cast<SnapshotBackedEngine*>(&engine);
  {
    hibernate::ImageSession session(sys, type, spec.source, 0);
    hibernate::WriterOptions wo;
    wo.batch = spec.batch;
    wo.memory_budget_pages = spec.memory_budget_pages;  // bound the write copies, as `image write`
    if (spec.structural && (backed == nullptr || !backed->structural()))
      return Status(-EINVAL, "structural image step: needs a structural simulated device");
    wo.batch.model_only = spec.structural;
    // Real devices: 16 MiB of write copies; more wait for writes to complete.
    if (!modelled) wo.batch.max_heap_copies = 4096;
    wo.record_placement = true;
    const double t0 = clock();
    const uint64_t req0 = engine.stats().requests;
    auto rep = hibernate::WriteImage(session, engine, *snap, wo);
    if (!rep.ok()) return rep.status();
    res.write_s = clock() - t0;
    res.write_requests = engine.stats().requests - req0;
    w = std::move(*rep);
    // The image's slots stay allocated (the session ends; the image owns
    // them until resume), so the device is as the writer left it.
  }
  res.stream_pages = w.T;
  res.slots = w.slots;
  res.runs = w.device_runs;
  res.runs_alloc_order = RunsInAllocationOrder(w.stream_dblocks, w.map_dblocks);
  res.write_bios = w.batch.bios;
  res.write_bio_sizes = w.batch.bio_sizes;
  res.fallback_slots = w.session.fallback_slots;
  res.alloc_calls = w.session.runs_taken;
  res.stream_dblocks = std::move(w.stream_dblocks);
  res.map_dblocks = std::move(w.map_dblocks);
  // The engine answers from res's lists and the snapshot while both live.
  struct Layout {
    SnapshotBackedEngine* e;
    ~Layout() {
      if (e != nullptr) e->ClearLayout();
    }
  } layout{backed};
  if (backed) backed->SetLayout(&*snap, res.stream_dblocks, res.map_dblocks);
  if (spec.read_back) {
    hibernate::ReaderOptions ro;
    ro.batch = spec.batch;
    ro.expect = &*snap;
    ro.verify_pages = !spec.structural;
    ro.batch.model_only = spec.structural;
    ro.consume = true;  // resume restores the swap signature (the next write needs it)
    const double t0 = clock();
    auto rep = hibernate::ReadImage(engine, 0, ro);
    if (!rep.ok()) return rep.status();
    res.read_s = clock() - t0;
    res.read_bios = rep->batch.bios;
    res.read_bio_sizes = rep->batch.bio_sizes;
    res.map_pages = rep->map_pages;
    res.data_checked = rep->pages_verified == rep->T;
  }
  return res;
}

}  // namespace swaplab::workload
