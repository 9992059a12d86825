// SPDX-License-Identifier: MIT
// Reference model for the SwapSystem property tests (tests/alloc/
// property_test.cc): what every slot of every active device holds, which
// folio owns which slots, and the snapshot / comparison helpers the harness
// uses (swap_model.cc). It knows the rules of allocator spec §1.4 and §3
// (reference counting and when a slot is freed), never where the allocator
// places a folio: placement is checked only structurally (aligned, inside
// one cluster, over free slots).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "swaplab/alloc/swap_system.h"

namespace swaplab::alloc::model {

// One slot as the model sees it.
struct MSlot {
  enum class Kind : uint8_t { kFree, kBad, kCached, kShadow, kHib };
  Kind kind = Kind::kFree;
  uint32_t count = 0;  // references (kCached, kShadow); 1 for kHib
  int folio = -1;      // index into the harness's folio list (kCached)

  bool used() const { return kind == Kind::kCached || kind == Kind::kShadow || kind == Kind::kHib; }
  // A slot a test may dup / zap / swap in: it carries references that the
  // test owns (hibernation slots belong to the hibernation code).
  bool referenced() const { return (kind == Kind::kCached || kind == Kind::kShadow) && count > 0; }
};

// One active device.
struct MDevice {
  int type = -1;
  SwaponOptions opts;
  uint64_t max = 0;    // offsets [0, max)
  uint64_t pages = 0;  // usable slots
  bool pinned = false;
  std::vector<MSlot> slots;  // roundup(max, CLUSTER) entries

  uint64_t Used() const;
  bool page_discard() const;
  bool area_discard() const;
};

// A folio the test created. Folio is non-movable; the unique_ptr keeps its
// address stable while the vector grows.
struct MFolio {
  std::unique_ptr<Folio> f;
  bool cached = false;  // the model's belief; checked against f->in_swap_cache()
  SwapEntry entry{};
};

std::string ToString(SwapEntry e);
const char* KindName(MSlot::Kind k);
std::string Describe(const MSlot& s);
std::string Describe(const SlotInfo& s);

// Every counter by its table name ("swpout[2]=1" for one order or step).
std::string CountersToString(const SwapCounters& c);

// Every value of every kCounter row as a flat list, for the "counters never
// decrease" check (gauges may).
std::vector<uint64_t> CounterValues(const SwapCounters& c);

std::string DeviceToString(const DeviceInfo& d);

// Everything a caller can observe through the public API, one fact per line,
// so "an error leaves the state unchanged" is a string comparison and a
// mismatch names the first differing fact.
std::vector<std::string> Observe(const SwapSystem& sys, const std::vector<MFolio>& folios);

// "" if equal, else the first difference.
std::string DiffObservations(const std::vector<std::string>& before,
                             const std::vector<std::string>& after);

}  // namespace swaplab::alloc::model
