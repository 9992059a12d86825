// The hibernation image step (image_step.h).
#include "swaplab/workload/image_step.h"

#include <chrono>
#include <cstring>
#include <vector>

#include "swaplab/area/swap_header.h"
#include "swaplab/hibernate/image_reader.h"
#include "swaplab/hibernate/image_writer.h"
#include "swaplab/hibernate/snapshot.h"

namespace swaplab::workload {

namespace {

// The simulated device keeps checksums, not data; the swap header page
// (page 0) must read back as written (mark_swapfiles reads it, resume
// restores it), so this wrapper keeps that one page whole. All requests
// still reach the simulated device, so the modelled time is unchanged.
class HeaderKeepingEngine final : public area::IoEngine {
 public:
  explicit HeaderKeepingEngine(std::unique_ptr<area::IoEngine> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  Status Submit(std::span<area::IoRequest> batch) override {
    Status st = inner_->Submit(batch);
    if (!st.ok()) return st;
    for (const auto& r : batch) {
      if (r.page != 0 || r.bufs.empty()) continue;
      if (r.write) std::memcpy(header_.data(), r.bufs[0], header_.size());
      else pending_reads_.push_back(r.bufs[0]);
    }
    return st;
  }
  Status Wait(std::vector<area::IoCompletion>* done) override {
    Status st = inner_->Wait(done);
    for (std::byte* b : pending_reads_) std::memcpy(b, header_.data(), header_.size());
    pending_reads_.clear();
    return st;
  }
  Status Discard(uint64_t page, uint64_t n) override { return inner_->Discard(page, n); }
  area::IoStats stats() const override { return inner_->stats(); }
  const area::DeviceLimits& limits() const override { return inner_->limits(); }
  std::array<std::byte, area::kPageSize>& header() { return header_; }

 private:
  std::unique_ptr<area::IoEngine> inner_;
  std::array<std::byte, area::kPageSize> header_{};
  std::vector<std::byte*> pending_reads_;
};

}  // namespace

std::unique_ptr<area::IoEngine> MakeSimulatedSwapDevice(uint64_t pages) {
  area::SimModel m;
  m.pages = pages;
  m.store_checksums = true;
  area::EngineOptions eo;
  auto e = std::make_unique<HeaderKeepingEngine>(area::MakeSimulatedEngine(m, eo));
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
  so.seed = spec.seed;
  auto snap = hibernate::SyntheticSnapshot::Make(so);
  if (!snap.ok()) return snap.status();
  ImageResult res;
  const bool modelled = engine.stats().modelled_ns != 0 || engine.name().find("simulated") != std::string::npos;
  res.modelled = modelled;
  auto clock = [&] {
    return modelled ? static_cast<double>(engine.stats().modelled_ns) / 1e9
                    : std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  hibernate::WriteReport w;
  {
    hibernate::ImageSession session(sys, type, spec.source, 0);
    hibernate::WriterOptions wo;
    wo.batch = spec.batch;
    wo.memory_budget_pages = 262144;  // bound the write copies (1 GiB), as `image write`
    const double t0 = clock();
    const uint64_t req0 = engine.stats().requests;
    auto rep = hibernate::WriteImage(session, engine, *snap, wo);
    if (!rep.ok()) return rep.status();
    res.write_s = clock() - t0;
    res.write_requests = engine.stats().requests - req0;
    w = *rep;
    // The image's slots stay allocated (the session ends; the image owns
    // them until resume), so the device is as the writer left it.
  }
  res.stream_pages = w.T;
  res.slots = w.slots;
  res.runs = w.device_runs;
  res.write_bios = w.batch.bios;
  res.fallback_slots = w.session.fallback_slots;
  if (spec.read_back) {
    hibernate::ReaderOptions ro;
    ro.batch = spec.batch;
    ro.expect = &*snap;
    const double t0 = clock();
    auto rep = hibernate::ReadImage(engine, 0, ro);
    if (!rep.ok()) return rep.status();
    res.read_s = clock() - t0;
    res.read_bios = rep->batch.bios;
  }
  return res;
}

}  // namespace swaplab::workload
