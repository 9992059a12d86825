// SPDX-License-Identifier: MIT
// `swaplab image write`'s run (image_write.h).
#include "swaplab/workload/image_write.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>

#include "swaplab/alloc/printable.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/area/area_lock.h"
#include "swaplab/area/io_engine_factory.h"
#include "swaplab/hibernate/image_format.h"
#include "swaplab/hibernate/snapshot.h"

namespace swaplab::workload {

namespace {

// The slots an image of `saveable` pages needs at least, as the writer lays
// it out (§3.2): swsusp_info, the PFN list (one meta page per 512 pages),
// the data pages (zero pages are not written: their expected share is
// taken off, with 5% slack for the seeded draw), one map page per 511
// stream pages. Compressed, no unit holds more than 256 pages' worth of
// input, so a 256th of the stream is a floor. A bound, never a prediction.
uint64_t SlotsNeededAtLeast(uint64_t saveable, double zero_share, bool compressed) {
  const double data = static_cast<double>(saveable) * (1.0 - zero_share) * 0.95;
  uint64_t stream = 1 + hibernate::MetaPages(saveable) + static_cast<uint64_t>(data);
  if (compressed) stream = (stream + 255) / 256;
  return stream + hibernate::MapPages(stream);
}

// The size against the area and the machine, before any of it is built.
Status CheckImageSize(const area::AreaInfo& info, const ImageWriteOptions& o) {
  const uint64_t size = o.size_bytes, snapshot_memory = o.snapshot_memory_bytes;
  const bool compressed = o.compress != hibernate::Compressor::kNone;
  const std::string& size_arg = o.size_arg;
  const auto& h = info.header.v1;
  const uint64_t pages =
      std::min<uint64_t>(uint64_t{h.last_page} + 1, info.size_bytes / area::kPageSize);
  const uint64_t usable = pages - 1 - std::min<uint64_t>(pages - 1, h.bad_pages.size());
  const uint64_t saveable = std::max<uint64_t>(1, size / area::kPageSize);
  const uint64_t needs = SlotsNeededAtLeast(saveable, o.zero_share, compressed);
  if (needs > usable)
    return Status(-EINVAL,
                  fmt::format("--size {}: the image needs {} slots{}, the area has {} ({})",
                              size_arg, needs, compressed ? " even at the best compression" : "",
                              usable, Printable(info.path)));
  // The snapshot keeps two PFN lists (8 bytes a page) and, when it is built
  // before the write (--snapshot-memory), every stream page.
  const uint64_t stream_bytes = hibernate::StreamPages(saveable) * area::kPageSize;
  const uint64_t mem = 16 * saveable + (stream_bytes <= snapshot_memory ? stream_bytes : 0);
  const long phys = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (phys > 0 && page > 0 && mem > static_cast<uint64_t>(phys) * static_cast<uint64_t>(page))
    return Status(
        -EINVAL,
        fmt::format("--size {}: the snapshot needs {} bytes of memory, the machine has {}{}",
                    size_arg, mem, static_cast<uint64_t>(phys) * static_cast<uint64_t>(page),
                    stream_bytes <= snapshot_memory
                        ? " (lower --snapshot-memory to build it while writing)"
                        : ""));
  return Status::Ok();
}

// The write itself, on an opened area and engine: the model's device with
// the layout, the snapshot, the copy arena, WriteImage timed.
Result<ImageWriteResult> Write(const ImageWriteOptions& o, area::SwapArea& area,
                               area::IoEngine& engine) {
  ImageWriteResult res;
  res.options = o;
  res.max_pages =
      o.batch.max_pages ? o.batch.max_pages : hibernate::HibBioMaxPages(area.info().limits);
  alloc::SystemOptions so;
  so.policy = o.policy;
  so.nr_cpus = 1;
  alloc::SwapSystem sys(so);
  alloc::SwaponOptions sw = area.ToSwaponOptions();
  sw.extents.clear();  // slots are addressed as pages of the area itself
  sw.first_block = 0;
  sw.discard_sink = nullptr;
  if (o.source == hibernate::SlotSourceKind::kReserve)
    sw.hibernation_reserve_pages = o.size_bytes / alloc::kPageSize;
  auto type = sys.Swapon(sw);
  if (!type.ok()) return type.status();
  // The device state before the write.
  if (auto lay = workload::ApplyRfcLayout(sys, *type, o.layout, o.seed); !lay.ok())
    return lay.status();
  hibernate::SnapshotOptions sn;
  sn.saveable_pages = std::max<uint64_t>(1, o.size_bytes / alloc::kPageSize);
  sn.zero_share = o.zero_share;
  sn.seed = o.seed;
  auto snap = hibernate::SyntheticSnapshot::Make(sn);
  if (!snap.ok()) return snap.status();
  hibernate::ImageSession session(sys, *type, o.source, 0);
  hibernate::WriterOptions wo;
  wo.batch = o.batch;
  wo.memory_budget_pages = o.memory_budget_bytes / alloc::kPageSize;  // bounds the write copies
  wo.compress = o.compress;
  wo.threads = o.threads;
  wo.progress = o.progress;
  auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // The kernel's snapshot is in memory before swsusp_write (§3.2): build
  // ours outside the clock when it fits, so the seconds cover only what
  // swsusp_write does (slots, map pages, the copy into each write page, I/O).
  if (snap->image_pages() * alloc::kPageSize <= o.snapshot_memory_bytes) {
    t0 = std::chrono::steady_clock::now();
    if (Status st = snap.value().Materialize(); !st.ok()) return st;
    res.snapshot_build_seconds = seconds();
  }
  // The kernel's free pages for write copies exist before the write:
  // ours are allocated and touched here, and registered with io_uring
  // once (fixed buffers) so the write does not pin them per I/O.
  // No more than the image can have in flight: its pages plus map pages.
  const uint64_t image_copies = hibernate::SlotsUsed(snap->image_pages()) + 1;
  auto arena = hibernate::CopyArena::Make(std::min(wo.memory_budget_pages, image_copies));
  if (!arena.ok()) return arena.status();
  wo.batch.arena = arena.value().get();
  res.fixed_buffers =
      engine.RegisterBuffer(wo.batch.arena->base(), wo.batch.arena->pages() * alloc::kPageSize);
  t0 = std::chrono::steady_clock::now();  // the write alone, not the layout
  const double cpu0 = ProcessCpuSeconds();
  auto rep = hibernate::WriteImage(session, engine, *snap, wo);
  res.write_seconds = seconds();
  res.write_cpu_seconds = ProcessCpuSeconds() - cpu0;
  engine.UnregisterBuffer();
  if (!rep.ok()) return rep.status();
  res.report = std::move(rep).value();
  res.snapshot_materialized = snap->materialized();
  res.copy_arena_pages = wo.batch.arena->pages();
  return res;
}

}  // namespace

Result<ImageWriteResult> WriteImageToArea(const ImageWriteOptions& o, ImageWriteStep* failed) {
  ImageWriteStep ignored;
  ImageWriteStep& step = failed ? *failed : ignored;
  // Held until we return: no other swaplab writes this area meanwhile, and
  // one the running kernel swaps on (or a mounted device) is refused.
  step = ImageWriteStep::kLock;
  auto lock = area::LockArea(o.area);
  if (!lock.ok()) return lock.status();
  step = ImageWriteStep::kOpenArea;
  auto area = area::SwapArea::Open(o.area);
  if (!area.ok()) return area.status();
  const area::AreaInfo& info = (*area)->info();
  step = ImageWriteStep::kCheckSize;
  if (Status st = CheckImageSize(info, o); !st.ok()) return st;
  step = ImageWriteStep::kOpenEngine;
  area::EngineOptions eo;
  eo.limits = info.limits;
  auto engine = area::OpenEngine(o.io, o.area, eo);
  if (!engine.ok()) return engine.status();
  step = ImageWriteStep::kWrite;
  return Write(o, **area, **engine);
}

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace swaplab::workload
