// SPDX-License-Identifier: MIT
// `swaplab kernel run` (kernel_run.h): the trace against the running kernel.
#include "swaplab/kernel/kernel_run.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "interference.h"
#include "run_session.h"
#include "swaplab/alloc/preset_for_release.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/area/output_file.h"
#include "swaplab/kernel/host.h"
#include "swaplab/kernel/worker.h"
#include "swaplab/workload/trace.h"

namespace swaplab::kernel {

using workload::TraceOp;
using workload::TraceRecord;

namespace {

constexpr uint64_t kPage = kRunPage;
constexpr size_t kKeepAnomalies = 50;
// /proc/kpageflags bits (Documentation/admin-guide/mm/pagemap.rst).
constexpr int kKpfWriteback = 8, kKpfSwapCache = 13, kKpfCompoundHead = 15, kKpfCompoundTail = 16;

Status At(const std::string& where, const std::string& msg, int code = -EINVAL) {
  return Status(code, where + ": " + msg);
}

// Whether the pages a fault gave are one folio of their number: all
// present at consecutive PFNs, a compound head and its tails (or, for one
// page, neither) in /proc/kpageflags.
bool OneFolio(const SwapOutPages& s) {
  const uint64_t n = s.before.size();
  for (uint64_t i = 0; i < n; ++i) {
    if (!s.before[i].present || s.before[i].pfn != s.before[0].pfn + i) return false;
    const bool head = (s.flags[i] >> kKpfCompoundHead) & 1,
               tail = (s.flags[i] >> kKpfCompoundTail) & 1;
    if (n == 1 ? (head || tail) : (i == 0 ? !head : !tail)) return false;
  }
  return true;
}

// Records a run does nothing for: what another run saw, replaced by what
// this one sees.
bool NothingToDo(TraceOp op) {
  return op == TraceOp::kExpect || op == TraceOp::kForeign || op == TraceOp::kForeignFree ||
         op == TraceOp::kScanBase || op == TraceOp::kCpus;
}

// Most pages one read of the worker's pagemap covers (512 KiB of it), and
// the most pages between two live folios it reads through: each folio is
// a mapping of its own, freed ones stay, and the kernel walks every
// mapping a read crosses.
constexpr uint64_t kMaxPagemapRead = uint64_t{1} << 16, kMaxPagemapGap = 16;

// Most alloc records whose swap-outs go to the worker in one go.
constexpr size_t kMaxAllocBatch = 64;

struct LivePage {
  bool swapped = false;    // the PTE holds a swap entry (as far as the trace knows)
  bool in_memory = false;  // read back in
  int type = -1;
  uint64_t offset = 0;
};
struct LiveFolio {
  uint64_t addr = 0;
  int order = 0, cpu = 0;
  std::vector<LivePage> pages;
};

class Runner {
 public:
  Runner(const RunOptions& o, const volatile std::sig_atomic_t* intr) : o_(o), intr_(intr) {}
  Result<RunReport> Run();

 private:
  Status Apply(const TraceRecord& r);
  Status DoSwapon(const TraceRecord& r, const std::string& where);
  // The alloc records among `recs`: their swap-outs are sent to the worker
  // in one go, then each one's result is read and written down in order
  // (a batch of one for a lone alloc). The worker runs them one after the
  // other as it would one at a time: the kernel sees the same calls.
  Status DoAllocs(std::span<const TraceRecord> recs);
  Status FinishAlloc(const TraceRecord& r, LiveFolio f, const SwapOutPages& s);
  // How many records from recs[i] the run takes in one step: a batch of
  // allocs of new folios (with the records a run does nothing for between
  // them, ending on an alloc) for DoAllocs, or 1.
  size_t Step(const std::vector<TraceRecord>& recs, size_t i) const;
  std::string Where(const TraceRecord& r) const { return o_.trace + ":" + std::to_string(r.line); }
  Status DoDropCache(const TraceRecord& r, const std::string& where);
  Status Verify(uint64_t line);
  // Calls fn for every live folio, in address order, with its pages as
  // /proc/PID/pagemap shows them now: one read for neighbours (at most
  // kMaxPagemapRead pages, gaps of at most kMaxPagemapGap), not one each
  // (a drop-cache verifies them all).
  Status ForEachLiveFolio(
      const std::function<void(uint64_t, LiveFolio&, std::span<const PageState>)>&
          fn);  // compares every live page with pagemap
  Status DoCache(const TraceRecord& r, LiveFolio& f, uint64_t first, uint64_t count,
                 const std::string& where);
  // Swapped pages of the worker outside the trace's folios (its own memory:
  // stack, heap, sanitizer shadow), and the first such mapping.
  uint64_t WorkerOwnSwapped(std::string* first) const {
    std::ifstream maps("/proc/" + std::to_string(s_.worker->pid()) + "/maps");
    std::string line;
    uint64_t count = 0;
    while (std::getline(maps, line)) {
      uint64_t lo = 0, hi = 0;
      if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) != 2 || hi <= lo) continue;
      if (lo >= s_.worker->base() && hi <= cursor_ + kPage) continue;  // trace folios
      if (hi - lo >
          (uint64_t{1} << 30)) {      // sanitizer shadow and allocator regions: too big to walk
        count += SmapsSwapPages(lo);  // the kernel's own count of the mapping's swapped pages
        continue;
      }
      for (uint64_t a = lo; a < hi; a += 512 * kPage) {
        const uint64_t n = std::min<uint64_t>(512, (hi - a) / kPage);
        auto pages = s_.worker->Pages(a, n);
        if (!pages.ok()) break;
        for (uint64_t i = 0; i < n; ++i) {
          if (!(*pages)[i].swapped || !type_to_dev_.count((*pages)[i].swap_type)) continue;
          if (count++ == 0) *first = fmt_hex(a + i * kPage) + " in " + line;
        }
      }
    }
    return count;
  }
  // "Swap:" of the worker's mapping that starts at `lo`, in pages
  // (/proc/PID/smaps): for mappings of terabytes (ASan's allocator) a page
  // walk is out of the question. Counts swap on any device: only ours is
  // written during a run but a host's own swap could be too.
  uint64_t SmapsSwapPages(uint64_t lo) const {
    std::ifstream smaps("/proc/" + std::to_string(s_.worker->pid()) + "/smaps");
    std::string line;
    bool in = false;
    while (std::getline(smaps, line)) {
      uint64_t a = 0, b = 0;
      if (std::sscanf(line.c_str(), "%lx-%lx ", &a, &b) == 2 &&
          line.find(' ') != std::string::npos && line.find(':') > line.find(' ')) {
        in = a == lo;
        continue;
      }
      unsigned long kb = 0;
      if (in && std::sscanf(line.c_str(), "Swap: %lu kB", &kb) == 1) return kb / (kPage / 1024);
    }
    return 0;
  }
  static std::string fmt_hex(uint64_t v) {
    char b[32];
    std::snprintf(b, sizeof b, "0x%lx", static_cast<unsigned long>(v));
    return b;
  }
  // A record of the written trace: a line of the output and a record the
  // watch's model replays.
  void Emit(TraceRecord r) {
    r.line = out_.size() + 1;
    out_.push_back(workload::FormatRecord(r));
    written_.push_back(std::move(r));
  }
  // Slots in use per trace device (/proc/swaps Used of each area that is on).
  Result<std::map<uint64_t, uint64_t>> UsedByDev() const;
  // What slot `offset` of trace device `dev` holds (the watch's probe).
  SlotContent Probe(uint64_t dev, uint64_t offset) const;
  // Compares the kernel's slots in use with the watch's model after the
  // record `r` (whose output starts at out_[out0], written_[w0]) and
  // explains a difference (interference.h).
  Status Watch(const TraceRecord& r, size_t out0, size_t w0);
  // One look of the watch: the record, where its output starts (out_[out0],
  // written_[w0]), and the kernel's slots in use per dev less the
  // interference not explained.
  struct WatchPoint {
    const TraceRecord& r;
    size_t out0, w0;
    std::function<uint64_t(uint64_t)> used_now;
  };
  // A difference of `diff` slots on `dev` between the kernel and the
  // watch's model: explained if it can be, and reported.
  void NoteInterference(const WatchPoint& at, uint64_t dev, int64_t diff);
  void ExplainInterference(const WatchPoint& at, uint64_t dev, int64_t diff, Interference* it);
  // The `foreign` records of an explained interference, after a comment,
  // into the written trace where the slots were taken.
  void WriteForeign(const WatchPoint& at, int64_t diff, bool before_record,
                    const std::vector<TraceRecord>& recs, const std::string& how);
  void ObserveScanBase(const TraceRecord& r, size_t out0, size_t w0,
                       const std::function<uint64_t(uint64_t)>& kernel_used);
  void Warnings();  // other swap activity before the first record
  // The counters read before the first record, compared at the end.
  struct Baseline {
    MthpStats mthp;
    Result<uint64_t> pswpout, pgdeactivate;
  };
  using Clock = std::chrono::steady_clock;
  Status ReadTrace(std::vector<TraceRecord>* recs) const;
  // The watch's model for this kernel, and the warnings of a run that is
  // not alone or has no exact model.
  void StartWatch(const Baseline& base, int machine_cpus);
  void WriteHeader(int machine_cpus);
  Status ApplyRecords(const std::vector<TraceRecord>& recs, Clock::time_point t0);
  // Why the run stops before record `r` (interrupted, out of time), or Ok.
  Status CheckStop(const TraceRecord& r, Clock::time_point t0) const;
  Status FinishRecords(const Baseline& base);
  void CountSwapouts(const Baseline& base);
  void CountUnexplainedSlots();
  // Slots the watch's model holds after the same final reclaim, if it can
  // replay it.
  std::optional<uint64_t> ModelUsedAfterFinalReclaim();
  Status WriteOut() const;
  void Note(uint64_t line, uint64_t folio, std::string what) {
    ++rep_.anomalies_total;
    if (rep_.anomalies.size() < kKeepAnomalies)
      rep_.anomalies.push_back({line, folio, std::move(what)});
  }
  // Waits until the write-out of every folio paged out since the last wait
  // has finished: a folio under writeback cannot leave the swap cache
  // (folio_swapcache_freeable), so a `free` right after would keep its slots.
  // Precise per folio: the writeback bit of its pages in /proc/kpageflags
  // (the PFNs were read before the page-out; the folio keeps them in the
  // swap cache). The global nr_writeback is only a fallback: its per-CPU
  // deltas can hide pages in flight, and other writers keep it busy.
  void WaitWriteback(uint64_t line) {
    if (pending_pfns_.empty()) return;
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(o_.writeback_timeout_ms);
    for (;;) {
      bool busy = false;
      for (const auto& [pfn, n] : pending_pfns_) {
        auto flags = Worker::PageFlags(pfn, n);
        if (!flags.ok()) continue;
        for (uint64_t v : *flags) busy |= (v >> kKpfWriteback) & 1;
        if (busy) break;
      }
      if (!busy) break;
      if (std::chrono::steady_clock::now() > until) {
        Note(line, 0,
             "a paged-out folio was still under writeback after " +
                 std::to_string(o_.writeback_timeout_ms) + " ms");
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    pending_pfns_.clear();
    // The end of a write-out rotated each folio into a per-CPU batch, which
    // holds a reference to it (folio_rotate_reclaimable): drained, so that a
    // `free` that takes a folio out of the swap cache frees it at once.
    // Otherwise, on whichever CPU completed the I/O and has not drained
    // since, the folio lives on on the LRU out of the swap cache, and the
    // next drop-cache's reclaim gives it a slot (docs/fidelity.md).
    if (Status st = s_.worker->DrainLru(); !st.ok()) Note(line, 0, st.ToString());
  }

  const RunOptions& o_;
  const volatile std::sig_atomic_t* intr_;
  RunReport rep_;
  Session s_;
  std::vector<std::string> out_;
  std::map<int, uint64_t> type_to_dev_;
  std::map<uint64_t, size_t> dev_to_area_;
  std::unordered_map<uint64_t, LiveFolio> live_;
  uint64_t cursor_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>>
      pending_pfns_;                         // (first PFN, pages) paged out, maybe under writeback
  std::vector<TraceRecord> written_;         // the output's records, in order
  std::unique_ptr<ForeignWatch> watch_;      // null: not watching
  std::map<uint64_t, int64_t> unaccounted_;  // per dev: slots of interference not explained
  uint64_t explained_ = 0;                   // Explain calls so far
};

constexpr size_t kKeepInterference = 50;
constexpr uint64_t kMaxExplains = 64;  // beyond: reported, not explained (each replays the trace)

Result<std::map<uint64_t, uint64_t>> Runner::UsedByDev() const {
  auto swaps = ReadProcSwaps();
  if (!swaps.ok()) return swaps.status();
  std::map<uint64_t, uint64_t> used;
  for (const auto& [dev, i] : dev_to_area_) {
    const KernelArea& a = *s_.areas[i];
    for (const auto& sw : *swaps)
      if (sw.filename == a.swap_path()) used[dev] = sw.used_kb / (kPage / 1024);
  }
  return used;
}

SlotContent Runner::Probe(uint64_t dev, uint64_t offset) const {
  auto a = dev_to_area_.find(dev);
  if (a == dev_to_area_.end()) return SlotContent::kUnreadable;
  auto bytes = s_.areas[a->second]->ReadSlot(offset);
  if (!bytes.ok()) return SlotContent::kUnreadable;
  uint64_t head = 0;
  std::memcpy(&head, bytes->data(), sizeof head);
  if (head == kTracePageMagic) return SlotContent::kTrace;
  const bool zero = std::all_of(bytes->begin(), bytes->end(), [](uint8_t b) { return b == 0; });
  return zero ? SlotContent::kZero : SlotContent::kOther;
}

// An alloc the watch's model placed elsewhere than the kernel, on an SSD
// whose scan starts at a random per-CPU base (6.1): the base the kernel
// drew is read off where its first page went, and written before the record
// as a `scan-base` record (the watch's model already has it).
void Runner::ObserveScanBase(const TraceRecord& r, size_t out0, size_t w0,
                             const std::function<uint64_t(uint64_t)>& kernel_used) {
  const TraceRecord* first = nullptr;
  for (size_t i = w0; i < written_.size() && !first; ++i)
    if (written_[i].op == TraceOp::kExpect && written_[i].folio == r.folio) first = &written_[i];
  if (!first) return;
  auto a = dev_to_area_.find(first->dev);
  if (a == dev_to_area_.end() || !s_.areas[a->second]->ssd()) return;
  // The kernel's count after the record tells bases that put the first
  // page in the same slot apart: the slot cache's batch from there differs.
  auto sb = watch_->ExplainScanBase(written_, w0, first->dev, r.cpu, first->offset, kernel_used);
  if (!sb.ok()) return;
  out_.insert(
      out_.begin() + static_cast<ptrdiff_t>(out0),
      {"# kernel run: the kernel's scan base for CPU " + std::to_string(r.cpu) + " on dev " +
           std::to_string(sb->dev) + ", read off line " + std::to_string(r.line) + "'s placement",
       workload::FormatRecord(*sb)});
  written_.insert(written_.begin() + static_cast<ptrdiff_t>(w0), *sb);
  ++rep_.scan_bases;
}

Status Runner::Watch(const TraceRecord& r, size_t out0, size_t w0) {
  if (!watch_) return Status::Ok();
  const uint64_t mismatches_before = watch_->model().Mismatches();
  if (Status st = watch_->model().FeedTo(written_, written_.size()); !st.ok()) {
    Note(r.line, 0,
         "the interference watch stopped: its model cannot replay the written trace (" +
             st.ToString() + ")");
    watch_.reset();
    return Status::Ok();
  }
  auto used = UsedByDev();
  if (!used.ok()) return used.status();
  // The kernel's slots in use per dev, less the interference not explained.
  const WatchPoint at{r, out0, w0, [&](uint64_t d) {
                        auto u = used->find(d);
                        return (u == used->end() ? 0 : u->second) -
                               static_cast<uint64_t>(unaccounted_[d]);
                      }};
  // Each attempt replays the written trace: bounded like Explain's.
  if (r.op == TraceOp::kAlloc && rep_.watch_exact && watch_->policy().ssd_swap_map_scan &&
      watch_->model().Mismatches() != mismatches_before && explained_ < kMaxExplains) {
    ++explained_;
    ObserveScanBase(r, out0, w0, at.used_now);
  }
  for (const auto& [dev, kernel_used] : *used) {
    const int64_t diff = static_cast<int64_t>(kernel_used) -
                         static_cast<int64_t>(watch_->model().InUse(dev)) - unaccounted_[dev];
    if (diff != 0) NoteInterference(at, dev, diff);
  }
  return Status::Ok();
}

void Runner::NoteInterference(const WatchPoint& at, uint64_t dev, int64_t diff) {
  Interference it;
  it.line = at.r.line;
  it.dev = dev;
  it.slots = diff;
  if (!rep_.watch_exact) {
    it.how = "the model (" + rep_.watch_policy +
             ", not this kernel's own preset) counts slots in use differently: not explained";
  } else if (diff < 0) {
    it.how =
        "slots given back that the trace did not free (another process's pages swapped "
        "in, or it exited): which ones cannot be told";
  } else if (!o_.account_foreign) {
    it.how = "not accounted (account_foreign off)";
  } else if (explained_ >= kMaxExplains) {
    it.how = "not accounted: more than " + std::to_string(kMaxExplains) + " points of interference";
  } else {
    ExplainInterference(at, dev, diff, &it);
  }
  if (!it.accounted) {
    unaccounted_[dev] += diff;
    ++rep_.interference_unaccounted;
  }
  ++rep_.interference_total;
  if (rep_.interference.size() < kKeepInterference) rep_.interference.push_back(std::move(it));
}

void Runner::ExplainInterference(const WatchPoint& at, uint64_t dev, int64_t diff,
                                 Interference* it) {
  ++explained_;
  // The other process's pages are being written: their bytes on the area
  // tell its slots from free ones.
  std::vector<std::string> inflight;
  for (const auto& a : s_.areas)
    if (!a->inflight().empty()) inflight.push_back(a->inflight());
  (void)WaitForWriteback(o_.writeback_timeout_ms, inflight);
  auto e =
      watch_->Explain(written_, at.w0, at.r.op == TraceOp::kAlloc, dev, static_cast<uint64_t>(diff),
                      at.used_now, [this](uint64_t d, uint64_t off) { return Probe(d, off); });
  if (!e.ok()) {
    it->how = "not accounted: " + e.status().message();
    return;
  }
  it->accounted = true;
  it->cpu = e->cpu;
  it->before_record = e->before_record;
  it->content_other = e->content_other;
  const auto recs = ForeignRecords(dev, e->cpu, e->offsets);
  for (const auto& f : recs) it->runs.emplace_back(f.offset, *f.n);
  it->how = "CPU " + std::to_string(e->cpu) + "'s next slots in the model, " +
            (e->before_record ? "before" : "after") + " the record's own pages; " +
            std::to_string(e->content_other) + " of " + std::to_string(e->offsets.size()) +
            " hold another process's data" +
            (e->ambiguous ? " (another CPU's slots fit as well: placed by the first CPU)" : "");
  WriteForeign(at, diff, e->before_record, recs, it->how);
  rep_.foreign_slots += e->offsets.size();
}

void Runner::WriteForeign(const WatchPoint& at, int64_t diff, bool before_record,
                          const std::vector<TraceRecord>& recs, const std::string& how) {
  // Into the written trace where the slots were taken: a comment,
  // then the records (whose effect the watch's model already has).
  const size_t at_out = before_record ? at.out0 : out_.size();
  const size_t at_w = before_record ? at.w0 : written_.size();
  std::vector<std::string> lines{"# kernel run: " + std::to_string(diff) +
                                 " slots taken outside the trace, seen after line " +
                                 std::to_string(at.r.line) + " (" + how + ")"};
  for (const auto& f : recs) lines.push_back(workload::FormatRecord(f));
  out_.insert(out_.begin() + static_cast<ptrdiff_t>(at_out), lines.begin(), lines.end());
  written_.insert(written_.begin() + static_cast<ptrdiff_t>(at_w), recs.begin(), recs.end());
  watch_->model().Inserted(recs.size());
}

// Swap activity the run is not alone with: a DAMON kdamond running a
// pageout scheme (it pages out any process's cold memory into the run's
// area, the only one or the one of the highest priority), pswpout moving
// before the first record.
void Runner::Warnings() {
  const std::string root = "/sys/kernel/mm/damon/admin/kdamonds";
  for (int k = 0; k < 64; ++k) {
    const std::string kd = root + "/" + std::to_string(k);
    auto state = ReadSmallFile(kd + "/state");
    if (!state.ok()) break;
    if (state->rfind("on", 0) != 0) continue;
    bool pageout = false;
    for (int c = 0; c < 16 && !pageout; ++c)
      for (int sc = 0; sc < 64 && !pageout; ++sc) {
        auto action = ReadSmallFile(kd + "/contexts/" + std::to_string(c) + "/schemes/" +
                                    std::to_string(sc) + "/action");
        if (!action.ok()) break;
        pageout = action->rfind("pageout", 0) == 0;
      }
    if (!pageout) continue;
    auto pid = ReadSmallFile(kd + "/pid");
    std::string p = pid.ok() ? *pid : "?";
    while (!p.empty() && (p.back() == '\n' || p.back() == ' ')) p.pop_back();
    rep_.warnings.push_back("a DAMON kdamond (" + kd + ", pid " + p +
                            ") runs a pageout scheme: it may swap other processes' cold pages "
                            "into this run's area; such slots are reported as interference");
  }
}

Status Runner::DoSwapon(const TraceRecord& r, const std::string& where) {
  if (dev_to_area_.count(r.dev))
    return At(where, "dev " + std::to_string(r.dev) + " is already on");
  AreaSpec spec;
  spec.kind = o_.device;
  spec.pages = o_.size_pages.value_or(r.pages);
  spec.prio = r.prio.value_or(o_.prio);
  spec.index = static_cast<int>(s_.areas.size());
  auto a = KernelArea::Create(spec);
  if (!a.ok()) return At(where, a.status().ToString(), a.status().code());
  std::unique_ptr<KernelArea> area = std::move(a).value();
  auto swaps = ReadProcSwaps();
  if (!swaps.ok()) return swaps.status();
  int type = -1;
  uint64_t kernel_pages = 0;  // the usable pages the kernel counts (no header)
  for (const auto& sw : *swaps)
    if (sw.filename == area->swap_path()) {
      type = sw.index;
      kernel_pages = sw.size_kb / (kPage / 1024);
    }
  if (type < 0) return At(where, area->swap_path() + " is not in /proc/swaps after swapon");
  // A swap file whose blocks on disk do not all start on a page (a
  // filesystem block smaller than a page) loses the pages that straddle
  // them: the kernel packs the rest (iomap_swapfile_add_extent()), so its
  // area is that much shorter, and the model's must be too.
  uint64_t pages = spec.pages;
  if (kernel_pages > 0 && kernel_pages + 1 < spec.pages) {
    pages = kernel_pages + 1;
    rep_.warnings.push_back(
        area->swap_path() + ": the kernel uses " + std::to_string(kernel_pages) + " of its " +
        std::to_string(spec.pages - 1) +
        " pages (the file's blocks on disk are not all page-aligned: a filesystem block "
        "smaller than a page); the written trace gives the model an area of " +
        std::to_string(pages) + " pages, and slots are probed at the wrong file offsets");
  }
  type_to_dev_[type] = r.dev;
  dev_to_area_[r.dev] = s_.areas.size();
  rep_.areas.push_back({r.dev, area->swap_path(), spec.kind, spec.pages, spec.prio, area->ssd(),
                        area->blkdev(), type, area->note()});
  TraceRecord w = r;
  w.pages = pages;
  w.ssd = area->ssd();
  w.blkdev = area->blkdev();
  w.discard = false;
  w.prio = spec.prio;
  Emit(w);
  s_.areas.push_back(std::move(area));
  return Status::Ok();
}

Status Runner::DoAllocs(std::span<const TraceRecord> recs) {
  Worker& w = *s_.worker;
  std::vector<std::pair<const TraceRecord*, LiveFolio>> sent;
  for (const TraceRecord& r : recs) {
    if (r.op != TraceOp::kAlloc) continue;
    if (live_.count(*r.folio))
      return At(Where(r), "folio " + std::to_string(*r.folio) + " is still live");
    const uint64_t pages = uint64_t{1} << r.order, bytes = pages * kPage;
    LiveFolio f;
    f.order = r.order;
    f.cpu = r.cpu;
    f.addr = (cursor_ + bytes - 1) / bytes * bytes;
    cursor_ = f.addr + bytes + kPage;  // a PROT_NONE page after it: no VMA merge
    f.pages.resize(pages);
    if (Status st = w.SendSwapOut(r.cpu, f.addr, bytes); !st.ok())
      return At(Where(r), st.ToString(), st.code());
    sent.emplace_back(&r, std::move(f));
  }
  for (auto& [r, f] : sent) {
    auto s = w.ReceiveSwapOut();
    if (!s.ok()) return At(Where(*r), s.status().ToString(), s.status().code());
    if (s->before.size() != f.pages.size())
      return At(Where(*r), "the worker swapped out " + std::to_string(s->before.size()) +
                               " pages, not " + std::to_string(f.pages.size()));
    if (Status st = FinishAlloc(*r, std::move(f), *s); !st.ok()) return st;
  }
  return Status::Ok();
}

size_t Runner::Step(const std::vector<TraceRecord>& recs, size_t i) const {
  // A batch changes when the run looks, not what the kernel is asked: off
  // where the run looks after every record (a hook, the kernel's count
  // written after each, the SSD scan base of 6.1 read off each alloc).
  const bool scan_bases = watch_ && watch_->policy().ssd_swap_map_scan &&
                          std::any_of(dev_to_area_.begin(), dev_to_area_.end(),
                                      [this](const auto& d) { return s_.areas[d.second]->ssd(); });
  if (recs[i].op != TraceOp::kAlloc || o_.after_record || o_.annotate_inuse || scan_bases) return 1;
  std::vector<uint64_t> folios;
  size_t n = 0;
  for (size_t k = i; k < recs.size() && folios.size() < kMaxAllocBatch; ++k) {
    const TraceRecord& r = recs[k];
    if (r.op == TraceOp::kAlloc) {
      if (live_.count(*r.folio) ||
          std::find(folios.begin(), folios.end(), *r.folio) != folios.end())
        break;
      folios.push_back(*r.folio);
      n = k - i + 1;
    } else if (!NothingToDo(r.op)) {
      break;
    }
  }
  return std::max<size_t>(n, 1);
}

Status Runner::FinishAlloc(const TraceRecord& r, LiveFolio f, const SwapOutPages& s) {
  const uint64_t id = *r.folio, n = f.pages.size();
  if (!OneFolio(s))
    Note(r.line, id, "the fault did not give one folio of order " + std::to_string(r.order));
  for (const PageState& p : s.before) {
    if (!p.present) continue;
    if (!pending_pfns_.empty() &&
        pending_pfns_.back().first + pending_pfns_.back().second == p.pfn) {
      ++pending_pfns_.back().second;
    } else {
      pending_pfns_.emplace_back(p.pfn, 1);
    }
  }
  Emit(r);
  uint64_t not_swapped = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const PageState& p = s.after[i];
    LivePage& lp = f.pages[i];
    if (!p.swapped) {
      lp.in_memory = p.present;
      ++not_swapped;
      continue;
    }
    auto dev = type_to_dev_.find(p.swap_type);
    if (dev == type_to_dev_.end()) {
      Note(r.line, id,
           "page " + std::to_string(i) + " went to swap type " + std::to_string(p.swap_type) +
               ", not an area of this run");
      continue;
    }
    lp.swapped = true;
    lp.type = p.swap_type;
    lp.offset = p.swap_offset;
    ++rep_.pages_swapped;
    TraceRecord e;
    e.op = TraceOp::kExpect;
    e.folio = id;
    e.page = i;
    e.dev = dev->second;
    e.offset = p.swap_offset;
    Emit(e);
    ++rep_.expect_lines;
  }
  // Did the folio stay in the swap cache after its write-out? A synchronous
  // device (zram) completes the write inside MADV_PAGEOUT, and
  // shrink_folio_list then frees the clean folio at once ("a synchronous
  // write - probably a ramdisk"): the kernel dropped it from the cache on its
  // own, which the trace records as `drop-cache folio=F`.
  if (n - not_swapped > 0) {
    uint64_t cached = 0, swapped = 0;
    for (uint64_t i = 0; i < n; ++i) {
      if (!f.pages[i].swapped) continue;
      ++swapped;
      cached += s.resident[i] & 1;
    }
    if (cached == 0) {
      TraceRecord d;
      d.op = TraceOp::kDropCache;
      d.folio = id;
      Emit(d);
      ++rep_.uncached_at_pageout;
    } else if (cached != swapped) {
      Note(r.line, id,
           std::to_string(swapped - cached) + " of " + std::to_string(swapped) +
               " swapped pages left the swap cache at write-out, the others stayed");
    }
  }
  // Pages MADV_PAGEOUT left in memory (no slot: the device is full) are
  // compared with the model's unplaced pages, not counted as anomalies.
  rep_.pages_not_swapped += not_swapped;
  ++rep_.folios;
  ++rep_.folios_by_order[r.order];
  live_[id] = std::move(f);
  return Status::Ok();
}

Status Runner::DoDropCache(const TraceRecord& r, const std::string& where) {
  WaitWriteback(r.line);
  if (r.folio) ++rep_.drop_cache_global;  // the kernel side can only drop all
  if (Status st = s_.DropCache(); !st.ok())
    return At(where, "drop-cache: " + st.ToString(), st.code());
  TraceRecord w = r;
  w.folio.reset();
  Emit(w);
  return Verify(r.line);
}

Status Runner::ForEachLiveFolio(
    const std::function<void(uint64_t, LiveFolio&, std::span<const PageState>)>& fn) {
  std::vector<std::pair<uint64_t, uint64_t>> by_addr;  // (address, folio id)
  by_addr.reserve(live_.size());
  for (const auto& [id, f] : live_) by_addr.emplace_back(f.addr, id);
  std::sort(by_addr.begin(), by_addr.end());
  for (size_t i = 0; i < by_addr.size();) {
    const uint64_t lo = by_addr[i].first;
    uint64_t hi = lo;
    size_t j = i;
    for (; j < by_addr.size(); ++j) {
      const LiveFolio& f = live_.at(by_addr[j].second);
      const uint64_t end = f.addr + f.pages.size() * kPage;
      if (j > i && ((end - lo) / kPage > kMaxPagemapRead || (f.addr - hi) / kPage > kMaxPagemapGap))
        break;
      hi = end;
    }
    auto pages = s_.worker->Pages(lo, (hi - lo) / kPage);
    if (!pages.ok()) return pages.status();
    for (size_t k = i; k < j; ++k) {
      LiveFolio& f = live_.at(by_addr[k].second);
      fn(by_addr[k].second, f,
         std::span<const PageState>(*pages).subspan((f.addr - lo) / kPage, f.pages.size()));
    }
    i = j;
  }
  return Status::Ok();
}

Status Runner::Verify(uint64_t line) {
  return ForEachLiveFolio([&](uint64_t id, LiveFolio& f, std::span<const PageState> pages) {
    for (size_t i = 0; i < f.pages.size(); ++i) {
      const PageState& p = pages[i];
      LivePage& lp = f.pages[i];
      if (lp.swapped && (!p.swapped || p.swap_type != lp.type || p.swap_offset != lp.offset)) {
        Note(line, id, "page " + std::to_string(i) + " left its slot on its own");
      } else if (!lp.swapped && p.swapped) {
        Note(line, id,
             "page " + std::to_string(i) + " was swapped out by the kernel on its own (type " +
                 std::to_string(p.swap_type) + " offset " + std::to_string(p.swap_offset) + ")");
      }
    }
  });
}

// cache: a read fault on each page. What the kernel did is written back:
// the pages that came in (a large folio may be swapped in whole: more than
// asked), and whether the swap-in kept the swap cache (slots still in use)
// or bypassed it (SWP_SYNCHRONOUS_IO: the slots were freed at once), which the
// trace records as a `drop-cache folio=F` after the `cache`.
Status Runner::DoCache(const TraceRecord& r, LiveFolio& f, uint64_t first, uint64_t count,
                       const std::string& where) {
  const uint64_t used_before = s_.UsedSlots();
  if (Status st = s_.worker->ReadIn(f.cpu, f.addr + first * kPage, count * kPage); !st.ok())
    return At(where, st.ToString(), st.code());
  auto pages = s_.worker->Pages(f.addr, f.pages.size());
  if (!pages.ok()) return pages.status();
  uint64_t came_in = 0, came_in_cached = 0;
  std::vector<std::pair<uint64_t, uint64_t>>
      runs;  // [first, n) of pages now present that were swapped
  for (uint64_t i = 0; i < f.pages.size(); ++i) {
    LivePage& lp = f.pages[i];
    if (!lp.swapped || !(*pages)[i].present) continue;
    lp = LivePage{false, true, -1, 0};
    ++came_in;
    auto flags = Worker::PageFlags((*pages)[i].pfn);
    if (!flags.ok()) return At(where, flags.status().ToString(), flags.status().code());
    came_in_cached += (*flags >> kKpfSwapCache) & 1;
    if (!runs.empty() && runs.back().first + runs.back().second == i) {
      ++runs.back().second;
    } else {
      runs.emplace_back(i, 1);
    }
    if (i < first || i >= first + count) ++rep_.swapin_extra_pages;  // a large folio came in whole
  }
  for (const auto& [p0, n] : runs) {
    // A large folio swapped in whole brings pages that were not asked for:
    // they are locked too, or the next drop-cache would swap them out again.
    if (Status st = s_.worker->Lock(f.addr + p0 * kPage, n * kPage); !st.ok())
      return At(where, st.ToString(), st.code());
    TraceRecord c = r;
    c.page = p0;
    c.n = n;
    Emit(c);
  }
  // Whether the swap-in kept the swap cache is read from the pages
  // (KPF_SWAPCACHE), not from /proc/swaps: slots freed by the fault may wait
  // in 6.12's per-CPU return buffer (still counted), and one free may empty
  // that buffer (64 slots counted at once).
  const uint64_t used_after = s_.UsedSlots();
  const uint64_t freed = used_before > used_after ? used_before - used_after : 0;
  if (came_in > 0 && came_in_cached == 0) {
    // Bypassed: possible to express only if no other page of the folio is
    // in the swap cache (drop-cache folio=F drops all of them).
    bool others_cached = false;
    auto mc = s_.worker->Mincore(f.addr, f.pages.size() * kPage);
    if (!mc.ok()) return mc.status();
    for (uint64_t i = 0; i < f.pages.size(); ++i)
      others_cached |= f.pages[i].swapped && ((*mc)[i] & 1);
    if (others_cached) {
      Note(r.line, *r.folio,
           "the swap-in bypassed the swap cache while other pages of the folio are cached");
    } else {
      TraceRecord d;
      d.op = TraceOp::kDropCache;
      d.folio = r.folio;
      Emit(d);
      ++rep_.swapin_bypassed_cache;
    }
  } else if (came_in_cached != came_in) {
    Note(r.line, *r.folio,
         std::to_string(came_in - came_in_cached) + " of " + std::to_string(came_in) +
             " pages swapped in left the swap cache, the others stayed (" + std::to_string(freed) +
             " slots freed)");
  }
  return Status::Ok();
}

Status Runner::Apply(const TraceRecord& r) {
  const std::string where = o_.trace + ":" + std::to_string(r.line);
  switch (r.op) {
    case TraceOp::kSwapon:
      return DoSwapon(r, where);
    case TraceOp::kAlloc:
      return DoAllocs({&r, 1});
    case TraceOp::kDropCache:
      return DoDropCache(r, where);
    case TraceOp::kExpect:
    case TraceOp::kForeign:
    case TraceOp::kForeignFree:
    case TraceOp::kScanBase:
    case TraceOp::kCpus:
      return Status::Ok();  // NothingToDo
    case TraceOp::kSwapoff: {
      auto a = dev_to_area_.find(r.dev);
      if (a == dev_to_area_.end()) return At(where, "dev " + std::to_string(r.dev) + " is not on");
      WaitWriteback(r.line);
      if (Status st = s_.areas[a->second]->Swapoff(); !st.ok())
        return At(where, st.ToString(), st.code());
      int type = -1;
      for (auto& [t, d] : type_to_dev_)
        if (d == r.dev) type = t;
      for (auto& [id, f] : live_)
        for (auto& p : f.pages)
          if (p.swapped && p.type == type) p = LivePage{false, true, -1, 0};
      type_to_dev_.erase(type);
      dev_to_area_.erase(a);
      Emit(r);
      return Status::Ok();
    }
    case TraceOp::kFree:
    case TraceOp::kCache: {
      auto it = live_.find(*r.folio);
      if (it == live_.end()) return At(where, "folio " + std::to_string(*r.folio) + " is not live");
      LiveFolio& f = it->second;
      uint64_t first, count;
      if (!workload::RecordPageRange(r, f.pages.size(), &first, &count))
        return At(where, "pages outside a folio of " + std::to_string(f.pages.size()) + " pages");
      // A folio under writeback cannot leave the swap cache.
      WaitWriteback(r.line);
      const uint64_t addr = f.addr + first * kPage, len = count * kPage;
      if (r.op == TraceOp::kFree) {
        if (Status st = s_.worker->Free(f.cpu, addr, len); !st.ok())
          return At(where, st.ToString(), st.code());
        for (uint64_t i = first; i < first + count; ++i) f.pages[i] = LivePage{};
        if (std::none_of(f.pages.begin(), f.pages.end(),
                         [](const LivePage& p) { return p.swapped || p.in_memory; }))
          live_.erase(it);
      } else {
        return DoCache(r, f, first, count, where);
      }
      Emit(r);
      return Status::Ok();
    }
    default:
      return At(where,
                std::string("'") + workload::Name(r.op) + "' is not supported by `kernel run`");
  }
}

Status Runner::ReadTrace(std::vector<TraceRecord>* recs) const {
  auto reader = workload::TraceReader::Open(o_.trace);
  if (!reader.ok()) return reader.status();
  for (TraceRecord r;;) {
    auto more = (*reader)->Next(&r);
    if (!more.ok()) return more.status();
    if (!*more) break;
    recs->push_back(r);
  }
  return Status::Ok();
}

void Runner::StartWatch(const Baseline& base, int machine_cpus) {
  Warnings();
  if (auto p1 = ReadVmstat("pswpout"); p1.ok() && base.pswpout.ok() && *p1 != *base.pswpout)
    rep_.warnings.push_back("pswpout moved by " + std::to_string(*p1 - *base.pswpout) +
                            " pages before the first record: something else is swapping");
  std::string why;
  struct utsname u {};
  const std::string release = uname(&u) == 0 ? u.release : "";
  const std::string name = alloc::PresetForRelease(release, &why);
  auto policy = o_.watch_policy ? *o_.watch_policy : alloc::Policy::Preset(name).value();
  rep_.watch_policy = policy.name;
  rep_.watch_exact = o_.watch_policy ? o_.watch_models_kernel : why.empty();
  if (!rep_.watch_exact)
    rep_.warnings.push_back("no preset models this kernel (" + release + ") exactly" +
                            (why.empty() ? "" : " (" + why + ")") +
                            ": slots in use are compared with " + policy.name +
                            ", and where they differ it is reported, not taken for another "
                            "process's pages");
  watch_ = std::make_unique<ForeignWatch>(policy, machine_cpus);
}

void Runner::WriteHeader(int machine_cpus) {
  out_.push_back(workload::kTraceHeader);
  out_.push_back("# swaplab kernel run " + o_.trace + " --device " + Name(o_.device));
  TraceRecord c;
  c.op = TraceOp::kCpus;
  c.n = static_cast<uint64_t>(machine_cpus);
  out_.push_back(workload::FormatRecord(c));
  written_.push_back(c);
}

Status Runner::CheckStop(const TraceRecord& r, Clock::time_point t0) const {
  if (intr_ && *intr_)
    return Status(-EINTR, o_.trace + ":" + std::to_string(r.line) + ": interrupted");
  if (Clock::now() - t0 > std::chrono::seconds(o_.timeout_s))
    return Status(-ETIMEDOUT, o_.trace + ":" + std::to_string(r.line) +
                                  ": the run took longer than " + std::to_string(o_.timeout_s) +
                                  " s");
  return Status::Ok();
}

Status Runner::ApplyRecords(const std::vector<TraceRecord>& recs, Clock::time_point t0) {
  Status st;
  for (size_t i = 0; st.ok() && i < recs.size();) {
    if (Status stop = CheckStop(recs[i], t0); !stop.ok()) return stop;
    const size_t out0 = out_.size(), w0 = written_.size();
    const size_t n = Step(recs, i);
    st = n > 1 ? DoAllocs(std::span(recs).subspan(i, n)) : Apply(recs[i]);
    const TraceRecord& last = recs[i + n - 1];  // an alloc, if a batch
    const bool own = !NothingToDo(last.op);
    if (st.ok() && own) {
      if (o_.after_record) o_.after_record(last.line);
      st = Watch(last, out0, w0);
    }
    rep_.records += n;
    i += n;
    if (o_.progress) o_.progress(i, recs.size());
    if (o_.annotate_inuse && own)
      out_.push_back("# kernel inuse " + std::to_string(s_.UsedSlots()));
  }
  return st;
}

// The end: everything the kernel did on its own shows up now.
Status Runner::FinishRecords(const Baseline& base) {
  WaitWriteback(0);
  (void)WaitForWriteback(o_.writeback_timeout_ms);
  Status st = Verify(0);
  CountSwapouts(base);
  // Slots in use that no page of the trace holds (after dropping the
  // clean swap cache): the kernel swapped something else to our areas.
  if (st.ok() && !s_.cgroup.empty()) (void)s_.DropCache();
  CountUnexplainedSlots();
  return st;
}

void Runner::CountSwapouts(const Baseline& base) {
  const auto after = ReadMthpStats();
  for (const auto& [k, v] : after.swpout) {
    const uint64_t d = v - base.mthp.swpout.at(k),
                   fb = after.swpout_fallback.at(k) - base.mthp.swpout_fallback.at(k);
    if (d || fb) {
      rep_.swpout[k] = d;
      rep_.swpout_fallback[k] = fb;
    }
  }
  if (auto p1 = ReadVmstat("pswpout"); p1.ok() && base.pswpout.ok())
    rep_.pswpout = *p1 - *base.pswpout;
  if (auto d1 = ReadVmstat("pgdeactivate"); d1.ok() && base.pgdeactivate.ok())
    rep_.lru_deactivated = *d1 - *base.pgdeactivate;
}

void Runner::CountUnexplainedSlots() {
  uint64_t held = 0;
  (void)ForEachLiveFolio([&](uint64_t, LiveFolio& f, std::span<const PageState> pages) {
    for (size_t i = 0; i < f.pages.size(); ++i) held += pages[i].swapped || f.pages[i].in_memory;
  });
  const uint64_t used = s_.UsedSlots();
  std::string first;
  if (used > held) rep_.worker_pages_swapped = WorkerOwnSwapped(&first);
  if (rep_.worker_pages_swapped)
    Note(0, 0,
         std::to_string(rep_.worker_pages_swapped) +
             " of the worker's own pages were swapped out by the final "
             "cgroup reclaim (first: " +
             first + ")");
  held += rep_.worker_pages_swapped;
  // Slots the watch accounts to someone else: `foreign` slots still held,
  // and interference it could not place.
  if (watch_) held += watch_->model().runner().foreign_slots();
  if (auto model_used = ModelUsedAfterFinalReclaim()) held = std::max(held, *model_used);
  for (const auto& [dev, n] : unaccounted_) held += n > 0 ? static_cast<uint64_t>(n) : 0;
  rep_.unexplained_slots = used > held ? used - held : 0;
  if (rep_.unexplained_slots)
    Note(0, 0,
         std::to_string(rep_.unexplained_slots) + " slots in use that no page of the trace holds");
}

// What the model holds besides the trace's pages after the same reclaim:
// slots a slot cache took ahead (<= 6.14), or waiting in its return buffer.
std::optional<uint64_t> Runner::ModelUsedAfterFinalReclaim() {
  if (!watch_) return std::nullopt;
  workload::TraceRecord drop;
  drop.op = TraceOp::kDropCache;
  if (!watch_->model().runner().Apply(drop, "the final reclaim").ok()) return std::nullopt;
  uint64_t model_used = 0;
  for (const auto& [dev, i] : dev_to_area_) model_used += watch_->model().InUse(dev);
  return model_used;
}

// Never the trace itself, an area or a device; through a temporary file
// and a rename (an existing file is replaced, as before).
Status Runner::WriteOut() const {
  if (o_.out.empty()) return Status::Ok();
  std::string text;
  for (const auto& l : out_) text += l + '\n';
  area::OutputOptions oo;
  oo.force = true;
  oo.inputs = {o_.trace};
  return area::WriteOutputFile(o_.out, text, oo);
}

Result<RunReport> Runner::Run() {
  const auto t0 = Clock::now();
  std::vector<TraceRecord> recs;
  if (Status st = ReadTrace(&recs); !st.ok()) return st;
  if (!IsRoot()) return Status(-EPERM, "swaplab kernel run needs root (swapon, pagemap, sysfs)");
  Status st = PrepareSession(o_, recs, &s_);
  if (st.ok()) cursor_ = s_.worker->base();
  const Baseline base{ReadMthpStats(), ReadVmstat("pswpout"), ReadVmstat("pgdeactivate")};
  // The CPUs online: the watch's model has exactly these (the kernel's
  // slot cache thresholds scale with them, 6.12 check_cache_active()), and
  // the written trace says so first.
  const int machine_cpus = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  if (st.ok()) StartWatch(base, machine_cpus);
  WriteHeader(machine_cpus);
  const auto records0 = Clock::now();
  if (st.ok()) st = ApplyRecords(recs, t0);
  rep_.records_seconds = std::chrono::duration<double>(Clock::now() - records0).count();
  if (st.ok() && s_.worker) st = FinishRecords(base);
  Status closed = s_.Close();
  if (st.ok()) st = closed;
  if (!st.ok()) return st;
  if (Status w = WriteOut(); !w.ok()) return w;
  rep_.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return rep_;
}

}  // namespace

Result<RunReport> RunTrace(const RunOptions& o, const volatile std::sig_atomic_t* interrupted) {
  Runner r(o, interrupted);
  return r.Run();
}

Result<RunReport> RunTraceAccounted(const RunOptions& o,
                                    const volatile std::sig_atomic_t* interrupted) {
  std::vector<std::string> reasons;
  for (int run = 1;; ++run) {
    auto result = RunTrace(o, interrupted);
    if (!result.ok()) return result;
    RunReport rep = std::move(result).value();
    if (rep.interference_unaccounted == 0 || run > o.reruns || !rep.watch_exact) {
      rep.runs = run;
      rep.rerun_reasons = std::move(reasons);
      return rep;
    }
    const Interference* first = nullptr;
    for (const auto& i : rep.interference)
      if (!i.accounted && !first) first = &i;
    reasons.push_back("run " + std::to_string(run) + ": " +
                      std::to_string(rep.interference_unaccounted) +
                      " points of interference not accounted" +
                      (first ? " (first after line " + std::to_string(first->line) + ": " +
                                   std::to_string(first->slots) + " slots, " + first->how + ")"
                             : ""));
  }
}

}  // namespace swaplab::kernel
