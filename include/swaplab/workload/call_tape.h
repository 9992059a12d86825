// SPDX-License-Identifier: MIT
// The allocator calls a trace replay makes, in order, with what each one
// answered: a TraceRunner records them when given a tape (set_tape), and
// CallReplay makes the same calls again on a fresh SwapSystem. That second
// run is the replay's allocator work alone — no trace reader, no runner
// bookkeeping — and is the floor the whole replay is measured against
// (bench/alloc_bench BM_ReplayCalls, docs/performance.md "Replay per record").
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "swaplab/alloc/swap_system.h"

namespace swaplab::workload {

enum class CallOp : uint8_t {
  kSwapon,
  kSwapoff,
  kRunOn,
  kSwapOut,       // SwapOutFolio
  kFolioDupSwap,  // the whole folio
  kFolioPutSwap,  // one page
  kFolioFreeSwap,
  kSwapCacheAdd,
  kSwapCacheDel,
  kDupEntry,    // SwapDupEntryDirect
  kPutEntries,  // SwapPutEntriesDirect
  kScanBase,
  kSuspend,     // SetStorageSuspended
  kFolioState,  // not a call: the caller changed a folio's fields
};

// One call. Folios are named by their number on the tape (0, 1, …: each
// distinct Folio object the recording run passed).
struct TapeCall {
  CallOp op = CallOp::kRunOn;
  // kFolioState: kMapped | kWriteback | kDirty; kSuspend: 1 to suspend.
  uint8_t flags = 0;
  int16_t cpu = 0;
  uint32_t folio = 0;
  alloc::SwapEntry entry{};  // kSwapCacheAdd, kDupEntry, kPutEntries; kSwapoff, kScanBase: its type
  // kPutEntries: the count; kFolioPutSwap: the page; kScanBase: the offset;
  // kSwapOut: the first split page in split_pages(); kSwapon: the index in
  // swapons(); kFolioState: the order.
  uint64_t n = 0;
  uint32_t split = 0;  // kSwapOut: how many split pages follow split_pages()[n]
  // What the recording run got: the status code (FolioFreeSwap: 1 for
  // true; Swapon: the type), SwapOutFolio's pages placed and split, and
  // the folio's first slot after the call.
  int code = 0;
  int placed = 0;
  bool did_split = false;
  alloc::SwapEntry got{};

  static constexpr uint8_t kMapped = 1, kWriteback = 2, kDirty = 4;
};

class CallTape {
 public:
  const std::vector<TapeCall>& calls() const { return calls_; }
  const std::vector<alloc::SwaponOptions>& swapons() const { return swapons_; }
  const std::vector<uint32_t>& split_pages() const { return split_; }
  uint32_t folios() const { return static_cast<uint32_t>(state_.size()); }

  // Recording (AllocCalls). Number: the folio's number, with a kFolioState
  // call first when its fields differ from what the tape last saw of it.
  uint32_t Number(const alloc::Folio& f);
  // The folio's fields after a call, as the call left them.
  void Saw(uint32_t number, const alloc::Folio& f);
  void Add(const TapeCall& c) { calls_.push_back(c); }
  uint64_t AddSwapon(const alloc::SwaponOptions& o);
  uint64_t AddSplit(std::span<alloc::Folio* const> pages);  // the first index

 private:
  static uint16_t StateOf(const alloc::Folio& f);
  std::vector<TapeCall> calls_;
  std::vector<alloc::SwaponOptions> swapons_;
  std::vector<uint32_t> split_;
  std::unordered_map<const alloc::Folio*, uint32_t> numbers_;
  std::vector<uint16_t> state_;  // by number: order << 3 | flags, as last seen
};

// Makes a tape's calls on `sys` in order, each folio call under that
// folio's lock as TraceRunner makes it. `sys` must be a fresh system with
// the recording run's options. The tape's folios are objects of the
// CallReplay: the system's swap cache points at them, so keep it alive
// as long as the system is used.
class CallReplay {
 public:
  CallReplay(const CallTape& tape, alloc::SwapSystem& sys);
  // check: every answer must be the recorded one; the first that is not
  // gives -EINVAL naming the call and both answers. Without check the
  // calls are only made (the benchmark's timed loop). A tape whose calls
  // name folios, swapons or split pages it does not hold gives -EINVAL.
  // Run once.
  Status Run(bool check = true);

 private:
  const CallTape& tape_;
  alloc::SwapSystem& sys_;
  std::unique_ptr<alloc::Folio[]> folios_;
};

// The allocator calls of a TraceRunner: each forwards to the system and,
// when a tape is attached, records the call and its answer.
class AllocCalls {
 public:
  explicit AllocCalls(alloc::SwapSystem& sys) : sys_(sys) {}
  void set_tape(CallTape* tape) { tape_ = tape; }
  // After the caller changed a folio's fields outside a call.
  void Changed(const alloc::Folio& f) {
    if (tape_) [[unlikely]]
      (void)tape_->Number(f);
  }

  Result<int> Swapon(const alloc::SwaponOptions& o);
  Status Swapoff(int type);
  Status RunOn(alloc::CpuId cpu) {
    Status st = sys_.RunOn(cpu);
    if (tape_) [[unlikely]]
      tape_->Add({.op = CallOp::kRunOn, .cpu = static_cast<int16_t>(cpu), .code = st.code()});
    return st;
  }
  Result<alloc::SwapOutResult> SwapOutFolio(alloc::CpuId cpu, alloc::Folio& f,
                                            std::span<alloc::Folio* const> split = {}) {
    if (tape_) [[unlikely]]
      return TapedSwapOut(cpu, f, split);
    return sys_.SwapOutFolio(cpu, f, split);
  }
  Status FolioDupSwap(alloc::Folio& f) {
    if (tape_) [[unlikely]]
      return Taped(CallOp::kFolioDupSwap, f);
    return sys_.FolioDupSwap(f);
  }
  Status FolioPutSwap(alloc::Folio& f, int page) {
    if (tape_) [[unlikely]]
      return Taped(CallOp::kFolioPutSwap, f, {}, static_cast<uint64_t>(page));
    return sys_.FolioPutSwap(f, page);
  }
  bool FolioFreeSwap(alloc::Folio& f) {
    if (tape_) [[unlikely]]
      return TapedFreeSwap(f);
    return sys_.FolioFreeSwap(f);
  }
  Status SwapCacheAddFolio(alloc::Folio& f, alloc::SwapEntry e) {
    if (tape_) [[unlikely]]
      return Taped(CallOp::kSwapCacheAdd, f, e);
    return sys_.SwapCacheAddFolio(f, e);
  }
  Status SwapCacheDelFolio(alloc::Folio& f) {
    if (tape_) [[unlikely]]
      return Taped(CallOp::kSwapCacheDel, f);
    return sys_.SwapCacheDelFolio(f);
  }
  Status SwapDupEntryDirect(alloc::SwapEntry e) {
    Status st = sys_.SwapDupEntryDirect(e);
    if (tape_) [[unlikely]]
      tape_->Add({.op = CallOp::kDupEntry, .entry = e, .code = st.code()});
    return st;
  }
  Status SwapPutEntriesDirect(alloc::SwapEntry e, uint64_t nr) {
    Status st = sys_.SwapPutEntriesDirect(e, nr);
    if (tape_) [[unlikely]]
      tape_->Add({.op = CallOp::kPutEntries, .entry = e, .n = nr, .code = st.code()});
    return st;
  }
  Status SetScanBase(int type, int cpu, uint64_t offset);
  void SetStorageSuspended(bool on) {
    sys_.SetStorageSuspended(on);
    if (tape_) [[unlikely]]
      tape_->Add({.op = CallOp::kSuspend, .flags = static_cast<uint8_t>(on)});
  }

 private:
  // A folio call made and recorded.
  Status Taped(CallOp op, alloc::Folio& f, alloc::SwapEntry e = {}, uint64_t n = 0);
  bool TapedFreeSwap(alloc::Folio& f);
  Result<alloc::SwapOutResult> TapedSwapOut(alloc::CpuId cpu, alloc::Folio& f,
                                            std::span<alloc::Folio* const> split);
  alloc::SwapSystem& sys_;
  CallTape* tape_ = nullptr;
};

}  // namespace swaplab::workload
#pragma GCC visibility pop
