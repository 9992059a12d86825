// SPDX-License-Identifier: MIT
// One trace replayed on the model (replay.h).
#include "swaplab/workload/replay.h"

#include "swaplab/workload/trace.h"

namespace swaplab::workload {

Result<ReplayResult> Replay(const ReplayOptions& o) {
  if (Status st = o.policy.Validate(); !st.ok()) return st;
  auto reader = TraceReader::Open(o.trace);
  if (!reader.ok()) return reader.status();
  // The first record is read before the system is made: a `cpus` record
  // sizes it when the caller gave no CPU count.
  TraceRecord rec;
  auto first = (*reader)->Next(&rec);
  if (!first.ok()) return first.status();
  ReplayResult res;
  res.options = o;
  if (res.options.cpus == 0)
    res.options.cpus = *first && rec.op == TraceOp::kCpus && rec.n && *rec.n <= kMaxTraceCpus
                           ? static_cast<int>(*rec.n)
                           : kDefaultReplayCpus;
  alloc::SystemOptions so;
  so.policy = o.policy;
  so.nr_cpus = res.options.cpus;
  so.cluster_shift = o.cluster_shift;
  so.scan_base_seed = o.scan_base_seed;
  if (Status st = alloc::SwapSystem::ValidateOptions(so); !st.ok()) return st;
  alloc::SwapSystem sys(so);
  TraceRunner runner(sys);
  runner.set_memory_limit(o.memory_limit);
  for (bool have = *first;; have = false) {
    if (!have) {
      auto more = (*reader)->Next(&rec);
      if (!more.ok()) return more.status();
      if (!*more) break;
    }
    if (Status st = runner.Apply(rec, o.trace); !st.ok()) return st;
    if (!o.check) continue;
    if (auto inv = sys.CheckInvariants(); !inv.ok()) {
      res.check_failed = o.trace + ":" + std::to_string(rec.line) + ": invariant " +
                         inv.ToString() + " broken after '" + FormatRecord(rec) + "'";
      return res;
    }
  }
  res.cluster_size = sys.cluster_size();
  res.summary = runner.summary();
  res.counters = sys.counters();
  for (const auto& [id, type] : runner.devices()) {
    auto d = sys.Device(type);
    if (d.ok()) res.devices.push_back({id, type, *d});
  }
  const auto inv = sys.CheckInvariants();
  res.invariants = inv.ToString();
  res.invariants_ok = inv.ok();
  return res;
}

double RunsPerFolio(const ReplaySummary& s) {
  return s.folios ? static_cast<double>(s.folio_runs) / static_cast<double>(s.folios) : 0.0;
}

double Agreement(const ReplaySummary& s) {
  return s.expected ? static_cast<double>(s.agree) / static_cast<double>(s.expected) : 1.0;
}

}  // namespace swaplab::workload
