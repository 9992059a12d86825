// SPDX-License-Identifier: MIT
// Instruction counts of the allocator's fast-path pair under callgrind
// (docs/performance.md, "After the fast-path work"): mm-new, one 4 GiB SSD
// block device, CPU 0, a ring of 256 order-0 (or 16 order-4) folios, 8192
// warm-up pairs, then 100,000 counted pairs, each = folio lock,
// SwapCacheDelFolio, unlock, lock, FolioAllocSwap, unlock.
//
//   g++ -std=c++20 -O2 -DNDEBUG -g -Iinclude bench/callgrind_pair.cc \
//       build/release/libswaplab_alloc.a -lpthread -o /tmp/callgrind_pair
//   valgrind --tool=callgrind --instr-atstart=no /tmp/callgrind_pair 0   # or 4
//
// Instructions per pair = callgrind's "Collected" / 100,000.
#include <valgrind/callgrind.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "swaplab/alloc/swap_system.h"
using namespace swaplab::alloc;
int main(int argc, char** argv) {
  int order = argc > 1 ? atoi(argv[1]) : 0;
  int live = order == 0 ? 256 : 16;
  SystemOptions o;
  o.nr_cpus = 2;
  o.run_deferred_work_inline = true;
  o.policy = *Policy::Preset("mm-new");
  SwapSystem sys(o);
  SwaponOptions so;
  so.name = "x";
  so.pages = 1 << 20;
  so.ssd = true;
  so.blkdev = true;
  if (!sys.Swapon(so).ok()) return 1;
  std::vector<Folio> f(live);
  for (auto& x : f) {
    x.set_order(order);
    x.Lock();
    if (!sys.FolioAllocSwap(0, x).ok()) return 2;
    x.Unlock();
  }
  int next = 0;
  auto cycle = [&] {
    Folio& x = f[next];
    next = (next + 1) % live;
    x.Lock();
    bool a = sys.SwapCacheDelFolio(x).ok();
    x.Unlock();
    x.Lock();
    bool b = sys.FolioAllocSwap(0, x).ok();
    x.Unlock();
    return a && b;
  };
  for (int i = 0; i < 8192; ++i)
    if (!cycle()) return 3;
  CALLGRIND_START_INSTRUMENTATION;
  for (int i = 0; i < 100000; ++i)
    if (!cycle()) return 4;
  CALLGRIND_STOP_INSTRUMENTATION;
  return 0;
}
