// SPDX-License-Identifier: MIT
// `swaplab kernel run` (kernel_run.h): the trace against the running kernel,
// from the trace read to the trace written (the runner's steps: runner.h).
#include "swaplab/kernel/kernel_run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "runner.h"
#include "swaplab/area/output_file.h"
#include "swaplab/kernel/host.h"
#include "swaplab/workload/trace_runner.h"

namespace swaplab::kernel {
namespace {

// Records a run does nothing for: what another run saw, replaced by what
// this one sees.
bool NothingToDo(TraceOp op) {
  return op == TraceOp::kExpect || op == TraceOp::kForeign || op == TraceOp::kForeignFree ||
         op == TraceOp::kScanBase || op == TraceOp::kCpus;
}

// Most alloc (or free) records whose commands go to the worker in one go.
constexpr size_t kMaxBatch = 64;

}  // namespace

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
    const auto batch = std::span(recs).subspan(i, n);
    st = n == 1 ? Apply(recs[i]) : recs[i].op == TraceOp::kAlloc ? DoAllocs(batch) : DoFrees(batch);
    const TraceRecord& last = recs[i + n - 1];  // an alloc or a free, if a batch
    const bool own = !NothingToDo(last.op);
    rep_.steps += own;
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

size_t Runner::Step(const std::vector<TraceRecord>& recs, size_t i) const {
  // A batch changes when the run looks, not what the kernel is asked: off
  // where the run looks after every record (a hook, the kernel's count
  // written after each, the SSD scan base of 6.1 read off each alloc).
  const bool scan_bases = watch_ && watch_->policy().ssd_swap_map_scan &&
                          std::any_of(dev_to_area_.begin(), dev_to_area_.end(),
                                      [this](const auto& d) { return s_.areas[d.second]->ssd(); });
  const TraceOp op = recs[i].op;
  if ((op != TraceOp::kAlloc && op != TraceOp::kFree) || o_.after_record || o_.annotate_inuse ||
      scan_bases)
    return 1;
  // Allocs of folios not live, or frees of live folios (whole, or pages
  // inside them), each folio once.
  std::vector<uint64_t> folios;
  size_t n = 0;
  for (size_t k = i; k < recs.size() && folios.size() < kMaxBatch; ++k) {
    const TraceRecord& r = recs[k];
    if (r.op == op) {
      const auto live = live_.find(*r.folio);
      uint64_t first = 0, count = 0;
      if (std::find(folios.begin(), folios.end(), *r.folio) != folios.end() ||
          (op == TraceOp::kAlloc
               ? live != live_.end()
               : live == live_.end() ||
                     !workload::RecordPageRange(r, live->second.pages.size(), &first, &count)))
        break;
      folios.push_back(*r.folio);
      n = k - i + 1;
    } else if (!NothingToDo(r.op)) {
      break;
    }
  }
  return std::max<size_t>(n, 1);
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
  const int machine_cpus = static_cast<int>(online_cpus_);
  if (st.ok()) StartWatch(base, machine_cpus);
  WriteHeader(machine_cpus);
  const auto records0 = Clock::now();
  if (st.ok()) st = ApplyRecords(recs, t0);
  rep_.records_seconds = std::chrono::duration<double>(Clock::now() - records0).count();
  if (st.ok() && s_.worker) st = FinishRecords(base);
  if (st.ok() && s_.worker && o_.floor) st = MeasureFloor();
  Status closed = s_.Close();
  if (st.ok()) st = closed;
  if (!st.ok()) return st;
  if (Status w = WriteOut(); !w.ok()) return w;
  rep_.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return rep_;
}

// RunOptions::floor: as many fresh pages as the trace swapped out, written
// and paged out by one MADV_PAGEOUT, and again as many mappings as the run
// had folios, paged out in as many calls as it made (Worker::Floor), into
// a fresh area of the run's kind at least the first area's size, at the
// highest priority so that they all go there (bench/kernel_run_speed.sh's
// floors, in the run). After the counts of the run: nothing of it is in
// them.
Status Runner::MeasureFloor() {
  const uint64_t pages = rep_.pages_swapped;
  if (pages == 0 || rep_.areas.empty()) return Status::Ok();
  const uint64_t need = pages * kPage + (uint64_t{64} << 20),
                 avail = workload::AvailableMemoryBytes();
  if (pages > Worker::kMaxFloorPages || (avail != 0 && need > avail)) {
    rep_.warnings.push_back("the floor was not measured: " + std::to_string(pages) +
                            " pages need " + std::to_string(need >> 20) + " MiB, " +
                            std::to_string(avail >> 20) + " MiB are available");
    return Status::Ok();
  }
  AreaSpec spec;
  spec.kind = o_.device;
  const uint64_t folios = std::min(rep_.folios, pages),
                 calls = std::min(rep_.pageout_calls, folios);
  // Room for both measurements: the first one's slots may still be held by
  // folios under writeback when the second starts.
  spec.pages = std::max(rep_.areas.front().pages, (folios > 1 ? 2 : 1) * pages + 1);
  spec.prio = alloc::kMaxSwapPrio;
  spec.index = static_cast<int>(s_.areas.size());
  // The records' results stand without it: a floor that cannot be made is
  // a warning.
  auto a = KernelArea::Create(spec);
  if (!a.ok()) {
    rep_.warnings.push_back("the floor was not measured: its area: " + a.status().ToString());
    return Status::Ok();
  }
  s_.areas.push_back(std::move(a).value());  // removed with the run's (Session::Close)
  auto f = s_.worker->Floor(pages, folios, calls);
  if (!f.ok()) {
    rep_.warnings.push_back("the floor was not measured: " + f.status().ToString());
    return Status::Ok();
  }
  rep_.floor_seconds = f->seconds;
  rep_.floor_pages_swapped = f->swapped;
  rep_.floor_folios = f->folios;
  rep_.floor_calls = f->calls;
  rep_.floor_calls_seconds = f->calls_seconds;
  rep_.floor_calls_pages_swapped = f->calls_swapped;
  return Status::Ok();
}

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
