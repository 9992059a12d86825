// SPDX-License-Identifier: MIT
// The operation mixes and the rapidcheck generators of the property
// tests (generators.h).
#include "alloc/property/generators.h"

#include <rapidcheck.h>

#include <vector>

namespace swaplab::alloc::model {

namespace {

constexpr size_t K(OpKind k) { return static_cast<size_t>(k); }

}  // namespace

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

std::vector<OpSpec> GenProgram(const Weights& w, double scale) {
  const int devices = *rc::gen::inRange(1, 4);
  std::vector<OpSpec> ops = *rc::gen::container<std::vector<OpSpec>>(devices, GenSwapon());
  const auto body = *rc::gen::scale(scale, rc::gen::container<std::vector<OpSpec>>(GenOp(w)));
  ops.insert(ops.end(), body.begin(), body.end());
  return ops;
}

}  // namespace swaplab::alloc::model
