// SPDX-License-Identifier: MIT
// `kernel run`'s watch for slots taken by someone outside the trace
// (docs/fidelity.md, "Interference"): a model run in lockstep with the
// kernel says how many slots each area should have in use after each
// record; where the kernel has more, another process swapped out into the
// run's area (a DAMON pageout scheme, proactive reclaim, kswapd). The
// excess is explained by replaying the written trace with a `foreign`
// record on each CPU, before or after the record it showed up at, and
// keeping the candidate whose slots hold data that is not the trace's and
// whose placements and counts match the kernel's. Private to src/kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/status.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/workload/trace.h"
#include "swaplab/workload/trace_runner.h"

namespace swaplab::kernel {

// What a slot of a run's area holds (Runner's probe of the area's bytes).
enum class SlotContent { kZero, kTrace, kOther, kUnreadable };

// The model of a written trace, replayed record by record.
class ModelReplay {
 public:
  ModelReplay(const alloc::Policy& policy, int cpus);
  // Applies written[fed() .. upto).
  Status FeedTo(const std::vector<workload::TraceRecord>& written, size_t upto);
  size_t fed() const { return fed_; }
  // Records inserted into the written trace at or before fed() whose effect
  // the model already has (Explain's foreign slots): counted as fed.
  void Inserted(size_t n) { fed_ += n; }
  // Slots in use on trace device `dev` (0 when it is not on).
  uint64_t InUse(uint64_t dev) const;
  // Offsets of trace device `dev` (swap_info's max; 0 when it is not on).
  uint64_t MaxOffset(uint64_t dev) const;
  // Expect lines the model disagreed with so far.
  uint64_t Mismatches() const;
  workload::TraceRunner& runner() { return *run_; }

 private:
  std::unique_ptr<alloc::SwapSystem> sys_;
  std::unique_ptr<workload::TraceRunner> run_;
  size_t fed_ = 0;
};

// One way the kernel's excess of `slots` on `dev` can have come about.
struct ForeignExplanation {
  int cpu = -1;
  bool before_record = false;     // the other process swapped out before the record's own pages
  std::vector<uint64_t> offsets;  // the slots, in the order the model gave them
  uint64_t content_other = 0;     // of them, slots whose bytes are not the trace's nor zero
  uint64_t candidates = 0;        // explanations that matched the kernel's counts and placements
  bool ambiguous = false;         // another one matched as well as this one, with other slots
};

class ForeignWatch {
 public:
  // `cpus`: the machine's CPUs online, the model's too (6.12's and 6.1's
  // slot cache thresholds scale with them; each is a candidate CPU of the
  // other process's swap-out).
  ForeignWatch(const alloc::Policy& policy, int cpus)
      : policy_(policy), cpus_(cpus), model_(std::make_unique<ModelReplay>(policy, cpus)) {}
  ModelReplay& model() { return *model_; }
  const alloc::Policy& policy() const { return policy_; }
  // Explains `slots` more slots in use on `dev` than the model has after
  // the record whose written lines are written[record_start ..). Candidates:
  // each machine CPU, the pages swapped out after the record's lines, or
  // before them when `may_precede` (an alloc). `probe` reads a slot. On
  // success the watch's model becomes the chosen candidate's (with the
  // foreign slots), and the caller writes the `foreign` records.
  Result<ForeignExplanation> Explain(const std::vector<workload::TraceRecord>& written,
                                     size_t record_start, bool may_precede, uint64_t dev,
                                     uint64_t slots,
                                     const std::function<uint64_t(uint64_t)>& kernel_used,
                                     const std::function<SlotContent(uint64_t, uint64_t)>& probe);
  // The kernel's random scan base (6.1's cluster_next_cpu, drawn at swapon
  // and at each 64 MiB crossing; policies with ssd_swap_map_scan): the
  // alloc whose written lines are written[record_start ..) and which the
  // model placed elsewhere than the kernel, on SSD `dev` (a trace dev) and
  // `cpu`, whose first page the kernel put at `first_offset`. Tries a
  // `scan-base` record before the record: first_offset − 1 and
  // first_offset (the scan looks from the base, or from the slot after
  // it: a short walk), then first_offset − 1 − LATENCY_LIMIT − 1 and the
  // area's last offset (a walk of at least LATENCY_LIMIT steps, from below
  // or around the end: the scan then stops after one slot, so the slot
  // cache's batch differs). The first with which the record's placements
  // agree and every area's count is `kernel_used`'s is returned (else the
  // first with which the placements agree), and the
  // watch's model becomes the one with it (the record not yet in
  // `written`: the caller inserts it at record_start). -ESRCH when none.
  Result<workload::TraceRecord> ExplainScanBase(
      const std::vector<workload::TraceRecord>& written, size_t record_start, uint64_t dev, int cpu,
      uint64_t first_offset, const std::function<uint64_t(uint64_t)>& kernel_used);

 private:
  alloc::Policy policy_;
  int cpus_;
  std::unique_ptr<ModelReplay> model_;
};

// The `foreign` records for slots `offsets` (given in allocation order) of
// `dev` on `cpu`: one per run of consecutive offsets.
std::vector<workload::TraceRecord> ForeignRecords(uint64_t dev, int cpu,
                                                  const std::vector<uint64_t>& offsets);

}  // namespace swaplab::kernel
