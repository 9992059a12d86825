// SPDX-License-Identifier: MIT
// `swaplab vm hibernate`: seed 001's layouts prepared by a real kernel in a
// qemu guest, the kernel's hibernation image read on the host, and the same
// layout and image size run through the model, side by side.
#pragma once
#pragma GCC visibility push(default)
#include <csignal>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/status.h"
#include "swaplab/area/io_engine_factory.h"
#include "swaplab/hibernate/compress.h"
#include "swaplab/hibernate/image_session.h"
#include "swaplab/vm/qemu.h"
#include "swaplab/workload/layouts.h"

namespace swaplab::vm {

struct HibernateOptions {
  VmOptions vm;
  workload::RfcLayout layout = workload::RfcLayout::kFresh;
  uint64_t swap_bytes = 128ull << 20;
  uint64_t image_bytes =
      64ull << 20;  // memory in use when hibernating (approximate: the agent fills up to it)
  hibernate::Compressor compress = hibernate::Compressor::kLzo;
  bool resume = false;
  uint64_t seed = 1;
  std::string policy{kGuestPreset};  // the guest's kernel
  std::vector<std::string> knobs;    // "NAME=VALUE" applied to the preset (--knob)
  // The model's slot source for the image: kBase as 6.12 takes slots,
  // kFreeClustersSorted as a kernel booted with hibernate_alloc=clusters
  // (kernel-patches/rfc-6.12) does.
  hibernate::SlotSourceKind model_source = hibernate::SlotSourceKind::kBase;
  std::string keep_dir;  // non-empty: copy the disk, trace and consoles there
  // The engine that reads the guest's image off its disk: --io
  // (area/io_engine_factory.h).
  area::EngineKind io = area::EngineKind::kAuto;
};

// One side of the comparison; the model fills the same names.
struct SideMetrics {
  uint64_t snapshot_pages = 0;  // swsusp_info pages (kernel) / pages asked (model)
  uint64_t stream_pages = 0;    // pages on disk after compression, swsusp_info included
  uint64_t map_pages = 0;
  uint64_t slots = 0;
  uint64_t runs_disk_order = 0;
  uint64_t runs_write_order = 0;  // kernel: stretches in submission order (image inspect)
  uint64_t runs_alloc_order = 0;  // model: stretches in the order the writer took its slots
  uint64_t clusters_touched = 0;
  uint64_t bios_per_page = 0;  // write bios as 6.12 submits them (one per page)
  uint64_t bios_per_run = 0;   // as RFC patch 7 would (one per contiguous run)
  uint64_t alloc_calls = 0;    // allocator calls for the image's slots (6.12: one per slot)
  // The kernel's own count of the image's async bios and their pages
  // ("PM: Image I/O: N bios, M pages", printed by kernel-patches/rfc-6.12);
  // -1 when the kernel does not print it. Model: -1.
  int64_t kernel_write_bios = -1, kernel_write_bio_pages = -1;
  int64_t kernel_read_bios = -1, kernel_read_bio_pages = -1;
  double write_s = -1,
         read_s = -1;  // kernel: its console lines (guest clock); model: modelled; -1 none
  double write_mbps = -1;
  // Model: the seconds of the same image written and read with a bio per
  // run (RFC patches 7-8, hibernate_bio=runs); -1 none. Kernel: -1.
  double write_s_per_run = -1, read_s_per_run = -1;
};

struct KernelSideInfo {
  std::string release;  // uname -r of the guest
  std::string accel, accel_why;
  std::string origin;  // "kernel-x86_64"
  std::string compress;
  bool crc_verified = false;
  uint64_t layout_swapped = 0, layout_not_in_swap = 0, layout_freed = 0;
  double boot_wall_s = 0, resume_wall_s = -1;  // boot_wall_s: every layout boot, a retried one too
  BootRetries retries;                         // layout and resume boots made again (BootRetrying)
  bool resumed_intact = false;
  std::vector<std::string> pm_lines;  // the kernel's "PM: ..." timing lines
  // The image's slots in the order 6.12's writer took them (ImageSlotOrder).
  std::vector<uint64_t> image_slots;
};

struct ModelSideInfo {
  std::string policy;
  uint64_t expected = 0, agree = 0;  // the trace's expect lines
  uint64_t records = 0;
  std::vector<std::string> disagreements;  // the first ones
  // The model's image (base slot source) against the kernel's, slot for
  // slot in the order each writer took its slots (image_slots).
  uint64_t image_expected = 0, image_agree = 0;
  std::vector<std::string> image_disagreements;  // the first ones
  std::string seconds_kind = "modelled (simulated device calibrated on this host)";
  double model_wall_s = 0;  // host seconds for replay + image
};

// The slots of an image in the order swsusp_write() takes them (6.12
// swap_write_page(): map page 0 first, then each stream page, and the next
// map page after every 511th entry), from the chain's stream and map
// dblocks (a whole-disk area: dblock == slot).
std::vector<uint64_t> ImageSlotOrder(const std::vector<uint64_t>& stream,
                                     const std::vector<uint64_t>& map);
// Their text form (`vm hibernate --keep`'s image_slots.txt, the checked-in
// tests/vm/traces/*.slots): a "swaplab-image-slots 1 stream_pages=N" line,
// then one "FIRST COUNT" line per run of consecutive slots, in order.
std::string FormatImageSlots(const std::vector<uint64_t>& slots, uint64_t stream_pages);
// The inverse; -EINVAL naming the line for anything else.
Result<std::vector<uint64_t>> ParseImageSlots(const std::string& text, uint64_t* stream_pages);

// The model's side of a guest run, from its files: the trace (with the
// kernel's placements as expect lines) replayed with `policy` on `cpus`
// CPUs, then an image of the kernel's stream_pages written with the base
// slot source on a simulated device of the same size, compared slot for
// slot with `kernel_image_slots` (ImageSlotOrder; empty: not compared).
// Fills `m` (the kernel's metric names) and `info` (agreement).
// The policy `preset` names with `knobs` applied, validated; -EINVAL
// naming the preset or knob.
Result<alloc::Policy> ModelPolicy(const std::string& preset, const std::vector<std::string>& knobs);
// `source` is the image's slot source (kBase: 6.12's; kFreeClustersSorted:
// hibernate_alloc=clusters).
Status RunModelSide(const std::string& trace_path, const alloc::Policy& policy, int cpus,
                    uint64_t stream_pages, const std::vector<uint64_t>& kernel_image_slots,
                    SideMetrics* m, ModelSideInfo* info,
                    hibernate::SlotSourceKind source = hibernate::SlotSourceKind::kBase);

struct HibernateReport {
  HibernateOptions options;
  uint64_t swap_pages = 0, image_pages_asked = 0;
  SideMetrics kernel, model;
  KernelSideInfo kinfo;
  ModelSideInfo minfo;
  std::string trace;  // the guest's trace (with expect lines)
};

// The static guest agent a boot puts in its initramfs: o.agent, else
// $SWAPLAB_GUEST_AGENT, else the one beside this program or installed with
// it; -ENOENT naming the places tried.
Result<std::string> FindGuestAgent(const VmOptions& o);

// RunHibernate's stages in order, as VmOptions::stage reports them: the
// guest's prepared, booted, laying out its swap, hibernating, writing its
// image (the kernel's "... image data" line), the image read on the host,
// with resume a second boot and the kernel's image load, then the model.
std::vector<const char*> HibernateStages(bool resume);

// Boots the guest (one boot, two with resume), reads the image, replays the
// trace and writes the model's image. -EINTR when interrupted (qemu killed,
// work dir removed); -ENOENT for a missing qemu / kernel / busybox / agent;
// -EIO when the guest did not hibernate (the console's tail in the message).
Result<HibernateReport> RunHibernate(const HibernateOptions& o,
                                     const volatile std::sig_atomic_t* interrupted);

// The parts of a console this layer reads (exposed for tests).
struct ConsoleFacts {
  std::string release;
  double wrote_s = -1, wrote_mbps = -1, read_s = -1, read_mbps = -1;
  uint64_t wrote_kb = 0, read_kb = 0;
  uint64_t swapped = 0, not_in_swap = 0, freed = 0;
  bool resumed_intact = false;
  std::vector<std::string> pm_lines;
  // "PM: Image I/O: N bios, M pages" (kernel-patches/rfc-6.12): the first.
  int64_t io_bios = -1, io_pages = -1;
  // "Unknown kernel command line parameters "..."": what the kernel did not
  // know of its command line (a parameter of a patch it was built without).
  std::string unknown_params;
  // "swaplab-init: swapfile.prefer_nonfull Y|N" (kernel-patches/
  // nonfull-6.12): 1 or 0; -1 when the kernel has no such parameter.
  int prefer_nonfull = -1;
};
ConsoleFacts ParseConsole(const std::string& console);

}  // namespace swaplab::vm
#pragma GCC visibility pop
