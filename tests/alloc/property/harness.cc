// SPDX-License-Identifier: MIT
// Harness core: operation names, construction, the step loop that applies
// one operation and then runs every check, and failure reporting.
#include "alloc/property/harness.h"

#include <rapidcheck.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace swaplab::alloc::model {

const char* OpName(OpKind k) {
  switch (k) {
    case OpKind::kAlloc:
      return "Alloc";
    case OpKind::kDupFolio:
      return "DupFolio";
    case OpKind::kZap:
      return "Zap";
    case OpKind::kCacheDel:
      return "CacheDel";
    case OpKind::kPutFolio:
      return "PutFolio";
    case OpKind::kSwapOut:
      return "SwapOut";
    case OpKind::kCacheAdd:
      return "CacheAdd";
    case OpKind::kFreeSwap:
      return "FreeSwap";
    case OpKind::kTryReclaim:
      return "TryReclaim";
    case OpKind::kDupDirect:
      return "DupDirect";
    case OpKind::kHibAlloc:
      return "HibAlloc";
    case OpKind::kHibFree:
      return "HibFree";
    case OpKind::kFolioFlags:
      return "FolioFlags";
    case OpKind::kRunDeferred:
      return "RunDeferred";
    case OpKind::kReclaimFull:
      return "ReclaimFull";
    case OpKind::kSuspend:
      return "Suspend";
    case OpKind::kSwapon:
      return "Swapon";
    case OpKind::kSwapoff:
      return "Swapoff";
    case OpKind::kPin:
      return "Pin";
    case OpKind::kQueries:
      return "Queries";
    case OpKind::kError:
      return "Error";
    case OpKind::kNumKinds:
      break;
  }
  return "?";
}

void showValue(const OpSpec& op, std::ostream& os) {
  os << OpName(op.kind) << "{" << op.a << "," << op.b << "," << op.c << "," << op.d << "}";
}

void showValue(const CaseConfig& c, std::ostream& os) {
  os << "{cluster_shift=" << c.cluster_shift << ", inline_work=" << c.inline_work
     << ", knobs=" << c.knobs << "}";
}

void RecordingSink::Discard(int type, uint64_t first, uint64_t nr) {
  recs.push_back({type, first, nr});
}

namespace {

// SWAPLAB_PROPERTY_STATS=1: at exit, print how often each kind of outcome
// occurred (the operation description with digits removed), to see what
// the generators reach.
class OutcomeStats {
 public:
  static OutcomeStats& Get() {
    static OutcomeStats s;
    return s;
  }
  bool enabled() const { return enabled_; }
  void Add(const std::string& desc) {
    std::string key;
    for (char ch : desc) {
      if (ch < '0' || ch > '9') key += ch;
    }
    ++counts_[key];
  }
  ~OutcomeStats() {
    if (!enabled_) return;
    std::vector<std::pair<uint64_t, std::string>> v;
    for (const auto& [k, n] : counts_) v.push_back({n, k});
    std::sort(v.rbegin(), v.rend());
    for (const auto& [n, k] : v)
      std::fprintf(stderr, "%10lu  %s\n", static_cast<unsigned long>(n), k.c_str());
  }

 private:
  OutcomeStats() : enabled_(std::getenv("SWAPLAB_PROPERTY_STATS") != nullptr) {}
  bool enabled_;
  std::map<std::string, uint64_t> counts_;
};

}  // namespace

Harness::Harness(const std::string& preset, const CaseConfig& cfg) : preset_(preset), cfg_(cfg) {
  auto p = Policy::Preset(preset);
  if (!p.ok()) RC_FAIL("Policy::Preset(" + preset + "): " + p.status().ToString());
  policy_ = *p;
  // Small devices: make the knobs that depend on size bite (extend table
  // after a few dups, slot cache thresholds within reach).
  Policy tuned = policy_;
  const uint32_t cm = cfg.knobs % 3;
  if (cm == 1) tuned.count_max = 3;
  if (cm == 2) tuned.count_max = 7;
  if (tuned.slot_cache) {
    const uint32_t b = (cfg.knobs / 3) % 3;
    if (b == 1) tuned.slot_cache_batch = 4;
    if (b == 2) tuned.slot_cache_batch = 16;
  }
  if (tuned.Validate().ok()) policy_ = tuned;
  SystemOptions o;
  o.cluster_shift = cfg.cluster_shift;
  o.nr_cpus = 4;
  o.policy = policy_;
  o.run_deferred_work_inline = cfg.inline_work;
  fail_extend_ = (cfg.knobs / 9) % 6 == 5;
  o.fail_extend_table_alloc = fail_extend_;
  sys_ = std::make_unique<SwapSystem>(o);
  last_counters_ = CounterValues(sys_->counters());
}

void Harness::Fail(const std::string& what) const {
  std::string msg = "[preset " + preset_ +
                    ", policy count_max=" + std::to_string(policy_.count_max) +
                    (fail_extend_ ? " fail_extend_table_alloc" : "") +
                    " slot_cache=" + std::to_string(policy_.slot_cache) + "/" +
                    std::to_string(policy_.slot_cache_batch) + ", step " + std::to_string(step_) +
                    ": " + desc_ + "] " + what;
  // Triage: SWAPLAB_PROPERTY_DUMP=1 appends everything observable.
  if (std::getenv("SWAPLAB_PROPERTY_DUMP") != nullptr && sys_) {
    msg += "\n--- state after the failing step:";
    for (const std::string& line : Observe(*sys_, folios_)) msg += "\n  " + line;
  }
  RC_FAIL(msg);
}

void Harness::Run(const std::vector<OpSpec>& ops) {
  CheckAll();
  for (const OpSpec& op : ops) {
    ++step_;
    Apply(op);
  }
}

void Harness::CheckStatusOk(const Status& s, const std::string& what) const {
  if (!s.ok()) Fail(what + " returned " + s.ToString());
}

void Harness::Apply(const OpSpec& op) {
  kind_ = op.kind;
  desc_ = OpName(op.kind);
  exempt_.clear();
  swapped_off_type_ = swapped_on_type_ = -1;
  sink_.recs.clear();
  const uint64_t discarded_before = sys_->counters().clusters_discarded;
  switch (op.kind) {
    case OpKind::kAlloc:
      OpAlloc(op);
      break;
    case OpKind::kDupFolio:
      OpDupFolio(op);
      break;
    case OpKind::kZap:
      OpZap(op);
      break;
    case OpKind::kCacheDel:
      OpCacheDel(op);
      break;
    case OpKind::kPutFolio:
      OpPutFolio(op);
      break;
    case OpKind::kSwapOut:
      OpSwapOut(op);
      break;
    case OpKind::kCacheAdd:
      OpCacheAdd(op);
      break;
    case OpKind::kFreeSwap:
      OpFreeSwap(op);
      break;
    case OpKind::kTryReclaim:
      OpTryReclaim(op);
      break;
    case OpKind::kDupDirect:
      OpDupDirect(op);
      break;
    case OpKind::kHibAlloc:
      OpHibAlloc(op);
      break;
    case OpKind::kHibFree:
      OpHibFree(op);
      break;
    case OpKind::kFolioFlags:
      OpFolioFlags(op);
      break;
    case OpKind::kRunDeferred:
      OpRunDeferred(op);
      break;
    case OpKind::kReclaimFull:
      OpReclaimFull(op);
      break;
    case OpKind::kSuspend:
      OpSuspend(op);
      break;
    case OpKind::kSwapon:
      OpSwapon(op);
      break;
    case OpKind::kSwapoff:
      OpSwapoff(op);
      break;
    case OpKind::kPin:
      OpPin(op);
      break;
    case OpKind::kQueries:
      OpQueries(op);
      break;
    case OpKind::kError:
      OpError(op);
      break;
    case OpKind::kNumKinds:
      break;
  }
  RC_LOG() << step_ << ": " << desc_ << "\n";
  if (OutcomeStats::Get().enabled()) OutcomeStats::Get().Add(desc_);
  trace_ << desc_ << "\n";
  CheckDiscards(discarded_before);
  CheckAll();
}

}  // namespace swaplab::alloc::model
