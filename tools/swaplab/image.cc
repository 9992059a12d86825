// `swaplab image write|read|inspect AREA`: a hibernation image on a real
// swap area through the io_uring engine (hibernation spec §4, §6, §8).
#include "policy_arg.h"
#include "image.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>

#include "swaplab/alloc/printable.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/hibernate/compress.h"
#include "swaplab/hibernate/image_reader.h"
#include "swaplab/hibernate/image_session.h"
#include "swaplab/hibernate/image_writer.h"
#include "swaplab/hibernate/request_batcher.h"
#include "swaplab/workload/layouts.h"
#include "swaplab/hibernate/snapshot.h"
#include "area.h"
#include "size_arg.h"
#include "swaplab/area/area_lock.h"

namespace swaplab::tools {

using nlohmann::ordered_json;

ImageCommands AddImage(CLI::App& app, ImageOptions& o) {
  ImageCommands c;
  c.image = app.add_subcommand("image", "hibernation images on a swap area");
  c.image->require_subcommand(1);
  c.write = c.image->add_subcommand("write", "write a synthetic snapshot as a hibernation image");
  c.read = c.image->add_subcommand(
      "read", "read any image (the kernel's or swaplab's) as resume does: every map page, every stream page, "
              "every compressed unit decompressed, the kernel's CRC32 and the PFN list checked; read-only unless --consume");
  c.inspect = c.image->add_subcommand(
      "inspect", "the image's swsusp header, swsusp_info, map chain, layout on disk (runs, clusters) and bios "
                 "per page / per run, without reading its data or changing anything");
  for (CLI::App* s : {c.write, c.read, c.inspect}) {
    s->add_option("area", o.area, "swap area (file or block device)")->required();
    s->add_option("--batch", o.batch, "per-page | per-run");
    s->add_option("--max-pages", o.max_pages, "pages per bio (0: from the device limits)");
    s->add_option("--bio-capacity", o.bio_capacity, "exact | slab (§10.5)");
    s->add_flag("--json", o.json, "one JSON document on stdout");
    s->add_option("--threads", o.threads, "compression threads (0: clamp(CPUs - 1, 1, 3) as the kernel)")
        ->check(CLI::Range(0u, 64u));
  }
  c.read->add_flag("--consume", o.consume,
                   "restore the swap signature first, as the kernel's resume does: the image can then never be "
                   "resumed (without it, not a byte of the area is written)");
  c.read->add_option("--dump", o.dump, "write the decompressed stream (pages 0 … T-1) to this new file");
  c.read->add_flag("--kernel-io", o.kernel_io,
                   "issue the reads the kernel's resume issues (one sync read per map page and per metadata page), "
                   "so that the bios reported are the kernel's; without it the map chain is read ahead along its "
                   "stride and the metadata with the data (the same checks)");
  c.write->add_option("--size", o.size,
                      "image size (K, M, G suffixes); checked against the area's free slots and this machine's memory "
                      "before anything is built (exit 2)");
  c.write->add_option("--source", o.source, "base | free-clusters | free-clusters-sorted | reserve | pmd");
  c.write->add_option("--compress", o.compress, "none | lzo | lz4 (read and inspect take it from the header)");
  c.write->add_option("--policy", o.policy,
                      "allocator preset (default mm-new: the RFC's 2026 base, HIB entries)")->capture_default_str();
  AddKnobOption(c.write, &o.knobs);
  c.write->add_option("--layout", o.layout,
                      "allocator state before the write: fresh | shuffled (90% swapped out in 2 MiB folios, "
                      "freed in random order) | holes (a third swapped out, every other 64 KiB freed): the aging "
                      "of scenario rfc-shuffled / rfc-holes scaled to the area; seed 001");
  c.write->add_option("--seed", o.seed, "snapshot and layout seed");
  c.write->add_option("--memory-budget", o.memory_budget,
                      "free memory for write copies (K, M, G): once per map page the writer drains when half is used (§6.1)");
  c.write->add_option("--snapshot-memory", o.snapshot_memory,
                      "a snapshot of at most this size (K, M, G; 0: never) is built in memory before the "
                      "timed write, as the kernel's is before swsusp_write; larger ones are generated while writing");
  c.write->add_option("--zero-share", o.zero_share, "share of zero pages in the snapshot")->check(CLI::Range(0.0, 1.0));
  return c;
}

nlohmann::ordered_json BatchJson(const hibernate::BatchStats& b) {
  ordered_json sizes = ordered_json::object();
  for (auto [pages, n] : b.bio_sizes) sizes[std::to_string(pages)] = n;
  return {{"bios", b.bios}, {"sync_ios", b.sync_ios}, {"pages", b.pages}, {"drains", b.drains}, {"partial_waits", b.partial_waits}, {"bio_sizes", sizes}};
}

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

namespace {

// Exit codes as `area` has them (area.h, AreaExitCode): 2 for bad usage or
// a path that cannot be used at all, 1 for a run or an area that failed.
int Fail(const Status& st, const char* what, int code) {
  fmt::print(stderr, "swaplab image {}: {}\n", what, Printable(st.ToString(), 1024));
  return code;
}
int Fail(const Status& st, const char* what) { return Fail(st, what, AreaExitCode(st)); }

// The slots an image of `saveable` pages needs at least, as the writer lays
// it out (§3.2): swsusp_info, the PFN list (one meta page per 512 pages),
// the data pages (zero pages are not written: their expected share is
// taken off, with 5% slack for the seeded draw), one map page per 511
// stream pages. Compressed, no unit holds more than 256 pages' worth of
// input, so a 256th of the stream is a floor. A bound, never a prediction.
uint64_t SlotsNeededAtLeast(uint64_t saveable, double zero_share, bool compressed) {
  const uint64_t meta = (saveable + 511) / 512;
  const double data = static_cast<double>(saveable) * (1.0 - zero_share) * 0.95;
  uint64_t stream = 1 + meta + static_cast<uint64_t>(data);
  if (compressed) stream = (stream + 255) / 256;
  return stream + (stream + 510) / 511;
}

// --size against the area and the machine, before any of it is built.
Status CheckImageSize(const area::AreaInfo& info, uint64_t size, uint64_t snapshot_memory,
                      double zero_share, bool compressed, const std::string& size_arg) {
  const auto& h = info.header.v1;
  const uint64_t pages = std::min<uint64_t>(uint64_t{h.last_page} + 1, info.size_bytes / area::kPageSize);
  const uint64_t usable = pages - 1 - std::min<uint64_t>(pages - 1, h.bad_pages.size());
  const uint64_t saveable = std::max<uint64_t>(1, size / area::kPageSize);
  const uint64_t needs = SlotsNeededAtLeast(saveable, zero_share, compressed);
  if (needs > usable)
    return Status(-EINVAL, fmt::format("--size {}: the image needs {} slots{}, the area has {} ({})", size_arg,
                                       needs, compressed ? " even at the best compression" : "", usable,
                                       Printable(info.path)));
  // The snapshot keeps two PFN lists (8 bytes a page) and, when it is built
  // before the write (--snapshot-memory), every stream page.
  const uint64_t stream_bytes = (1 + (saveable + 511) / 512 + saveable) * area::kPageSize;
  const uint64_t mem = 16 * saveable + (stream_bytes <= snapshot_memory ? stream_bytes : 0);
  const long phys = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (phys > 0 && page > 0 && mem > static_cast<uint64_t>(phys) * static_cast<uint64_t>(page))
    return Status(-EINVAL, fmt::format("--size {}: the snapshot needs {} bytes of memory, the machine has {}{}",
                                       size_arg, mem, static_cast<uint64_t>(phys) * static_cast<uint64_t>(page),
                                       stream_bytes <= snapshot_memory ? " (lower --snapshot-memory to build it while writing)" : ""));
  return Status::Ok();
}

}  // namespace

int RunImage(const ImageCommands& c, const ImageOptions& o) {
  if (!c.write->parsed()) return RunImageReadInspect(c, o);
  // Every option first: bad usage exits 2 before the area is touched.
  auto batch_mode = hibernate::ParseBatchMode(o.batch);
  auto capacity = hibernate::ParseCapacityMode(o.bio_capacity);
  if (!batch_mode.ok()) return Fail(batch_mode.status(), "usage", 2);
  if (!capacity.ok()) return Fail(capacity.status(), "usage", 2);
  hibernate::BatchOptions bo{*batch_mode, *capacity, o.max_pages};
  auto compress = hibernate::ParseCompressor(o.compress);
  if (!compress.ok()) return Fail(compress.status(), "write", 2);
  auto source = hibernate::ParseSlotSource(o.source);
  if (!source.ok()) return Fail(source.status(), "write", 2);
  auto size = ParseSize(o.size, "--size");
  if (!size.ok()) return Fail(size.status(), "write", 2);
  auto budget = ParseSize(o.memory_budget, "--memory-budget");
  if (!budget.ok()) return Fail(budget.status(), "write", 2);
  auto snap_mem = ParseSize(o.snapshot_memory, "--snapshot-memory");
  if (!snap_mem.ok()) return Fail(snap_mem.status(), "write", 2);
  if (*budget < 2 * 4096)
    return Fail(Status(-EINVAL, "--memory-budget " + Printable(o.memory_budget) + ": at least 8K"), "write", 2);
  auto policy = PolicyFromArgs(o.policy, o.knobs);
  if (!policy.ok()) return Fail(policy.status(), "write", 2);
  auto layout = workload::ParseRfcLayout(o.layout);
  if (!layout.ok()) return Fail(layout.status(), "write", 2);

  // Held until we return: no other swaplab writes this area meanwhile, and
  // one the running kernel swaps on (or a mounted device) is refused.
  auto lock = area::LockArea(o.area);
  if (!lock.ok()) return Fail(lock.status(), "write");
  auto area = area::SwapArea::Open(o.area);
  // Past LockArea's type check, −EINVAL is an area swapon would refuse.
  if (!area.ok()) return Fail(area.status(), "write", area.status().code() == -EINVAL ? 1 : AreaExitCode(area.status()));
  const area::AreaInfo& info = (*area)->info();
  if (Status st = CheckImageSize(info, *size, *snap_mem, o.zero_share, *compress != hibernate::Compressor::kNone,
                                 Printable(o.size));
      !st.ok())
    return Fail(st, "write", 2);
  area::EngineOptions eo;
  eo.limits = info.limits;
  auto engine = area::OpenUringEngine(o.area, eo);
  if (!engine.ok()) return Fail(engine.status(), "open");
  auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  double cpu0 = CpuSeconds();
  ordered_json j;
  j["area"] = Printable(o.area, 4096);
  j["batch"] = o.batch;
  j["bio_capacity"] = o.bio_capacity;
  j["max_pages"] = o.max_pages ? o.max_pages : hibernate::HibBioMaxPages(info.limits);

  {
    alloc::SystemOptions so;
    so.policy = *policy;
    so.nr_cpus = 1;
    alloc::SwapSystem sys(so);
    alloc::SwaponOptions sw = (*area)->ToSwaponOptions();
    sw.extents.clear();  // slots are addressed as pages of the area itself
    sw.first_block = 0;
    sw.discard_sink = nullptr;
    if (*source == hibernate::SlotSourceKind::kReserve) sw.hibernation_reserve_pages = *size / 4096;
    auto type = sys.Swapon(sw);
    if (!type.ok()) return Fail(type.status(), "write");
    auto lay = workload::ApplyRfcLayout(sys, *type, *layout, o.seed);
    if (!lay.ok()) return Fail(lay.status(), "write");
    hibernate::SnapshotOptions sn;
    sn.saveable_pages = std::max<uint64_t>(1, *size / 4096);
    sn.zero_share = o.zero_share;
    sn.seed = o.seed;
    auto snap = hibernate::SyntheticSnapshot::Make(sn);
    if (!snap.ok()) return Fail(snap.status(), "write");
    hibernate::ImageSession session(sys, *type, *source, 0);
    hibernate::WriterOptions wo;
    wo.batch = bo;
    wo.memory_budget_pages = *budget / 4096;  // bounds the write copies
    wo.compress = *compress;
    wo.threads = o.threads;
    // The kernel's snapshot is in memory before swsusp_write (§3.2): build
    // ours outside the clock when it fits, so the seconds cover only what
    // swsusp_write does (slots, map pages, the copy into each write page, I/O).
    double fill_secs = 0;
    if (snap->image_pages() * 4096 <= *snap_mem) {
      t0 = std::chrono::steady_clock::now();
      Status st = snap.value().Materialize();
      if (!st.ok()) return Fail(st, "write");
      fill_secs = seconds();
    }
    // The kernel's free pages for write copies exist before the write:
    // ours are allocated and touched here, and registered with io_uring
    // once (fixed buffers) so the write does not pin them per I/O.
    // No more than the image can have in flight: its pages plus map pages.
    const uint64_t image_copies = snap->image_pages() + snap->image_pages() / 511 + 2;
    auto arena = hibernate::CopyArena::Make(std::min(wo.memory_budget_pages, image_copies));
    if (!arena.ok()) return Fail(arena.status(), "write");
    wo.batch.arena = arena.value().get();
    const bool fixed = (*engine)->RegisterBuffer(wo.batch.arena->base(), wo.batch.arena->pages() * 4096);
    t0 = std::chrono::steady_clock::now();  // the write alone, not the layout
    cpu0 = CpuSeconds();
    auto rep = hibernate::WriteImage(session, **engine, *snap, wo);
    const double secs = seconds();
    const double cpu_secs = CpuSeconds() - cpu0;
    (*engine)->UnregisterBuffer();
    if (!rep.ok()) return Fail(rep.status(), "write");
    j["source"] = o.source;
    j["layout"] = o.layout;
    j["policy"] = policy->name;
    j["knobs"] = KnobsJson(*policy);
    j["seed"] = o.seed;
    j["compress"] = o.compress;
    j["stream_pages"] = rep->stream_pages;
    j["snapshot_pages"] = rep->T;
    j["map_pages"] = rep->Q + 1;
    j["data_pages"] = rep->N;
    j["meta_pages"] = rep->M;
    j["runs"] = rep->device_runs;
    j["alloc_runs"] = rep->session.alloc_runs;
    j["extents"] = rep->extents;
    if (*compress != hibernate::Compressor::kNone) {
      j["units"] = rep->units;
      j["compressed_bytes"] = rep->compressed_bytes;
      j["crc32"] = rep->crc32;
    }
    j.update(BatchJson(rep->batch));
    j["bytes"] = rep->stream_pages * 4096;
    j["snapshot_bytes"] = rep->T * 4096;
    j["write_seconds_measured"] = secs;
    j["write_cpu_seconds"] = cpu_secs;
    j["snapshot_materialized"] = snap->materialized();
    j["snapshot_build_seconds"] = fill_secs;  // outside write_seconds_measured
    j["copy_arena_pages"] = wo.batch.arena->pages();
    j["fixed_buffers"] = fixed;
  }
  if (o.json) {
    fmt::print("{}\n", j.dump(2));
  } else {
    for (auto it = j.begin(); it != j.end(); ++it)
      fmt::print("{:<24} {}\n", it.key(), it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
  }
  return 0;
}

}  // namespace swaplab::tools
