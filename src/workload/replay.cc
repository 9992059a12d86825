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

// The trace's records with two read ahead of the one being applied: while
// record k runs, the index entry of record k + 2's folio and the table
// entry of record k + 1's are fetched into the cache (TraceRunner's
// Prefetch steps), so a trace of many live folios does not wait for each
// lookup in turn. A reader's error is returned in its record's turn, after
// the records before it are applied, as reading one at a time did.
class RecordsAhead {
 public:
  RecordsAhead(TraceReader& reader, TraceRunner& runner, bool more, const TraceRecord& first)
      : reader_(reader), runner_(runner) {
    ahead_[0].rec = first;
    ahead_[0].more = more;
    Read(ahead_[1], ahead_[0]);
    Read(ahead_[2], ahead_[1]);
  }
  // The next record, or null at the end; the reader's error at its place.
  Result<const TraceRecord*> Next() {
    Ahead& cur = ahead_[at_];
    if (!cur.st.ok()) return cur.st;
    if (!cur.more) return nullptr;
    const Ahead& next = ahead_[After(at_)];
    const Ahead& after = ahead_[After(After(at_))];
    if (after.more && after.rec.folio) runner_.PrefetchIndex(*after.rec.folio);
    if (next.more && next.rec.folio) runner_.PrefetchFolio(*next.rec.folio);
    return &cur.rec;
  }
  // The record Next gave has been applied: its place takes the one after
  // the last read.
  void Done() {
    Read(ahead_[at_], ahead_[After(After(at_))]);
    at_ = After(at_);
  }

 private:
  struct Ahead {
    TraceRecord rec;
    Status st;  // ok until the reader fails; no record is read after that
    bool more = false;
  };
  static int After(int i) { return i == 2 ? 0 : i + 1; }
  // The record after `prev` into `dst` (a place already given out, so its
  // status is ok); none after an end or an error.
  void Read(Ahead& dst, const Ahead& prev) {
    dst.more = false;
    if (!prev.st.ok() || !prev.more) return;
    auto r = reader_.Next(&dst.rec);
    if (!r.ok()) {
      dst.st = r.status();
      return;
    }
    dst.more = *r;
  }

  TraceReader& reader_;
  TraceRunner& runner_;
  Ahead ahead_[3];
  int at_ = 0;  // the record Next gives
};

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
  RecordsAhead records(**reader, runner, *first, rec);
  for (;;) {
    auto next = records.Next();
    if (!next.ok()) return next.status();
    if (*next == nullptr) break;
    if (Status st = runner.Apply(**next, o.trace); !st.ok()) return st;
    ++state->records;
    if (observer != nullptr && !observer->AfterRecord(**next, *state)) break;
    records.Done();
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
