// SPDX-License-Identifier: MIT
// swapon and swapoff (src/alloc/swapon.cc, allocator spec §5): devices
// made from an operation's random words, and swapoff with or without an
// unuse callback that drops the model's references.
#include <algorithm>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

namespace {

uint32_t Mix(uint32_t x, uint32_t i) {
  uint32_t h = x * 2654435761u + (i + 1) * 40503u;
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return h;
}

}  // namespace

SwaponOptions Harness::MakeSwapon(const OpSpec& op) {
  SwaponOptions o;
  const uint64_t clusters = 2 + op.a % 7;
  const uint64_t tail = ((op.a >> 3) & 1) ? (op.a >> 4) % C() : 0;
  o.pages = clusters * C() - tail;
  ++serial_;
  o.name = "dev" + std::to_string(serial_);
  o.bdev = 100 + serial_;
  o.first_block = 10000 * static_cast<uint64_t>(serial_);
  o.ssd = op.b & 1;
  o.blkdev = ((op.b >> 1) & 3) != 0;
  o.discard = static_cast<DiscardMode>((op.b >> 3) & 3);
  o.discard_supported = ((op.b >> 5) & 3) != 0;
  if (op.d % 3 != 0) o.prio = static_cast<int>((op.d >> 2) % 4);
  o.discard_sink = &sink_;
  std::set<uint64_t> bad;
  // A regular file may not list bad pages (§5.1 step 3).
  for (uint32_t i = 0; o.blkdev && i < op.c % 4; ++i) bad.insert(1 + Mix(op.c, i) % (o.pages - 1));
  if (o.blkdev && ((op.c >> 2) & 7) == 0 && clusters >= 3) {
    for (uint64_t s = C(); s < 2 * C(); ++s) bad.insert(s);  // a cluster made of bad slots (C4)
  }
  o.bad_pages.assign(bad.begin(), bad.end());
  if ((op.c >> 5) & 1) std::reverse(o.bad_pages.begin(), o.bad_pages.end());
  return o;
}

void Harness::OpSwapon(const OpSpec& op) {
  if (devs_.size() >= 5) {
    desc_ += " skipped (5 devices)";
    return;
  }
  SwaponOptions o = MakeSwapon(op);
  int want = 0;
  while (devs_.count(want)) ++want;
  std::ostringstream d;
  d << " " << o.name << " pages=" << o.pages << " bad=" << o.bad_pages.size() << " ssd=" << o.ssd
    << " blkdev=" << o.blkdev << " discard=" << Name(o.discard)
    << " supported=" << o.discard_supported << " prio=" << (o.prio ? std::to_string(*o.prio) : "-");
  desc_ += d.str();
  auto r = sys_->Swapon(o);
  HARNESS_CHECK(r.ok(), "valid swapon failed: " + r.status().ToString());
  HARNESS_CHECK(*r == want, "got type " + std::to_string(*r) + ", want the lowest free record " +
                                std::to_string(want) + " (§5.1 step 1)");
  desc_ += " -> type " + std::to_string(*r);
  MDevice m;
  m.type = *r;
  m.opts = o;
  m.max = o.pages;
  m.slots.resize((o.pages + C() - 1) / C() * C());
  m.slots[0].kind = MSlot::Kind::kBad;
  for (uint64_t b : o.bad_pages) m.slots[b].kind = MSlot::Kind::kBad;
  for (uint64_t s = m.max; s < m.slots.size(); ++s) m.slots[s].kind = MSlot::Kind::kBad;
  m.pages = m.max - 1 - o.bad_pages.size();
  devs_[*r] = std::move(m);
  swapped_on_type_ = *r;
}

// try_to_unuse's owner side: bring the data back and drop every reference
// the model holds on the slot (and on the rest of its folio).
void Harness::UnuseOne(SwapEntry e, std::vector<std::string>& errs) {
  auto it = devs_.find(e.type);
  if (it == devs_.end() || e.offset >= it->second.slots.size()) {
    errs.push_back("unuse(" + ToString(e) + "): not a slot of an active device");
    return;
  }
  MDevice& d = it->second;
  MSlot& s = d.slots[e.offset];
  switch (s.kind) {
    case MSlot::Kind::kFree:
      return;  // dropped earlier with its folio
    case MSlot::Kind::kBad:
      errs.push_back("unuse(" + ToString(e) + ") on a BAD slot");
      return;
    case MSlot::Kind::kHib: {
      Status st = sys_->FreeHibernationSlot(e);
      if (!st.ok()) {
        errs.push_back("unuse: FreeHibernationSlot" + ToString(e) + ": " + st.ToString());
      } else {
        s = MSlot{};
      }
      return;
    }
    case MSlot::Kind::kShadow:
      while (s.count > 0) {
        Status st = sys_->SwapPutEntriesDirect(e, 1);
        if (!st.ok()) {
          errs.push_back("unuse: SwapPutEntriesDirect" + ToString(e) + ": " + st.ToString());
          return;
        }
        if (--s.count == 0) s = MSlot{};
      }
      return;
    case MSlot::Kind::kCached: {
      const int fi = s.folio;
      MFolio& mf = folios_[fi];
      FolioLockGuard g(*mf.f);
      if (!mf.f->in_swap_cache()) return;  // swapoff dropped it itself
      for (int p = 0; p < mf.f->nr_pages(); ++p) {
        MSlot& ps = d.slots[mf.entry.offset + p];
        while (ps.count > 0) {
          Status st = sys_->FolioPutSwap(*mf.f, p);
          if (!st.ok()) {
            errs.push_back("unuse: FolioPutSwap(folio#" + std::to_string(fi) +
                           "): " + st.ToString());
            return;
          }
          --ps.count;
        }
      }
      mf.f->writeback = false;
      Status st = sys_->SwapCacheDelFolio(*mf.f);
      if (st.ok() && !mf.f->in_swap_cache()) {
        ModelUncache(fi);
      } else if (!suspended_) {
        errs.push_back("unuse: SwapCacheDelFolio(folio#" + std::to_string(fi) +
                       "): " + st.ToString());
      }
      return;
    }
  }
}

void Harness::OpSwapoff(const OpSpec& op) {
  if (devs_.empty()) return;
  const int t = std::next(devs_.begin(), op.a % devs_.size())->first;
  const bool full_unuse = op.b % 4 != 0;
  desc_ += " type " + std::to_string(t) + (full_unuse ? " unuse=drop-all" : " unuse=none");
  if (devs_.at(t).pinned) {
    const auto before = Observe(*sys_, folios_);
    Status st = sys_->Swapoff(t, {});
    desc_ += " (pinned) -> " + st.ToString();
    HARNESS_CHECK(st.code() == -EBUSY,
                  "swapoff of a pinned device returned " + st.ToString() + " (§6)");
    ExpectUnchanged(before, "swapoff of a pinned device");
    return;
  }
  bool referenced = false, hib = false;
  for (const MSlot& s : devs_.at(t).slots) {
    referenced |= s.kind == MSlot::Kind::kHib || s.count > 0;
    hib |= s.kind == MSlot::Kind::kHib;
  }
  // HIB entries (policy hibernation_hib_entry) are no swap reference, so
  // unuse is not asked to drop them and swapoff stays busy (§6: the
  // hibernation session frees them by offset).
  const bool hib_blocks = hib && policy_.hibernation_hib_entry;
  std::vector<std::string> errs;
  SwapSystem::UnuseFn fn;
  if (full_unuse) fn = [&](SwapEntry e) { UnuseOne(e, errs); };
  Status st = sys_->Swapoff(t, fn);
  desc_ += " -> " + (st.ok() ? std::string("ok") : st.ToString());
  HARNESS_CHECK(errs.empty(), "unuse callback: " + (errs.empty() ? "" : errs.front()));
  ReconcileVanished(Vanish::kAny, {}, nullptr, t);
  if (st.ok()) {
    HARNESS_CHECK(!hib_blocks, "swapoff succeeded over HIB entries nobody freed");
    HARNESS_CHECK(
        full_unuse || !referenced,
        "swapoff succeeded although slots are still referenced and unuse dropped nothing");
    for (uint64_t o = 0; o < devs_.at(t).slots.size(); ++o) {
      const MSlot& s = devs_.at(t).slots[o];
      HARNESS_CHECK(!s.used(), "swapoff succeeded but the model still holds " + ToString({t, o}) +
                                   " " + Describe(s));
    }
    swapped_off_ = std::move(devs_.at(t));
    swapped_off_type_ = t;
    devs_.erase(t);
    return;
  }
  HARNESS_CHECK(st.code() == -EBUSY, "swapoff returned " + st.ToString() + " (§5.2: -EBUSY)");
  bool cache_only_writeback = false;  // swapoff cannot reclaim these itself
  for (int fi : CachedFolios()) {
    cache_only_writeback |= folios_[fi].entry.type == t && folios_[fi].f->writeback;
  }
  const bool expect_ok =
      !suspended_ && !hib_blocks && !cache_only_writeback && (full_unuse || !referenced);
  HARNESS_CHECK(!expect_ok, "swapoff failed although every reference was dropped (§5.2 step 4)");
}

}  // namespace swaplab::alloc::model
