// SPDX-License-Identifier: MIT
// `swaplab doctor`: why will this machine not hibernate, or resume from the
// wrong place — read from the running system (or a recorded copy of its
// /proc, /sys and /dev), never changed. One finding per question: can the
// kernel hibernate, where will the image go, will resume find it there, is
// each swap area usable for it, will the image fit.
//
// Where each rule comes from: ../shared/spec/hibernation.md §2.5 (the
// parameters and sysfs files), §2.6 (which area the image is written to:
// swsusp_swap_check / swap_type_of / find_first_swap), §3.1 (the image's
// pages), §4.7 (enough_swap, uncompressed only); kernel/power/main.c
// state_show and kernel/power/hibernate.c hibernation_available (6.12:
// "disk" is listed only when hibernation is available: not with
// nohibernate, not under lockdown's integrity level); kernel/power/snapshot.c
// minimum_image_size (6.12); systemd's hibernate-util.c (the "Not enough
// swap space for hibernation" check: Active(anon) against 98 % of the
// area's free space); Documentation/admin-guide/mm/pagemap.rst (a swapped
// page's entry: bit 62, the type in bits 0-4, the offset in bits 5-54;
// root only); swapon(8) and fstab(5) for /etc/fstab's swap entries.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "swaplab/area/swap_area.h"

namespace swaplab::kernel {

enum class Severity { kOk, kInfo, kWarning, kError };
const char* Name(Severity s);  // "ok", "info", "warning", "error"

struct Finding {
  Severity severity = Severity::kOk;
  std::string check;  // "hibernation", "resume", "swap /swapfile", "image fit", ...
  std::string seen;   // what was seen; input in it is escaped (Printable)
  std::string todo;   // what to do about it; empty for ok and info
};

// One line of /proc/swaps and what doctor learned about the area.
struct DoctorSwap {
  std::string path;  // decoded from /proc/swaps' octal escapes (raw: escape to print)
  std::string type;  // "partition" | "file"
  uint64_t size_kib = 0, used_kib = 0;
  int64_t priority = 0;
  bool zram = false;
  bool deleted = false;  // "(deleted)": a swap file unlinked while in use
  std::string dev;       // "MAJ:MIN" of the block device that holds it; empty: unknown
  // The dblock of the area's page 0 (spec §2.5 resume_offset): 0 for a
  // partition, a file's from its extent map (FIEMAP); unset when unknown.
  std::optional<uint64_t> first_block;
  std::string fs_type;  // a file's filesystem ("ext4", "btrfs", ...)
  uint64_t extents = 0;
  bool holes = false;
  std::string unreadable;  // why the file's extents could not be read
  // The area's header and extents as read (area::InspectArea; not zram);
  // unset when it could not be read.
  std::optional<area::AreaInfo> area;
  // Slots in use seen in the processes' page tables (/proc/PID/pagemap's
  // swap entries, sorted, each once): a lower bound, shmem and the swap
  // cache hide theirs. Empty when none or unread (`in_use_read`).
  std::vector<uint64_t> in_use;
  bool in_use_read = false;
};

// The image placed on the area it would go to, by the model: as the
// running kernel's preset takes slots (one bio per page), and as the RFC
// (seed 001) takes them (whole free clusters in disk order, one bio per
// run). Uncompressed; a compressed image takes fewer slots from the same
// places first.
struct DoctorPrediction {
  std::string allocator;  // "linux-6.12 (the running kernel's preset)", "RFC (seed 001)"
  std::string error;      // why there is no prediction (the image does not fit ...)
  uint64_t pages = 0;     // the image's data pages placed (fewer than asked when shrunk to fit)
  uint64_t slots = 0, runs = 0, write_bios = 0, read_bios = 0;
  double write_s = 0, read_s = 0;     // modelled (simulated device, docs/fidelity.md)
  std::vector<uint64_t> stream, map;  // the image's dblocks (= slots), for --map
};

struct DoctorLayout {
  std::string preset, preset_why;           // the running kernel's preset (alloc::PresetForRelease)
  uint64_t area_pages = 0, free_slots = 0;  // the model's area after the slots in use
  uint64_t in_use_seen = 0, in_use_listed = 0;  // page tables; /proc/swaps' Used
  uint64_t processes = 0;                       // processes whose page tables were read
  bool capped = false;                          // the pagemap reads stopped at their bound
  std::vector<DoctorPrediction> predictions;
};

struct DoctorFacts {
  std::string release;      // /proc/sys/kernel/osrelease
  std::string state, disk;  // /sys/power/state, /sys/power/disk
  bool can_hibernate = false;
  std::string lockdown;    // the selected level of /sys/kernel/security/lockdown
  std::string compressor;  // hibernate.compressor; empty: not shown by this kernel
  bool nocompress = false;
  uint64_t image_size = 0, reserved_size = 0;         // bytes (/sys/power)
  std::string resume_dev;                             // /sys/power/resume, "MAJ:MIN"
  std::optional<uint64_t> resume_offset;              // /sys/power/resume_offset
  std::string cmdline_resume, cmdline_resume_offset;  // as written on /proc/cmdline
  std::string cmdline_resume_dev;                     // resume= resolved to "MAJ:MIN"
  std::vector<DoctorSwap> swaps;
  // /etc/fstab's swap files that are not active now: swapon checks them at
  // boot (a file with holes is refused there, and resume then finds nothing).
  std::vector<DoctorSwap> inactive;
  int target = -1;  // the swaps[] entry the image would be written to; -1 none
  // The image, in pages (spec §3.1): the saveable pages now, the least the
  // kernel can shrink them to, the estimate used (or --image-size's), and
  // T = data + metadata + header pages.
  uint64_t saveable_pages = 0, min_image_pages = 0, image_pages = 0, image_total_pages = 0;
  bool image_from_option = false;
  uint64_t active_anon_kib = 0;
  DoctorLayout layout;  // of the target area; empty when there is none to model
};

struct DoctorReport {
  DoctorFacts facts;
  std::vector<Finding> findings;
  Severity worst = Severity::kOk;
};

struct DoctorOptions {
  // Empty: the running system. Otherwise a directory holding a copy of
  // another machine's proc/, sys/ and dev/ (its swap files, when given,
  // at their paths under it): every path doctor reads is taken under it.
  std::string root;
  uint64_t image_bytes = 0;  // the image to fit; 0: estimated from /proc/meminfo
  bool layout = true;        // read the page tables and model the image's layout
};

// Never fails: what cannot be read becomes a finding. Reads at most 1 MiB
// of any file and opens only regular files (a FIFO is not waited on).
DoctorReport RunDoctor(const DoctorOptions& o);

// The parts, for tests. /proc/swaps (its header line, octal escapes \040
// \011 \012 \134 decoded); a line that does not parse is skipped and named
// in `bad` (escaped).
std::vector<DoctorSwap> ParseProcSwaps(const std::string& text, std::vector<std::string>* bad);
// The kernel command line's parameters in order: key and value ("" when
// none), double quotes around a value removed.
std::vector<std::pair<std::string, std::string>> ParseCmdline(const std::string& text);

}  // namespace swaplab::kernel
#pragma GCC visibility pop
