// SPDX-License-Identifier: MIT
// `kernel run`'s runner (kernel_run.h): the state of one run and its
// steps, defined in four files, one job each: kernel_run.cc (the run from
// the trace read to the trace written), kernel_run_records.cc (what each
// record does to the kernel, and what the kernel did written back),
// kernel_run_watch.cc (the interference watch: the kernel's slots in use
// against its model) and kernel_run_verify.cc (the live pages checked
// against pagemap, and the final accounting). Private to src/kernel.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "interference.h"
#include "run_session.h"
#include "swaplab/kernel/kernel_run.h"
#include "swaplab/kernel/worker.h"
#include "swaplab/workload/trace.h"

namespace swaplab::kernel {

using workload::TraceOp;
using workload::TraceRecord;

constexpr uint64_t kPage = kRunPage;
constexpr size_t kKeepAnomalies = 50;

struct LivePage {
  bool swapped = false;    // the PTE holds a swap entry (as far as the trace knows)
  bool in_memory = false;  // read back in
  bool locked = false;     // read back in by a `cache` and mlocked: reclaim cannot unmap it
  int type = -1;
  uint64_t offset = 0;
};
struct LiveFolio {
  uint64_t addr = 0;
  int order = 0, cpu = 0;
  // Pagemap cannot show anything new for it until the run touches it
  // again: at the last check every page was a swap entry, none, or
  // present and mlocked, and all agreed with `pages` (Runner::Verify).
  bool settled = false;
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
  // other, a run of order-0 folios of one CPU in one MADV_PAGEOUT when
  // PageoutTogether allows it: the kernel places them as one at a time.
  Status DoAllocs(std::span<const TraceRecord> recs);
  bool PageoutTogether(uint64_t pages) const;
  Status SendAllocs(const std::vector<std::pair<const TraceRecord*, LiveFolio>>& sent,
                    bool together);
  Status DoFrees(std::span<const TraceRecord> recs);
  Status SendFree(const TraceRecord& r, std::unordered_map<uint64_t, LiveFolio>::iterator it,
                  uint64_t first, uint64_t count);
  Status FinishFree(const TraceRecord& r, int cpu);
  Status FinishAlloc(const TraceRecord& r, LiveFolio f, const SwapOutPages& s);
  // How many records from recs[i] the run takes in one step: a batch of
  // allocs of new folios for DoAllocs, or of frees of live folios for
  // DoFrees (with the records a run does nothing for between them, ending
  // on one of the batch's op), or 1.
  size_t Step(const std::vector<TraceRecord>& recs, size_t i) const;
  std::string Where(const TraceRecord& r) const { return o_.trace + ":" + std::to_string(r.line); }
  Status DoDropCache(const TraceRecord& r, const std::string& where);
  // Compares live pages with pagemap: every live folio (`all`, the end of
  // the run), or only those not settled (a drop-cache: a settled folio's
  // pagemap entries cannot have changed, see the definition).
  Status Verify(uint64_t line, bool all);
  // Notes page `i` of folio `id` if pagemap's `p` disagrees with `lp`.
  void VerifyPage(uint64_t line, uint64_t id, size_t i, const PageState& p, const LivePage& lp);
  // Calls fn for every live folio (or, `unsettled_only`, every one not
  // settled), in address order, with its pages as /proc/PID/pagemap shows
  // them now: one read for neighbours (at most kMaxPagemapRead pages, gaps
  // of at most kMaxPagemapGap), not one each.
  Status ForEachLiveFolio(
      const std::function<void(uint64_t, LiveFolio&, std::span<const PageState>)>& fn,
      bool unsettled_only = false);
  Status DoCache(const TraceRecord& r, LiveFolio& f, uint64_t first, uint64_t count,
                 const std::string& where);
  uint64_t WorkerOwnSwapped(std::string* first) const;
  uint64_t SmapsSwapPages(uint64_t lo) const;
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
  Status MeasureFloor();
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
  void WaitWriteback(uint64_t line);

  const RunOptions& o_;
  const volatile std::sig_atomic_t* intr_;
  RunReport rep_;
  Session s_;
  std::vector<std::string> out_;
  std::map<int, uint64_t> type_to_dev_;
  std::map<uint64_t, size_t> dev_to_area_;
  std::unordered_map<uint64_t, LiveFolio> live_;
  // Folios that may not be settled (LiveFolio::settled), maybe repeated or
  // freed since: what a drop-cache's Verify reads.
  std::vector<uint64_t> unsettled_;
  void Unsettle(uint64_t id, LiveFolio& f) {
    if (f.settled) unsettled_.push_back(id);
    f.settled = false;
  }
  uint64_t cursor_ = 0;
  // The CPUs online when the run started (sysconf reads a sysfs file
  // each time it is asked).
  const uint64_t online_cpus_ = static_cast<uint64_t>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  std::vector<std::pair<uint64_t, uint64_t>>
      pending_pfns_;                         // (first PFN, pages) paged out, maybe under writeback
  std::vector<TraceRecord> written_;         // the output's records, in order
  std::unique_ptr<ForeignWatch> watch_;      // null: not watching
  std::map<uint64_t, int64_t> unaccounted_;  // per dev: slots of interference not explained
  uint64_t explained_ = 0;                   // Explain calls so far
};

}  // namespace swaplab::kernel
