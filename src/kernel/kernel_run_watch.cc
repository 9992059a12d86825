// SPDX-License-Identifier: MIT
// `kernel run`'s interference watch (interference.h): the kernel's slots in
// use compared with its model after each record, and a difference
// explained and written into the trace, or reported.
#include <sys/utsname.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runner.h"
#include "swaplab/alloc/preset_for_release.h"
#include "swaplab/kernel/host.h"

namespace swaplab::kernel {
namespace {

constexpr size_t kKeepInterference = 50;
constexpr uint64_t kMaxExplains = 64;  // beyond: reported, not explained (each replays the trace)

}  // namespace

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

}  // namespace swaplab::kernel
