// SPDX-License-Identifier: MIT
// swaplab doctor's layout: the slots the processes hold, read from their
// page tables, and the image placed by the model (doctor_layout.h).
#include "doctor_layout.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>
#include <string_view>

#include "doctor_read.h"
#include "swaplab/alloc/preset_for_release.h"
#include "swaplab/alloc/printable.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/hibernate/image_format.h"
#include "swaplab/hibernate/image_session.h"
#include "swaplab/workload/generators.h"
#include "swaplab/workload/image_step.h"

namespace swaplab::kernel::internal {

namespace {

constexpr size_t kMaxSmaps = size_t{64} << 20;
constexpr uint64_t kMaxPagemapEntries = uint64_t{1} << 26;
constexpr uint64_t kPagemapChunk = 4096;  // entries per read
constexpr uint64_t kOffsetMask = (uint64_t{1} << 50) - 1;
// Runs past which the image is scattered: the issue's "written in
// thousands of runs and takes a minute" (a fresh area takes a handful).
constexpr uint64_t kManyRuns = 1000;

// A /proc file of at most `cap` bytes; "" when it cannot be read or is longer.
std::string ReadBounded(const std::string& path, size_t cap) {
  std::string why;
  return ReadRegularFile(path, cap, &why).value_or("");
}

// VmSwap of /proc/PID/status: whether the process has swap.
bool HasSwap(const std::string& status) {
  const auto f = ParseKibFields(status);
  const auto it = f.find("VmSwap");
  return it != f.end() && it->second > 0;
}

struct Range {
  uint64_t start = 0, end = 0;  // page numbers, [start, end)
};

// The mappings of /proc/PID/smaps whose "Swap:" is not 0 kB.
std::vector<Range> SwappedMappings(const std::string& smaps) {
  std::vector<Range> out;
  std::optional<Range> cur;
  std::istringstream in(smaps);
  for (std::string line; std::getline(in, line);) {
    const auto dash = line.find('-'), space = line.find(' ');
    std::optional<uint64_t> a, b;
    if (dash != std::string::npos && space != std::string::npos && dash < space &&
        (a = ParseNumber<uint64_t>(std::string_view(line).substr(0, dash), 16)) &&
        (b = ParseNumber<uint64_t>(std::string_view(line).substr(dash + 1, space - dash - 1),
                                   16))) {
      cur.reset();
      if (*b > *a)
        cur = Range{*a / alloc::kPageSize, (*b + alloc::kPageSize - 1) / alloc::kPageSize};
      continue;
    }
    if (!cur || line.rfind("Swap:", 0) != 0) continue;
    const auto swap = ParseKibFields(line);
    if (swap.begin() != swap.end() && swap.begin()->second > 0) out.push_back(*cur);
    cur.reset();
  }
  return out;
}

// Reads the entries of `r` from an open pagemap into `out`; false when the
// bound of entries was reached.
bool ReadMapping(int fd, Range r, SwappedSlots& out, uint64_t* budget) {
  std::vector<uint64_t> buf(kPagemapChunk);
  for (uint64_t p = r.start; p < r.end;) {
    const uint64_t n = std::min({kPagemapChunk, r.end - p, *budget});
    if (n == 0) return false;
    const ssize_t got =
        ::pread(fd, buf.data(), n * sizeof(uint64_t), static_cast<off_t>(p * sizeof(uint64_t)));
    if (got <= 0) return true;  // the process went away, or the mapping did
    const uint64_t entries = static_cast<uint64_t>(got) / sizeof(uint64_t);
    for (uint64_t i = 0; i < entries; ++i) {
      uint32_t type;
      uint64_t offset;
      if (PagemapSwapEntry(buf[i], &type, &offset) && type < out.by_type.size())
        out.by_type[type].push_back(offset);
    }
    *budget -= entries;
    p += entries;
    if (entries < n) return true;
  }
  return true;
}

// One process's swapped entries; false when the bound was reached.
bool ReadProcess(const std::string& dir, SwappedSlots& out, uint64_t* budget) {
  if (!HasSwap(ReadBounded(dir + "/status", 1 << 20))) return true;
  const std::vector<Range> maps = SwappedMappings(ReadBounded(dir + "/smaps", kMaxSmaps));
  if (maps.empty()) return true;
  const int fd = ::open((dir + "/pagemap").c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return true;
  ++out.processes;
  bool more = true;
  for (const Range& r : maps)
    if (!(more = ReadMapping(fd, r, out, budget))) break;
  ::close(fd);
  return more;
}

// The slots of the free clusters: what the RFC's image may take (its slot
// source claims whole free clusters; seed 001, spec §10.2).
uint64_t FreeClusterSlots(const alloc::SwapSystem& sys, int type) {
  auto dev = sys.Device(type);
  if (!dev.ok()) return 0;
  uint64_t n = 0;
  for (uint64_t i = 0; i < dev->nr_clusters; ++i) {
    auto c = sys.Cluster(type, i);
    if (c.ok() && c->count == 0 && c->flag == alloc::ClusterFlag::kFree) n += sys.cluster_size();
  }
  return n;
}

}  // namespace

uint64_t LargestImage(uint64_t free_slots) {
  using hibernate::kPagesForIo;
  if (free_slots <= kPagesForIo + 4) return 0;
  uint64_t lo = 0, hi = free_slots - kPagesForIo - 4;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    const uint64_t t = hibernate::StreamPages(mid);
    if (t + kPagesForIo < free_slots - 1 && t + hibernate::MapPages(t) <= free_slots)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

bool PagemapSwapEntry(uint64_t entry, uint32_t* type, uint64_t* offset) {
  if (!(entry >> 62 & 1) || (entry >> 63 & 1)) return false;
  *type = static_cast<uint32_t>(entry & 0x1f);
  *offset = entry >> 5 & kOffsetMask;
  return true;
}

SwappedSlots ReadSwappedSlots(const std::string& root, size_t types) {
  SwappedSlots out;
  out.by_type.resize(std::min<size_t>(types, 32));
  const std::string proc = root + "/proc";
  DIR* d = ::opendir(proc.c_str());
  if (d == nullptr) return out;
  uint64_t budget = kMaxPagemapEntries;
  for (dirent* e; (e = ::readdir(d)) != nullptr;) {
    if (!ParseNumber<uint64_t>(e->d_name)) continue;
    if (!ReadProcess(proc + "/" + e->d_name, out, &budget)) {
      out.capped = true;
      break;
    }
  }
  ::closedir(d);
  for (auto& v : out.by_type) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  return out;
}

DoctorPrediction PredictImage(const area::AreaInfo& info, const std::vector<uint64_t>& in_use,
                              const alloc::Policy& policy, uint64_t image_pages, bool rfc,
                              bool shrink) {
  DoctorPrediction p;
  p.allocator = rfc ? "the RFC (seed 001: whole free clusters in disk order, a bio per run)"
                    : policy.name + " (the running kernel's preset, a bio per page)";
  auto model = workload::RebuildArea(info, in_use, policy);
  if (!model.ok()) {
    p.error = model.status().message();
    return p;
  }
  alloc::SwapSystem& sys = *model->sys;
  const int type = model->type;
  auto dev = sys.Device(type);
  if (!dev.ok()) {
    p.error = dev.status().message();
    return p;
  }
  if (shrink)
    image_pages = std::min(
        image_pages, LargestImage(rfc ? FreeClusterSlots(sys, type) : dev->pages - dev->inuse));
  p.pages = image_pages;
  auto engine = workload::MakeSimulatedSwapDevice(model->pages, true);
  workload::ImageSpec spec;
  spec.pages = image_pages;
  spec.source =
      rfc ? hibernate::SlotSourceKind::kFreeClustersSorted : hibernate::SlotSourceKind::kBase;
  spec.batch.mode = rfc ? hibernate::BatchMode::kPerRun : hibernate::BatchMode::kPerPage;
  // As bio_alloc() sizes the RFC's bios (kernel-patches/rfc-6.12, spec §6.2).
  if (rfc) spec.batch.capacity = hibernate::CapacityMode::kSlab;
  spec.structural = true;
  auto r = workload::WriteReadImage(sys, type, *engine, spec);
  if (!r.ok()) {
    p.error = r.status().message();
    return p;
  }
  p.slots = r->slots;
  p.runs = r->runs;
  p.write_bios = r->write_bios;
  p.read_bios = r->read_bios;
  p.write_s = r->write_s;
  p.read_s = r->read_s;
  p.stream = std::move(r->stream_dblocks);
  p.map = std::move(r->map_dblocks);
  return p;
}

namespace {

std::string Shown(const std::string& s) { return Printable(s, 200); }

// Type i's slots go to /proc/swaps' line i: the kernel lists the areas in
// type order (swap_start(), mm/swapfile.c). A type freed by a swapoff
// leaves a gap the lines do not show; an offset past its line's area
// shows that, and then that line gets none.
void AssignInUse(DoctorFacts& f, const SwappedSlots& seen) {
  for (size_t i = 0; i < f.swaps.size() && i < seen.by_type.size(); ++i) {
    DoctorSwap& s = f.swaps[i];
    if (!s.area) continue;
    const auto& slots = seen.by_type[i];
    s.in_use_read = slots.empty() || slots.back() < area::AreaPages(*s.area);
    if (s.in_use_read) s.in_use = slots;
  }
}

std::string PredictionText(const DoctorPrediction& p, uint64_t image_pages) {
  return fmt::format(
      "{}: the image's {} slots{} in {} run{}, {} write bio{}: modelled {:.2f} s to write, "
      "{:.2f} s to read",
      p.allocator, p.slots,
      p.pages < image_pages ? fmt::format(" (its first {} pages)", p.pages) : "", p.runs,
      p.runs == 1 ? "" : "s", p.write_bios, p.write_bios == 1 ? "" : "s", p.write_s, p.read_s);
}

}  // namespace

std::vector<Finding> LayoutFindings(DoctorFacts& f, const std::string& root) {
  std::vector<Finding> out;
  if (f.target < 0 || f.swaps[f.target].zram || !f.swaps[f.target].area) return out;
  const SwappedSlots seen = ReadSwappedSlots(root, f.swaps.size());
  AssignInUse(f, seen);
  const DoctorSwap& t = f.swaps[f.target];
  DoctorLayout& l = f.layout;
  l.processes = seen.processes;
  l.capped = seen.capped;
  l.in_use_seen = t.in_use.size();
  l.in_use_listed = t.used_kib / 4;
  l.area_pages = area::AreaPages(*t.area);
  const uint64_t taken = 1 + t.area->header.v1.bad_pages.size() + t.in_use.size();
  l.free_slots = l.area_pages > taken ? l.area_pages - taken : 0;
  out.push_back(
      {Severity::kInfo, "layout",
       fmt::format("{}: {} slots, {} free as far as the page tables show: {} in use seen in {} "
                   "process{}' page tables{}, /proc/swaps counts {}{}",
                   Shown(t.path), l.area_pages, l.free_slots, l.in_use_seen, l.processes,
                   l.processes == 1 ? "" : "es",
                   !t.in_use_read ? " (not matched to this area: its offsets pass its end)"
                   : l.capped     ? " (the reads stopped at their bound)"
                                  : "",
                   l.in_use_listed,
                   l.in_use_seen < l.in_use_listed
                       ? " (shmem, the swap cache and the kernel's own hide the rest: the free "
                         "slots are an upper bound, the layout below a best case)"
                       : ""),
       ""});
  if (f.image_pages == 0) return out;
  l.preset = alloc::PresetForRelease(f.release, &l.preset_why);
  auto policy = alloc::Policy::Preset(l.preset);
  if (!policy.ok()) return out;
  // A compressed image that does not fit uncompressed: the model places
  // the largest uncompressed image that fits, the slots the compressed
  // stream would take first (the model does not compress, docs/fidelity.md).
  for (bool rfc : {false, true}) {
    DoctorPrediction p =
        PredictImage(*t.area, t.in_use, *policy, f.image_pages, rfc, !f.nocompress);
    if (!rfc && p.error.empty() && p.pages < f.image_pages)
      out.push_back({Severity::kInfo, "layout",
                     fmt::format("the image of {} pages does not fit uncompressed: the layout "
                                 "below is of its first {} pages, as far as the compressed "
                                 "stream gets when it compresses {:.1f}:1",
                                 f.image_pages, p.pages,
                                 p.pages ? static_cast<double>(f.image_pages) / p.pages : 0.0),
                     ""});
    if (!p.error.empty())
      out.push_back({Severity::kInfo, "layout",
                     p.allocator + ": the model cannot place the image: " + Shown(p.error), ""});
    else if (!rfc && p.runs >= kManyRuns)
      out.push_back({Severity::kWarning, "layout", PredictionText(p, f.image_pages),
                     "the image is scattered over the area's free slots: a swapoff and swapon "
                     "of the area just before hibernating (with the memory to take its pages "
                     "back) leaves it whole"});
    else
      out.push_back({Severity::kInfo, "layout", PredictionText(p, f.image_pages), ""});
    l.predictions.push_back(std::move(p));
  }
  if (!l.preset_why.empty())
    out.push_back(
        {Severity::kInfo, "layout", "preset " + l.preset + ": " + Shown(l.preset_why), ""});
  return out;
}

}  // namespace swaplab::kernel::internal
