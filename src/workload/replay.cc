// SPDX-License-Identifier: MIT
// One trace replayed on the model (replay.h).
#include "swaplab/workload/replay.h"

#include "swaplab/workload/trace.h"

namespace swaplab::workload {

namespace {

// The model's options: the first record (if any, `have`) may be a `cpus`
// record, which sizes the system when the caller gave no CPU count.
alloc::SystemOptions ReplaySystemOptions(const ReplayOptions& o, bool have,
                                         const TraceRecord& first) {
  alloc::SystemOptions so;
  so.policy = o.policy;
  so.nr_cpus = o.cpus;
  if (so.nr_cpus == 0)
    so.nr_cpus = have && first.op == TraceOp::kCpus && first.n && *first.n <= kMaxTraceCpus
                     ? static_cast<int>(*first.n)
                     : kDefaultReplayCpus;
  so.cluster_shift = o.cluster_shift;
  so.scan_base_seed = o.scan_base_seed;
  return so;
}

// --check: CheckInvariants after every record; the first broken one stops
// the replay and says where.
class InvariantCheck final : public ReplayObserver {
 public:
  explicit InvariantCheck(const std::string& trace) : trace_(trace) {}
  bool AfterRecord(const TraceRecord& rec, const ReplayState& state) override {
    const auto inv = state.sys->CheckInvariants();
    if (inv.ok()) return true;
    failed_ = trace_ + ":" + std::to_string(rec.line) + ": invariant " + inv.ToString() +
              " broken after '" + FormatRecord(rec) + "'";
    return false;
  }
  const std::string& failed() const { return failed_; }

 private:
  const std::string& trace_;
  std::string failed_;
};

}  // namespace

Status ReplayTrace(const ReplayOptions& o, ReplayState* state, ReplayObserver* observer) {
  state->records = 0;
  if (Status st = o.policy.Validate(); !st.ok()) return st;
  auto reader = TraceReader::Open(o.trace);
  if (!reader.ok()) return reader.status();
  // The first record is read before the system is made (its `cpus`).
  TraceRecord rec;
  auto first = (*reader)->Next(&rec);
  if (!first.ok()) return first.status();
  const alloc::SystemOptions so = ReplaySystemOptions(o, *first, rec);
  if (Status st = alloc::SwapSystem::ValidateOptions(so); !st.ok()) return st;
  state->sys = std::make_unique<alloc::SwapSystem>(so);
  state->runner = std::make_unique<TraceRunner>(*state->sys);
  TraceRunner& runner = *state->runner;
  runner.set_memory_limit(o.memory_limit);
  for (bool more = *first; more;) {
    if (Status st = runner.Apply(rec, o.trace); !st.ok()) return st;
    ++state->records;
    if (observer != nullptr && !observer->AfterRecord(rec, *state)) break;
    auto next = (*reader)->Next(&rec);
    if (!next.ok()) return next.status();
    more = *next;
  }
  return Status::Ok();
}

Result<ReplayResult> Replay(const ReplayOptions& o) {
  ReplayState state;
  InvariantCheck check(o.trace);
  if (Status st = ReplayTrace(o, &state, o.check ? &check : nullptr); !st.ok()) return st;
  const alloc::SwapSystem& sys = *state.sys;
  ReplayResult res;
  res.options = o;
  res.options.cpus = sys.options().nr_cpus;  // as resolved
  res.check_failed = check.failed();
  if (!res.check_failed.empty()) return res;
  res.cluster_size = sys.cluster_size();
  res.summary = state.runner->summary();
  res.counters = sys.counters();
  for (const auto& [id, type] : state.runner->devices()) {
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
