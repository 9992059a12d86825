// SPDX-License-Identifier: MIT
// The allocator calls of a replay, recorded and made again
// (include/swaplab/workload/call_tape.h).
#include "swaplab/workload/call_tape.h"

#include <fmt/format.h>

#include <memory>
#include <string>

namespace swaplab::workload {
namespace {

using alloc::Folio;
using alloc::FolioLockGuard;
using alloc::SwapEntry;
using alloc::SwapSystem;

// A fresh Folio's fields as StateOf packs them.
constexpr uint16_t kFreshState = TapeCall::kMapped;

const char* OpName(CallOp op) {
  switch (op) {
    case CallOp::kSwapon:
      return "Swapon";
    case CallOp::kSwapoff:
      return "Swapoff";
    case CallOp::kRunOn:
      return "RunOn";
    case CallOp::kSwapOut:
      return "SwapOutFolio";
    case CallOp::kFolioDupSwap:
      return "FolioDupSwap";
    case CallOp::kFolioPutSwap:
      return "FolioPutSwap";
    case CallOp::kFolioFreeSwap:
      return "FolioFreeSwap";
    case CallOp::kSwapCacheAdd:
      return "SwapCacheAddFolio";
    case CallOp::kSwapCacheDel:
      return "SwapCacheDelFolio";
    case CallOp::kDupEntry:
      return "SwapDupEntryDirect";
    case CallOp::kPutEntries:
      return "SwapPutEntriesDirect";
    case CallOp::kScanBase:
      return "SetScanBase";
    case CallOp::kSuspend:
      return "SetStorageSuspended";
    case CallOp::kFolioState:
      return "(folio fields)";
  }
  return "?";
}

// One call on a folio (locked by the caller); FolioFreeSwap's answer in
// *freed. The recording run and CallReplay both make folio calls here.
Status MakeFolioCall(SwapSystem& sys, CallOp op, Folio& f, SwapEntry e, uint64_t n, bool* freed) {
  switch (op) {
    case CallOp::kFolioDupSwap:
      return sys.FolioDupSwap(f);
    case CallOp::kFolioPutSwap:
      return sys.FolioPutSwap(f, static_cast<int>(n));
    case CallOp::kFolioFreeSwap:
      *freed = sys.FolioFreeSwap(f);
      return Status::Ok();
    case CallOp::kSwapCacheAdd:
      return sys.SwapCacheAddFolio(f, e);
    case CallOp::kSwapCacheDel:
      return sys.SwapCacheDelFolio(f);
    default:
      return Status(-EINVAL, std::string(OpName(op)) + " is not a folio call");
  }
}

int CodeOf(CallOp op, const Status& st, bool freed) {
  return op == CallOp::kFolioFreeSwap ? static_cast<int>(freed) : st.code();
}

std::string EntryText(SwapEntry e) {
  return e.valid() ? fmt::format("type {} offset {}", e.type, e.offset) : "no slot";
}

// CallReplay::Run's steps: one call made after the other, with the answer
// of the call being made.
class CallMaker {
 public:
  CallMaker(const CallTape& tape, SwapSystem& sys, Folio* folios)
      : tape_(tape), sys_(sys), folios_(folios) {}

  Status Run(bool check) {
    const std::vector<TapeCall>& calls = tape_.calls();
    for (size_t i = 0; i < calls.size(); ++i) {
      got_ = TapeCall{};
      if (Status st = Make(calls[i]); !st.ok()) return st;
      if (check && !Same(calls[i], got_)) return Mismatch(i, calls[i]);
    }
    return Status::Ok();
  }

 private:
  Status Make(const TapeCall& c) {
    if (c.folio >= tape_.folios() && UsesFolio(c.op))
      return Status(-EINVAL, fmt::format("folio {} is not on the tape", c.folio));
    switch (c.op) {
      case CallOp::kSwapon:
        return Swapon(c);
      case CallOp::kSwapoff:
        got_.code = sys_.Swapoff(c.entry.type).code();
        break;
      case CallOp::kRunOn:
        got_.code = sys_.RunOn(c.cpu).code();
        break;
      case CallOp::kSwapOut:
        return SwapOut(c);
      case CallOp::kDupEntry:
        got_.code = sys_.SwapDupEntryDirect(c.entry).code();
        break;
      case CallOp::kPutEntries:
        got_.code = sys_.SwapPutEntriesDirect(c.entry, c.n).code();
        break;
      case CallOp::kScanBase:
        got_.code = sys_.SetScanBase(c.entry.type, c.cpu, c.n).code();
        break;
      case CallOp::kSuspend:
        sys_.SetStorageSuspended(c.flags != 0);
        break;
      case CallOp::kFolioState:
        SetState(c);
        break;
      default:
        FolioCall(c);
        break;
    }
    return Status::Ok();
  }
  static bool UsesFolio(CallOp op) {
    return op == CallOp::kSwapOut || op == CallOp::kFolioState ||
           (op >= CallOp::kFolioDupSwap && op <= CallOp::kSwapCacheDel);
  }
  Status Swapon(const TapeCall& c) {
    if (c.n >= tape_.swapons().size())
      return Status(-EINVAL, fmt::format("swapon {} is not on the tape", c.n));
    auto t = sys_.Swapon(tape_.swapons()[c.n]);
    got_.code = t.ok() ? *t : t.status().code();
    return Status::Ok();
  }
  Status SwapOut(const TapeCall& c) {
    const std::vector<uint32_t>& numbers = tape_.split_pages();
    if (c.n > numbers.size() || c.split > numbers.size() - c.n)
      return Status(-EINVAL, "split pages outside the tape");
    split_.clear();
    for (uint64_t k = c.n; k < c.n + c.split; ++k) {
      if (numbers[k] >= tape_.folios()) return Status(-EINVAL, "a split page outside the tape");
      split_.push_back(&folios_[numbers[k]]);
    }
    Folio& f = folios_[c.folio];
    FolioLockGuard g(f);
    auto out = sys_.SwapOutFolio(c.cpu, f, split_);
    got_.code = out.status().code();
    if (out.ok()) {
      got_.placed = out->pages_placed;
      got_.did_split = out->split;
    }
    got_.got = f.swap();
    return Status::Ok();
  }
  void FolioCall(const TapeCall& c) {
    Folio& f = folios_[c.folio];
    FolioLockGuard g(f);
    bool freed = false;
    const Status st = MakeFolioCall(sys_, c.op, f, c.entry, c.n, &freed);
    got_.code = CodeOf(c.op, st, freed);
    got_.got = f.swap();
  }
  void SetState(const TapeCall& c) {
    Folio& f = folios_[c.folio];
    f.set_order(static_cast<int>(c.n));
    f.mapped = c.flags & TapeCall::kMapped;
    f.writeback = c.flags & TapeCall::kWriteback;
    f.dirty = c.flags & TapeCall::kDirty;
  }
  static bool Same(const TapeCall& want, const TapeCall& got) {
    return want.code == got.code && want.placed == got.placed && want.did_split == got.did_split &&
           want.got == got.got;
  }
  Status Mismatch(size_t i, const TapeCall& c) const {
    return Status(-EINVAL,
                  fmt::format("call {} of {} ({}, folio {}): answered {} with {}, placed {}{}, "
                              "where the recording run answered {} with {}, placed {}{}",
                              i + 1, tape_.calls().size(), OpName(c.op), c.folio, got_.code,
                              EntryText(got_.got), got_.placed, got_.did_split ? ", split" : "",
                              c.code, EntryText(c.got), c.placed, c.did_split ? ", split" : ""));
  }

  const CallTape& tape_;
  SwapSystem& sys_;
  Folio* folios_;
  std::vector<Folio*> split_;
  TapeCall got_;
};

}  // namespace

uint16_t CallTape::StateOf(const Folio& f) {
  return static_cast<uint16_t>(f.order() << 3 | (f.mapped ? TapeCall::kMapped : 0) |
                               (f.writeback ? TapeCall::kWriteback : 0) |
                               (f.dirty ? TapeCall::kDirty : 0));
}

uint32_t CallTape::Number(const Folio& f) {
  auto [it, added] = numbers_.try_emplace(&f, folios());
  if (added) state_.push_back(kFreshState);
  const uint32_t n = it->second;
  if (const uint16_t s = StateOf(f); s != state_[n]) {
    calls_.push_back({.op = CallOp::kFolioState,
                      .flags = static_cast<uint8_t>(s & 7),
                      .folio = n,
                      .n = static_cast<uint64_t>(s >> 3)});
    state_[n] = s;
  }
  return n;
}

void CallTape::Saw(uint32_t number, const Folio& f) { state_[number] = StateOf(f); }

uint64_t CallTape::AddSwapon(const alloc::SwaponOptions& o) {
  swapons_.push_back(o);
  return swapons_.size() - 1;
}

uint64_t CallTape::AddSplit(std::span<Folio* const> pages) {
  std::vector<uint32_t> numbers;
  numbers.reserve(pages.size());
  for (Folio* p : pages) numbers.push_back(Number(*p));  // their fields before the call
  const uint64_t first = split_.size();
  split_.insert(split_.end(), numbers.begin(), numbers.end());
  return first;
}

CallReplay::CallReplay(const CallTape& tape, SwapSystem& sys)
    : tape_(tape), sys_(sys), folios_(std::make_unique<Folio[]>(tape.folios())) {}

Status CallReplay::Run(bool check) { return CallMaker(tape_, sys_, folios_.get()).Run(check); }

Result<int> AllocCalls::Swapon(const alloc::SwaponOptions& o) {
  auto t = sys_.Swapon(o);
  if (tape_) [[unlikely]]
    tape_->Add(
        {.op = CallOp::kSwapon, .n = tape_->AddSwapon(o), .code = t.ok() ? *t : t.status().code()});
  return t;
}

Status AllocCalls::Swapoff(int type) {
  Status st = sys_.Swapoff(type);
  if (tape_) [[unlikely]]
    tape_->Add({.op = CallOp::kSwapoff, .entry = {type, 0}, .code = st.code()});
  return st;
}

Status AllocCalls::SetScanBase(int type, int cpu, uint64_t offset) {
  Status st = sys_.SetScanBase(type, cpu, offset);
  if (tape_) [[unlikely]]
    tape_->Add({.op = CallOp::kScanBase,
                .cpu = static_cast<int16_t>(cpu),
                .entry = {type, 0},
                .n = offset,
                .code = st.code()});
  return st;
}

Status AllocCalls::Taped(CallOp op, Folio& f, SwapEntry e, uint64_t n) {
  const uint32_t number = tape_->Number(f);
  bool freed = false;
  Status st = MakeFolioCall(sys_, op, f, e, n, &freed);
  tape_->Add({.op = op,
              .folio = number,
              .entry = e,
              .n = n,
              .code = CodeOf(op, st, freed),
              .got = f.swap()});
  tape_->Saw(number, f);
  return st;
}

bool AllocCalls::TapedFreeSwap(Folio& f) {
  const uint32_t number = tape_->Number(f);
  bool freed = false;
  (void)MakeFolioCall(sys_, CallOp::kFolioFreeSwap, f, {}, 0, &freed);
  tape_->Add({.op = CallOp::kFolioFreeSwap, .folio = number, .code = freed, .got = f.swap()});
  tape_->Saw(number, f);
  return freed;
}

Result<alloc::SwapOutResult> AllocCalls::TapedSwapOut(alloc::CpuId cpu, Folio& f,
                                                      std::span<Folio* const> split) {
  const uint32_t number = tape_->Number(f);
  const uint64_t first = tape_->AddSplit(split);
  auto out = sys_.SwapOutFolio(cpu, f, split);
  TapeCall c{.op = CallOp::kSwapOut,
             .cpu = static_cast<int16_t>(cpu),
             .folio = number,
             .n = first,
             .split = static_cast<uint32_t>(split.size()),
             .code = out.status().code(),
             .got = f.swap()};
  if (out.ok()) {
    c.placed = out->pages_placed;
    c.did_split = out->split;
  }
  tape_->Add(c);
  tape_->Saw(number, f);
  for (size_t k = 0; k < split.size(); ++k) tape_->Saw(tape_->split_pages()[first + k], *split[k]);
  return out;
}

}  // namespace swaplab::workload
