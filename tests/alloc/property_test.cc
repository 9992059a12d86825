// Property tests of SwapSystem against a reference model (allocator spec §8).
//
// Each property generates a small system (cluster_shift 3..5, 1-3 devices of
// 2-8 clusters with random SSD / block device / discard / priority / bad
// pages) and a random sequence of operations, then replays the sequence
// under every policy preset, checking after every step (property_harness.h):
//   - CheckInvariants().ok();
//   - every slot (SwapSystem::Slot) against the model: kind, count, folio;
//   - DeviceInfo.inuse == the model's used slots, nr_swap_pages ==
//     Σ(pages − inuse), total_swap_pages == Σ pages;
//   - each cached folio: 2^k aligned, inside one cluster, over slots that
//     were free (no overlap), on a block device if large, in a cluster of
//     its order (C5);
//   - which folios may leave the swap cache, and when they must (zap,
//     TryToReclaimSwap, FolioFreeSwap, forced full-cluster reclaim);
//   - order 0 never fails while a slot is EMPTY; discards only hit free
//     clusters; counters never decrease;
//   - rejected calls return an error and change nothing observable.
//
// Reproducing: rapidcheck prints the failing case and the operation log;
// rerun with RC_PARAMS="reproduce=..." as it says. The defaults below fix
// the seed; RC_PARAMS overrides any of them (e.g. RC_PARAMS="seed=7
// max_success=2000" for a longer soak).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <cstdlib>
#include <string>
#include <vector>

#include "alloc/property_harness.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SWAPLAB_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SWAPLAB_SANITIZED 1
#endif
#endif

namespace swaplab::alloc::model {
namespace {

#ifdef SWAPLAB_SANITIZED
constexpr const char* kDefaultParams = "seed=20260914 max_success=25 max_size=100";
#else
constexpr const char* kDefaultParams = "seed=20260914 max_success=100 max_size=100";
#endif

// Runs before main(): rapidcheck reads RC_PARAMS on first use. Our defaults
// come first so that anything the user sets wins.
const bool kParamsInstalled = [] {
  const char* user = std::getenv("RC_PARAMS");
  const std::string params = std::string(kDefaultParams) + " " + (user ? user : "");
  setenv("RC_PARAMS", params.c_str(), 1);
  return true;
}();

using Weights = std::array<uint32_t, static_cast<size_t>(OpKind::kNumKinds)>;

constexpr size_t K(OpKind k) { return static_cast<size_t>(k); }

// Weights in OpKind order.
Weights MixedWeights() {
  Weights w{};
  w[K(OpKind::kAlloc)] = 20;
  w[K(OpKind::kDupFolio)] = 12;
  w[K(OpKind::kZap)] = 12;
  w[K(OpKind::kCacheDel)] = 9;
  w[K(OpKind::kPutFolio)] = 7;
  w[K(OpKind::kSwapOut)] = 6;
  w[K(OpKind::kCacheAdd)] = 6;
  w[K(OpKind::kFreeSwap)] = 5;
  w[K(OpKind::kTryReclaim)] = 5;
  w[K(OpKind::kDupDirect)] = 4;
  w[K(OpKind::kHibAlloc)] = 4;
  w[K(OpKind::kHibFree)] = 3;
  w[K(OpKind::kFolioFlags)] = 4;
  w[K(OpKind::kRunDeferred)] = 3;
  w[K(OpKind::kReclaimFull)] = 2;
  w[K(OpKind::kSuspend)] = 2;
  w[K(OpKind::kSwapon)] = 2;
  w[K(OpKind::kSwapoff)] = 2;
  w[K(OpKind::kPin)] = 1;
  w[K(OpKind::kQueries)] = 1;
  w[K(OpKind::kError)] = 6;
  return w;
}

Weights ErrorHeavyWeights() {
  Weights w = MixedWeights();
  w[K(OpKind::kError)] = 60;
  return w;
}

// Fill the devices: many allocations, few frees, so the allocator works
// near full (vm_swap_full reclaim, full devices off the avail list,
// fallback of large folios).
Weights PressureWeights() {
  Weights w{};
  w[K(OpKind::kAlloc)] = 30;
  w[K(OpKind::kSwapOut)] = 10;
  w[K(OpKind::kDupFolio)] = 4;
  w[K(OpKind::kZap)] = 4;
  w[K(OpKind::kCacheDel)] = 4;
  w[K(OpKind::kFolioFlags)] = 3;
  w[K(OpKind::kHibAlloc)] = 3;
  w[K(OpKind::kHibFree)] = 1;
  w[K(OpKind::kReclaimFull)] = 3;
  w[K(OpKind::kRunDeferred)] = 3;
  w[K(OpKind::kTryReclaim)] = 2;
  w[K(OpKind::kSuspend)] = 1;
  return w;
}

// Devices come and go: swapon / swapoff / pins / hibernation slots between
// ordinary traffic.
Weights LifecycleWeights() {
  Weights w = MixedWeights();
  w[K(OpKind::kSwapon)] = 12;
  w[K(OpKind::kSwapoff)] = 12;
  w[K(OpKind::kPin)] = 6;
  w[K(OpKind::kHibAlloc)] = 8;
  return w;
}

rc::Gen<OpSpec> GenOp(const Weights& w) {
  uint32_t total = 0;
  for (uint32_t x : w) total += x;
  return rc::gen::build<OpSpec>(
      rc::gen::set(&OpSpec::kind, rc::gen::map(rc::gen::inRange<uint32_t>(0, total),
                                               [w](uint32_t x) {
                                                 for (size_t k = 0; k < w.size(); ++k) {
                                                   if (x < w[k]) return static_cast<OpKind>(k);
                                                   x -= w[k];
                                                 }
                                                 return OpKind::kQueries;
                                               })),
      rc::gen::set(&OpSpec::a), rc::gen::set(&OpSpec::b), rc::gen::set(&OpSpec::c),
      rc::gen::set(&OpSpec::d));
}

rc::Gen<OpSpec> GenSwapon() {
  return rc::gen::build<OpSpec>(rc::gen::set(&OpSpec::kind, rc::gen::just(OpKind::kSwapon)),
                                rc::gen::set(&OpSpec::a), rc::gen::set(&OpSpec::b),
                                rc::gen::set(&OpSpec::c), rc::gen::set(&OpSpec::d));
}

rc::Gen<CaseConfig> GenConfig() {
  return rc::gen::build<CaseConfig>(
      rc::gen::set(&CaseConfig::cluster_shift, rc::gen::inRange(3, 6)),
      rc::gen::set(&CaseConfig::inline_work), rc::gen::set(&CaseConfig::knobs));
}

// Swapons first (1..3 devices), then `scale` × size operations.
std::vector<OpSpec> GenProgram(const Weights& w, double scale) {
  const int devices = *rc::gen::inRange(1, 4);
  std::vector<OpSpec> ops = *rc::gen::container<std::vector<OpSpec>>(devices, GenSwapon());
  const auto body = *rc::gen::scale(scale, rc::gen::container<std::vector<OpSpec>>(GenOp(w)));
  ops.insert(ops.end(), body.begin(), body.end());
  return ops;
}

void RunUnderEveryPreset(const CaseConfig& cfg, const std::vector<OpSpec>& ops) {
  for (const std::string& preset : Policy::PresetNames()) {
    RC_LOG() << "=== preset " << preset << "\n";
    Harness h(preset, cfg);
    h.Run(ops);
  }
}

}  // namespace

TEST(SwapSystemModel, EveryPresetConstructs) {
  const auto names = Policy::PresetNames();
  ASSERT_FALSE(names.empty());
  for (const std::string& n : names) {
    auto p = Policy::Preset(n);
    ASSERT_TRUE(p.ok()) << n << ": " << p.status().ToString();
    EXPECT_TRUE(p->Validate().ok()) << n;
  }
}

RC_GTEST_PROP(SwapSystemModel, RandomOperationsMatchModelUnderEveryPreset, ()) {
  const CaseConfig cfg = *GenConfig();
  const std::vector<OpSpec> ops = GenProgram(MixedWeights(), 2.0);
  RunUnderEveryPreset(cfg, ops);
}

RC_GTEST_PROP(SwapSystemModel, RejectedCallsLeaveStateUnchanged, ()) {
  const CaseConfig cfg = *GenConfig();
  const std::vector<OpSpec> ops = GenProgram(ErrorHeavyWeights(), 1.0);
  RunUnderEveryPreset(cfg, ops);
}

RC_GTEST_PROP(SwapSystemModel, NearFullDevicesMatchModel, ()) {
  CaseConfig cfg = *GenConfig();
  const std::vector<OpSpec> ops = GenProgram(PressureWeights(), 2.0);
  RunUnderEveryPreset(cfg, ops);
}

RC_GTEST_PROP(SwapSystemModel, SwaponSwapoffAndHibernationMatchModel, ()) {
  const CaseConfig cfg = *GenConfig();
  const std::vector<OpSpec> ops = GenProgram(LifecycleWeights(), 1.5);
  RunUnderEveryPreset(cfg, ops);
}

// Header of swap_system.h: "Driven by one thread, results are
// deterministic." Same program, two fresh systems, same observable trace.
RC_GTEST_PROP(SwapSystemModel, OneThreadIsDeterministic, ()) {
  const CaseConfig cfg = *GenConfig();
  const std::string preset = *rc::gen::elementOf(Policy::PresetNames());
  const std::vector<OpSpec> ops = GenProgram(MixedWeights(), 1.0);
  RC_LOG() << "=== preset " << preset << "\n";
  Harness first(preset, cfg);
  first.Run(ops);
  Harness second(preset, cfg);
  second.Run(ops);
  RC_ASSERT(first.trace() == second.trace());
}

}  // namespace swaplab::alloc::model
