// SPDX-License-Identifier: MIT
// Slots taken outside the trace during `kernel run` (interference.h).
#include "interference.h"

#include <utility>

namespace swaplab::kernel {

using workload::TraceRecord;

ModelReplay::ModelReplay(const alloc::Policy& policy, int cpus) {
  alloc::SystemOptions so;
  so.policy = policy;
  so.nr_cpus = cpus;
  sys_ = std::make_unique<alloc::SwapSystem>(so);
  run_ = std::make_unique<workload::TraceRunner>(*sys_, /*keep_disagreements=*/0);
}

Status ModelReplay::FeedTo(const std::vector<TraceRecord>& written, size_t upto) {
  for (; fed_ < upto && fed_ < written.size(); ++fed_)
    if (Status st = run_->Apply(written[fed_], "the written trace"); !st.ok()) return st;
  return Status::Ok();
}

uint64_t ModelReplay::InUse(uint64_t dev) const {
  auto t = run_->devices().find(dev);
  if (t == run_->devices().end()) return 0;
  auto d = sys_->Device(t->second);
  return d.ok() ? d->inuse : 0;
}

uint64_t ModelReplay::MaxOffset(uint64_t dev) const {
  auto t = run_->devices().find(dev);
  if (t == run_->devices().end()) return 0;
  auto d = sys_->Device(t->second);
  return d.ok() ? d->max : 0;
}

uint64_t ModelReplay::Mismatches() const {
  const auto& s = run_->summary();
  return s.expected - s.agree;
}

Result<ForeignExplanation> ForeignWatch::Explain(
    const std::vector<TraceRecord>& written, size_t record_start, bool may_precede, uint64_t dev,
    uint64_t slots, const std::function<uint64_t(uint64_t)>& kernel_used,
    const std::function<SlotContent(uint64_t, uint64_t)>& probe) {
  ForeignExplanation best;
  std::unique_ptr<ModelReplay> best_model;
  bool found = false;
  // After the record first: when both fit (another CPU's slots), the pages
  // were seen after it.
  for (int before = 0; before <= (may_precede ? 1 : 0); ++before) {
    for (int cpu = 0; cpu < cpus_; ++cpu) {
      auto m = std::make_unique<ModelReplay>(policy_, cpus_);
      const size_t split = before ? record_start : written.size();
      if (!m->FeedTo(written, split).ok()) continue;
      const uint64_t mismatches_before = before ? m->Mismatches() : 0;
      ForeignExplanation e;
      e.cpu = cpu;
      e.before_record = before != 0;
      bool placed = true;
      const auto devs = m->runner().devices();
      auto type = devs.find(dev);
      if (type == devs.end()) continue;
      for (uint64_t i = 0; i < slots && placed; ++i) {
        auto got = m->runner().TakeForeignSlot(cpu);
        placed = got.ok() && got->valid() && got->type == type->second;
        if (placed) e.offsets.push_back(got->offset);
      }
      if (!placed) continue;
      if (before && !m->FeedTo(written, written.size()).ok()) continue;
      // The record's own pages must land where the kernel put them (when
      // the foreign pages came first), and every area's count must match.
      if (before && m->Mismatches() != mismatches_before) continue;
      bool counts = true;
      for (const auto& [d, t] : devs) counts &= m->InUse(d) == kernel_used(d);
      if (!counts) continue;
      for (uint64_t off : e.offsets) e.content_other += probe(dev, off) == SlotContent::kOther;
      ++best.candidates;
      if (!found || e.content_other > best.content_other) {
        const uint64_t n = best.candidates;
        best = std::move(e);
        best.candidates = n;
        best_model = std::move(m);
        found = true;
      } else if (e.content_other == best.content_other && e.offsets != best.offsets) {
        best.ambiguous = true;
      }
    }
  }
  if (!found)
    return Status(-ESRCH, "no CPU's swap-out of " + std::to_string(slots) +
                              " pages matches the kernel's counts and placements");
  if (best.content_other == best.offsets.size()) best.ambiguous = false;
  model_ = std::move(best_model);
  return best;
}

Result<TraceRecord> ForeignWatch::ExplainScanBase(
    const std::vector<TraceRecord>& written, size_t record_start, uint64_t dev, int cpu,
    uint64_t first_offset, const std::function<uint64_t(uint64_t)>& kernel_used) {
  if (!policy_.ssd_swap_map_scan) return Status(-ESRCH, "the policy draws no scan base");
  constexpr uint64_t kLatencyLimit = 256;  // LATENCY_LIMIT of 6.1's scan
  const uint64_t far = first_offset > kLatencyLimit + 2 ? first_offset - kLatencyLimit - 2 : 0;
  const uint64_t last = model_->MaxOffset(dev) > 0 ? model_->MaxOffset(dev) - 1 : 0;
  // The first base whose placements agree, kept in case none has the
  // kernel's count too (a walk of between 2 and 256 steps leaves a latency
  // count none of these gives): the page right, its batch maybe not.
  std::unique_ptr<ModelReplay> placed_only;
  TraceRecord placed_only_sb;
  for (uint64_t base : {first_offset - 1, first_offset, far, last}) {
    if (base == 0) continue;
    auto m = std::make_unique<ModelReplay>(policy_, cpus_);
    if (!m->FeedTo(written, record_start).ok()) continue;
    const uint64_t mismatches_before = m->Mismatches();
    TraceRecord sb;
    sb.op = workload::TraceOp::kScanBase;
    sb.dev = dev;
    sb.cpu = cpu;
    sb.offset = base;
    // A base the model refuses (not an SSD of the policy's scan, outside
    // the area) explains nothing.
    if (!m->runner().Apply(sb, "the written trace").ok()) continue;
    if (!m->FeedTo(written, written.size()).ok() || m->Mismatches() != mismatches_before) continue;
    bool counts = true;
    for (const auto& [d, t] : m->runner().devices()) counts &= m->InUse(d) == kernel_used(d);
    if (!counts) {
      if (!placed_only) {
        placed_only = std::move(m);
        placed_only_sb = sb;
      }
      continue;
    }
    m->Inserted(1);  // the caller puts sb into `written` before the record
    model_ = std::move(m);
    return sb;
  }
  if (placed_only) {
    placed_only->Inserted(1);
    model_ = std::move(placed_only);
    return placed_only_sb;
  }
  return Status(-ESRCH, "no scan base of CPU " + std::to_string(cpu) + " on dev " +
                            std::to_string(dev) + " puts the record's pages where the kernel did");
}

std::vector<TraceRecord> ForeignRecords(uint64_t dev, int cpu,
                                        const std::vector<uint64_t>& offsets) {
  std::vector<TraceRecord> out;
  for (uint64_t off : offsets) {
    if (!out.empty() && out.back().offset + *out.back().n == off) {
      ++*out.back().n;
      continue;
    }
    TraceRecord r;
    r.op = workload::TraceOp::kForeign;
    r.dev = dev;
    r.offset = off;
    r.n = 1;
    r.cpu = cpu;
    out.push_back(r);
  }
  return out;
}

}  // namespace swaplab::kernel
