// SPDX-License-Identifier: MIT
// `swaplab image write|read|inspect AREA`: a hibernation image on a real
// swap area through the io_uring engine (hibernation spec §4, §6, §8).
#include "image.h"

#include <fmt/core.h>
#include <unistd.h>

#include "area.h"
#include "finite_range.h"
#include "io_arg.h"
#include "policy_arg.h"
#include "progress.h"
#include "size_arg.h"
#include "swaplab/alloc/printable.h"
#include "swaplab/alloc/types.h"
#include "swaplab/report/image_report.h"
#include "swaplab/workload/image_write.h"

namespace swaplab::tools {

ImageCommands AddImage(CLI::App& app, ImageOptions& o) {
  ImageCommands c;
  c.image = app.add_subcommand("image", "hibernation images on a swap area");
  c.image->require_subcommand(1);
  c.write = c.image->add_subcommand("write", "write a synthetic snapshot as a hibernation image");
  c.read = c.image->add_subcommand("read",
                                   "read any image (the kernel's or swaplab's) as resume does: "
                                   "every map page, every stream page, "
                                   "every compressed unit decompressed, the kernel's CRC32 and the "
                                   "PFN list checked; read-only unless --consume");
  c.inspect = c.image->add_subcommand(
      "inspect",
      "the image's swsusp header, swsusp_info, map chain, layout on disk (runs, clusters) and bios "
      "per page / per run, without reading its data or changing anything");
  for (CLI::App* s : {c.write, c.read, c.inspect}) {
    s->add_option("area", o.area, "swap area (file or block device)")->required();
    s->add_option("--batch", o.batch, "per-page | per-run");
    s->add_option("--max-pages", o.max_pages, "pages per bio (0: from the device limits)");
    s->add_option("--bio-capacity", o.bio_capacity, "exact | slab (§10.5)");
    s->add_flag("--json", o.json, "one JSON document on stdout");
    s->add_option("--threads", o.threads,
                  "compression threads (0: clamp(CPUs - 1, 1, 3) as the kernel)")
        ->check(CLI::Range(0u, 64u));
    AddIoOption(s, &o.io);
  }
  AddProgressOption(c.write, o.progress);
  AddProgressOption(c.read, o.progress);
  c.read->add_flag(
      "--consume", o.consume,
      "restore the swap signature first, as the kernel's resume does: the image can then never be "
      "resumed (without it, not a byte of the area is written)");
  c.read->add_option("--dump", o.dump,
                     "write the decompressed stream (pages 0 … T-1) to this new file");
  c.read->add_flag("--kernel-io", o.kernel_io,
                   "issue the reads the kernel's resume issues (one sync read per map page and per "
                   "metadata page), "
                   "so that the bios reported are the kernel's; without it the map chain is read "
                   "ahead along its "
                   "stride and the metadata with the data (the same checks)");
  c.write->add_option("--size", o.size,
                      "image size (K, M, G suffixes); checked against the area's free slots and "
                      "this machine's memory "
                      "before anything is built (exit 2)");
  c.write->add_option("--source", o.source,
                      "base | free-clusters | free-clusters-sorted | reserve | pmd");
  c.write->add_option("--compress", o.compress,
                      "none | lzo | lz4 (read and inspect take it from the header)");
  c.write
      ->add_option("--policy", o.policy,
                   "allocator preset (default mm-new: the RFC's 2026 base, HIB entries)")
      ->capture_default_str();
  AddKnobOption(c.write, &o.knobs);
  c.write->add_option(
      "--layout", o.layout,
      "allocator state before the write: fresh | shuffled (90% swapped out in 2 MiB folios, "
      "freed in random order) | holes (a third swapped out, every other 64 KiB freed): the aging "
      "of scenario rfc-shuffled / rfc-holes scaled to the area; seed 001");
  c.write->add_option("--seed", o.seed, "snapshot and layout seed");
  c.write->add_option("--memory-budget", o.memory_budget,
                      "free memory for write copies (K, M, G): once per map page the writer drains "
                      "when half is used (§6.1)");
  c.write->add_option(
      "--snapshot-memory", o.snapshot_memory,
      "a snapshot of at most this size (K, M, G; 0: never) is built in memory before the "
      "timed write, as the kernel's is before swsusp_write; larger ones are generated while "
      "writing");
  c.write->add_option("--zero-share", o.zero_share, "share of zero pages in the snapshot")
      ->check(FiniteRange(0.0, 1.0));
  return c;
}

namespace {

// Exit codes as `area` has them (area.h, AreaExitCode): 2 for bad usage or
// a path that cannot be used at all, 1 for a run or an area that failed.
int Fail(const Status& st, const char* what, int code) {
  fmt::print(stderr, "swaplab image {}: {}\n", what, Printable(st.ToString(), 1024));
  return code;
}
int Fail(const Status& st, const char* what) { return Fail(st, what, AreaExitCode(st)); }

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
  if (*budget < 2 * alloc::kPageSize)
    return Fail(Status(-EINVAL, "--memory-budget " + Printable(o.memory_budget) + ": at least 8K"),
                "write", 2);
  auto policy = PolicyFromArgs(o.policy, o.knobs);
  if (!policy.ok()) return Fail(policy.status(), "write", 2);
  auto layout = workload::ParseRfcLayout(o.layout);
  if (!layout.ok()) return Fail(layout.status(), "write", 2);
  workload::ImageWriteOptions w{
      o.area,   bo,        *compress,    *source,          *layout,   *policy, *size,
      *budget,  *snap_mem, o.zero_share, o.seed,           o.threads, o.batch, o.bio_capacity,
      o.source, o.layout,  o.compress,   Printable(o.size)};
  // Snapshot pages written, as bytes of the image.
  ProgressBar bar(o.progress, 0, "pages", ProgressBar::Unit::kBytes);
  w.io = o.io;
  w.progress = [&bar](uint64_t done, uint64_t total) {
    bar.SetTotal(total * alloc::kPageSize);
    bar.Update(done * alloc::kPageSize, "image write");
  };
  workload::ImageWriteStep step;
  auto r = workload::WriteImageToArea(w, &step);
  bar.End();
  if (!r.ok()) {
    const Status& st = r.status();
    switch (step) {
      case workload::ImageWriteStep::kCheckSize:
        return Fail(st, "write", 2);
      case workload::ImageWriteStep::kOpenEngine:
        return Fail(st, "open");
      // Past LockArea's type check, -EINVAL is an area swapon would refuse.
      case workload::ImageWriteStep::kOpenArea:
        return Fail(st, "write", st.code() == -EINVAL ? 1 : AreaExitCode(st));
      default:
        return Fail(st, "write");
    }
  }
  if (o.json) {
    fmt::print("{}\n", report::ImageWriteJson(*r).dump(2));
  } else {
    fmt::print("{}", report::ImageWriteText(*r));
  }
  return 0;
}

}  // namespace swaplab::tools
