// `swaplab image write|read|inspect AREA`: a hibernation image on a real
// swap area through the io_uring engine (hibernation spec §4, §6, §8).
#include "image.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>

#include "swaplab/alloc/swap_system.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/hibernate/compress.h"
#include "swaplab/hibernate/image_reader.h"
#include "swaplab/hibernate/image_session.h"
#include "swaplab/hibernate/image_writer.h"
#include "swaplab/hibernate/request_batcher.h"
#include "swaplab/hibernate/rfc_layouts.h"
#include "swaplab/hibernate/snapshot.h"
#include "size_arg.h"

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
  c.write->add_option("--size", o.size, "image size (K, M, G suffixes)");
  c.write->add_option("--source", o.source, "base | free-clusters | free-clusters-sorted | reserve | pmd");
  c.write->add_option("--compress", o.compress, "none | lzo | lz4 (read and inspect take it from the header)");
  c.write->add_option("--policy", o.policy, "allocator preset");
  c.write->add_option("--layout", o.layout,
                      "allocator state before the write: fresh | shuffled (90% swapped out in 2 MiB files, "
                      "removed in random order) | holes (a third swapped out, every other 64 KiB freed); seed 001");
  c.write->add_option("--seed", o.seed, "snapshot seed");
  c.write->add_option("--memory-budget", o.memory_budget,
                      "free memory for write copies (K, M, G): once per map page the writer drains when half is used (§6.1)");
  c.write->add_option("--snapshot-memory", o.snapshot_memory,
                      "a snapshot of at most this size (K, M, G; 0: never) is built in memory before the "
                      "timed write, as the kernel's is before swsusp_write; larger ones are generated while writing");
  c.write->add_option("--zero-share", o.zero_share, "share of zero pages in the snapshot")->check(CLI::Range(0.0, 1.0));
  return c;
}

namespace {

ordered_json BatchJson(const hibernate::BatchStats& b) {
  ordered_json sizes = ordered_json::object();
  for (auto [pages, n] : b.bio_sizes) sizes[std::to_string(pages)] = n;
  return {{"bios", b.bios}, {"sync_ios", b.sync_ios}, {"pages", b.pages}, {"drains", b.drains}, {"bio_sizes", sizes}};
}

int Fail(const Status& st, const char* what) {
  fmt::print(stderr, "swaplab image {}: {}\n", what, st.ToString());
  return st.code() == -EINVAL || st.code() == -ENOENT ? 2 : 1;
}

}  // namespace

int RunImage(const ImageCommands& c, const ImageOptions& o) {
  if (!c.write->parsed()) return RunImageReadInspect(c, o);
  auto batch_mode = hibernate::ParseBatchMode(o.batch);
  auto capacity = hibernate::ParseCapacityMode(o.bio_capacity);
  if (!batch_mode.ok()) return Fail(batch_mode.status(), "usage");
  if (!capacity.ok()) return Fail(capacity.status(), "usage");
  hibernate::BatchOptions bo{*batch_mode, *capacity, o.max_pages};
  auto area = area::SwapArea::Open(o.area);
  if (!area.ok()) return Fail(area.status(), "write");
  const area::AreaInfo& info = (*area)->info();
  area::EngineOptions eo;
  eo.limits = info.limits;
  auto engine = area::OpenUringEngine(o.area, eo);
  if (!engine.ok()) return Fail(engine.status(), "open");
  auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  // CPU time of the process (every thread, user + system, the kernel's
  // io_uring work charged to us included), to tell CPU-bound from I/O-bound.
  auto cpu_now = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  double cpu0 = cpu_now();
  ordered_json j;
  j["area"] = o.area;
  j["batch"] = o.batch;
  j["bio_capacity"] = o.bio_capacity;
  j["max_pages"] = o.max_pages ? o.max_pages : hibernate::HibBioMaxPages(info.limits);

  {
    auto compress = hibernate::ParseCompressor(o.compress);
    if (!compress.ok()) return Fail(compress.status(), "write");
    auto source = hibernate::ParseSlotSource(o.source);
    auto size = ParseSize(o.size, "--size");
    auto policy = alloc::Policy::Preset(o.policy);
    if (!source.ok()) return Fail(source.status(), "write");
    if (!size.ok()) return Fail(size.status(), "write");
    auto budget = ParseSize(o.memory_budget, "--memory-budget");
    if (!budget.ok()) return Fail(budget.status(), "write");
    auto snap_mem = ParseSize(o.snapshot_memory, "--snapshot-memory");
    if (!snap_mem.ok()) return Fail(snap_mem.status(), "write");
    if (*budget < 2 * 4096) return Fail(Status(-EINVAL, "--memory-budget " + o.memory_budget + ": at least 8K"), "write");
    if (!policy.ok()) return Fail(policy.status(), "write");
    auto layout = hibernate::ParseRfcLayout(o.layout);
    if (!layout.ok()) return Fail(layout.status(), "write");
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
    auto lay = hibernate::ApplyRfcLayout(sys, *type, *layout, o.seed);
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
    cpu0 = cpu_now();
    auto rep = hibernate::WriteImage(session, **engine, *snap, wo);
    const double secs = seconds();
    const double cpu_secs = cpu_now() - cpu0;
    (*engine)->UnregisterBuffer();
    if (!rep.ok()) return Fail(rep.status(), "write");
    j["source"] = o.source;
    j["layout"] = o.layout;
    j["policy"] = o.policy;
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
