// SPDX-License-Identifier: MIT
// Drives one SwapSystem through a sequence of abstract operations, keeps the
// reference model (swap_model.h) in step, and checks after every step:
// CheckInvariants(), every slot against the model, device and global
// counters, folio placement (§8 S4, C5, O1, O3), which folios may leave the
// swap cache (§3.3, §4.2, §4.4, §4.6) and that rejected calls change nothing.
//
// An operation is an OpSpec: a kind and four random words that the harness
// interprets against the current state ("the a-th cached folio"), so every
// sequence is executable and rapidcheck can shrink freely.
//
// The definitions are named after the allocator file whose behaviour they
// exercise (src/alloc/<file>.cc):
//   ops_<file>.cc     operations that succeed or may fail for lack of space;
//   errors_<file>.cc  calls that must be rejected (errors.cc picks one);
//   checks_<file>.cc  the checks after every step;
//   harness.cc        construction and the step loop;
//   model_state.cc    the model's folios and the picks from random words.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "alloc/property/swap_model.h"
#include "swaplab/alloc/swap_system.h"

// Fails the case with the message unless cond holds; the message is built
// only on failure (the checks run for every slot after every step).
#define HARNESS_CHECK(cond, ...)    \
  do {                              \
    if (!(cond)) Fail(__VA_ARGS__); \
  } while (false)

namespace swaplab::alloc::model {

enum class OpKind : uint8_t {
  kAlloc,        // FolioAllocSwap
  kDupFolio,     // FolioDupSwap (unmap), possibly many times
  kZap,          // SwapPutEntriesDirect over a run of referenced slots
  kCacheDel,     // SwapCacheDelFolio (reclaim after writeback)
  kPutFolio,     // FolioPutSwap (fault maps the page again)
  kSwapOut,      // SwapOutFolio (with split fallback)
  kCacheAdd,     // SwapCacheAddFolio (swap-in over SHADOW slots)
  kFreeSwap,     // FolioFreeSwap
  kTryReclaim,   // TryToReclaimSwap
  kDupDirect,    // SwapDupEntryDirect (fork)
  kHibAlloc,     // AllocHibernationSlot
  kHibFree,      // FreeHibernationSlot
  kFolioFlags,   // set mapped / writeback
  kRunDeferred,  // RunDeferredWork
  kReclaimFull,  // ReclaimFullClusters
  kSuspend,      // SetStorageSuspended
  kSwapon,
  kSwapoff,
  kPin,      // hibernation pin / unpin / lookup
  kQueries,  // read-only hooks: CountSwapPages, SwapdevBlock, ...
  kError,    // a call that must fail and change nothing
  kNumKinds
};

const char* OpName(OpKind k);

struct OpSpec {
  OpKind kind = OpKind::kAlloc;
  uint32_t a = 0, b = 0, c = 0, d = 0;
};

void showValue(const OpSpec& op, std::ostream& os);

// Per test case, shared by every preset the case runs under.
struct CaseConfig {
  int cluster_shift = 4;
  bool inline_work = true;
  uint32_t knobs = 0;  // count_max / slot_cache_batch / fail_extend_table_alloc
};

void showValue(const CaseConfig& c, std::ostream& os);

// Records every discard the allocator issues (single-threaded use).
class RecordingSink : public DiscardSink {
 public:
  struct Rec {
    int type;
    uint64_t first, nr;
  };
  void Discard(int type, uint64_t first, uint64_t nr) override;
  std::vector<Rec> recs;
};

class Harness {
 public:
  Harness(const std::string& preset, const CaseConfig& cfg);
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  // Runs the operations; fails the rapidcheck case at the first violation.
  void Run(const std::vector<OpSpec>& ops);
  // One line per operation with its observable outcome (determinism check).
  std::string trace() const { return trace_.str(); }

 private:
  enum class Vanish { kNone, kAny, kFullClusters };
  struct Scan {  // refreshed by CheckAll()
    uint64_t empty = 0, empty_not_discard = 0, free_clusters = 0;
    bool on_avail = false;
    int prio = 0;
    std::set<uint64_t> full_clusters;
  };

  // --- harness.cc ---
  void Apply(const OpSpec& op);
  [[noreturn]] void Fail(const std::string& what) const;
  void CheckStatusOk(const Status& s, const std::string& what) const;

  // --- the checks ---
  // Everything after every step (checks_invariants.cc).
  void CheckAll();
  // checks_swap_reclaim.cc
  void CheckDiscards(uint64_t discarded_before);
  // Folios that left the swap cache without the test asking: allowed only
  // for reclaim-capable operations, only cache-only unlocked folios.
  void ReconcileVanished(Vanish allow, const std::set<int>& expected_new = {},
                         const std::map<int, std::set<uint64_t>>* full_before = nullptr,
                         int only_type = -1);
  // checks_device_search.cc
  void AcceptAllocation(int fi, const std::string& what);
  bool AllocMayReclaim() const;
  bool Order0MustSucceed() const;
  bool LargeMustSucceed() const;
  // §2.3 device selection, checked on a successful allocation of `order`
  // on `cpu` against the state before the call (checks_avail_list.cc).
  struct Selection {
    std::vector<int> avail;  // avail_devices() before the call
    PerCpuHint hint;
    bool exact = false;  // nothing could be reclaimed during the call
  };
  Selection BeforeAlloc(int cpu, int order) const;
  void CheckSelection(const Selection& before, SwapEntry got, int order);

  // --- model_state.cc ---
  uint64_t C() const { return uint64_t{1} << cfg_.cluster_shift; }
  MSlot& SlotOf(SwapEntry e) { return devs_.at(e.type).slots.at(e.offset); }
  int NewFolio(int order);
  void ModelCache(int fi, SwapEntry base, bool fresh);
  void ModelUncache(int fi);
  bool AllCountsZero(int fi) const;
  std::vector<int> CachedFolios() const;
  std::vector<SwapEntry> SlotsWhere(const std::function<bool(const MSlot&)>& pred) const;
  std::map<int, std::set<uint64_t>> FullClusters() const;
  // With fail_extend_: +1 on any of these slots needs the extend table.
  bool NeedsExtend(SwapEntry first, int n);
  int PickCpu(uint32_t x) const;
  int PickOrder(uint32_t x) const;
  int PickCachedFolio(uint32_t x) const;  // -1 if none

  // --- operations that succeed or may fail for lack of space ---
  void OpAlloc(const OpSpec& op);    // ops_fast_path.cc
  void OpSwapOut(const OpSpec& op);  // ops_swap_out.cc
  // ops_swap_free.cc
  void OpDupFolio(const OpSpec& op);
  void OpPutFolio(const OpSpec& op);
  void OpDupDirect(const OpSpec& op);
  void OpZap(const OpSpec& op);
  void OpCacheDel(const OpSpec& op);
  void OpFreeSwap(const OpSpec& op);
  void OpCacheAdd(const OpSpec& op);
  // ops_swap_reclaim.cc
  void OpTryReclaim(const OpSpec& op);
  void OpReclaimFull(const OpSpec& op);
  void OpRunDeferred(const OpSpec& op);
  void OpSuspend(const OpSpec& op);
  void OpFolioFlags(const OpSpec& op);
  // ops_hibernation_hooks.cc
  void OpHibAlloc(const OpSpec& op);
  void OpHibFree(const OpSpec& op);
  void OpPin(const OpSpec& op);
  void OpQueries(const OpSpec& op);
  // ops_swapon.cc
  SwaponOptions MakeSwapon(const OpSpec& op);
  void OpSwapon(const OpSpec& op);
  void OpSwapoff(const OpSpec& op);
  // Swapoff's unuse callback (never throws: it runs inside Swapoff).
  void UnuseOne(SwapEntry e, std::vector<std::string>& errs);

  // --- calls that must be rejected (errors.cc) ---
  void OpError(const OpSpec& op);
  // `call` must fail (with `code` unless 0) and change nothing observable.
  void ExpectRejected(const std::string& what, int code, const std::function<Status()>& call);
  void ExpectUnchanged(const std::vector<std::string>& before, const std::string& what);
  int InactiveType() const;       // the lowest type that is not swapped on
  int UncachedFolio(uint32_t x);  // a folio not in the swap cache, new if none
  bool PickSlot(uint32_t x, const std::function<bool(const MSlot&)>& pred, SwapEntry* out) const;
  // One per errors_<file>.cc; `which` is op.a % 24, the call OpError picked.
  void RejectFastPath(const OpSpec& op, uint32_t which);
  void RejectSwapFree(const OpSpec& op, uint32_t which);
  void RejectSwapReclaim(const OpSpec& op, uint32_t which);
  void RejectHibernationHooks(const OpSpec& op, uint32_t which);
  void RejectSwapon(const OpSpec& op, uint32_t which);
  void OpBadSwapon(const OpSpec& op);  // errors_swapon.cc: which == 0
  void RejectSwapSystem();

  std::string preset_;
  CaseConfig cfg_;
  Policy policy_;
  bool suspended_ = false;
  bool fail_extend_ = false;  // SystemOptions::fail_extend_table_alloc
  int step_ = 0;
  int serial_ = 0;  // swapon names, bdevs
  OpKind kind_ = OpKind::kAlloc;
  std::string desc_;  // current operation, for messages
  std::ostringstream trace_;
  std::map<int, MDevice> devs_;
  std::map<int, Scan> scan_;
  std::set<std::pair<int, uint64_t>> exempt_;  // slots allocated by this op
  int swapped_off_type_ = -1;
  MDevice swapped_off_;
  int swapped_on_type_ = -1;
  std::vector<uint64_t> last_counters_;
  // Declared before sys_ so that the system is destroyed first.
  RecordingSink sink_;
  std::vector<MFolio> folios_;
  std::unique_ptr<SwapSystem> sys_;
};

}  // namespace swaplab::alloc::model
